"""The options of `sizing serve`, grouped by what they set (cli/serve.py applies them in this
order, which is the order --help lists them). Each is the shared option of
sizing/cli/spec_table.py; what differs here is stated in the call."""

from __future__ import annotations

from sizing.cli.option_layer import option, options
from sizing.vocabulary import (
    DEFAULT_SERVE_ATTENTION,
    DEFAULT_SERVE_BANDWIDTH_EFFICIENCY,
    DEFAULT_SERVE_COMPUTE_EFFICIENCY,
    DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
)

SEARCHED = ("!rate",)  # the capacity plan (--rate) sets these itself: the form disables them there

# The workload and where it runs: the GPU, the batch, prompt and output lengths, tensor parallelism and replicas.
workload_options = options(
    option("gpu", help="GPU name (see `sizing gpus`).  [default: h100-sxm, or the preset's published run's GPU]"),
    option("batch", default=1, short="-b", needs=SEARCHED),
    option("prompt", help="Prompt tokens per sequence (required)."),
    option(
        "images",
        default=None,
        help="A vision-language model: images in each prompt (their tokens join it).  [default: 1]",
    ),
    option("image_size", default=None, help="A vision-language model: HEIGHTxWIDTH in pixels.  [default: 896x896]"),
    option("output", help="Output tokens per sequence, the first from the prefill (required, at least 2)."),
    option("tp", default=1, help="Tensor-parallel GPUs per replica."),
    option("gpus", help="GPUs in all, a multiple of --tp (replicas = gpus / tp).  [default: tp]", needs=SEARCHED),
)

# The storage dtypes and the compute dtype, and how prefill attention FLOPs are counted.
dtype_options = options(
    option("weight_dtype", default="bf16"),
    option("kv_dtype", default="bf16"),
    option("activation_dtype"),
    option(
        "attention",
        default=DEFAULT_SERVE_ATTENTION,
        help="Prefill FLOPs: causal (serving kernels skip masked tiles) or full (T keys per query).",
    ),
)

# The roofline's efficiencies and the price of a GPU-hour.
rate_options = options(
    option(
        "compute_efficiency",
        help="Share of the dense peak reached (1: the roofline bound).  [default: the GPU's calibrated value "
        f"(docs/serving.md), else {DEFAULT_SERVE_COMPUTE_EFFICIENCY}]",
    ),
    option(
        "bandwidth_efficiency",
        help="Share of HBM and NVLink bandwidth reached (1: the roofline bound).  [default: the GPU's calibrated "
        f"value (docs/serving.md), else {DEFAULT_SERVE_BANDWIDTH_EFFICIENCY}]",
    ),
    option("price", default=DEFAULT_SERVE_PRICE_PER_GPU_HOUR, help="USD per GPU-hour, for $ per million tokens."),
)

# How the engine serves: chunked prefill, a deployed weight format, prefix caching, the MLA
# implementation (DeepSeek's latent attention).
deployment_options = options(
    option(
        "prefill_chunk",
        help="Tokens per prefill forward (chunked prefill).  [default: the whole batch's prompts at once]",
        needs=SEARCHED,
    ),
    option("quant"),
    option("prefix_cached"),
    option("mla"),
)

# Capacity planning (continuous batching): the request rate, the latency bounds at a percentile,
# a trace of request lengths, disaggregated pools, the scheduler's token budget and KV block size.
capacity_options = options(
    option("rate"),
    option("slo_ttft"),
    option("slo_tpot"),
    option("percentile"),
    option("trace"),
    option("disaggregated"),
    option("kv_link"),
    option("token_budget"),
    option("block_size"),
)
