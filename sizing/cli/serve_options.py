"""The options of `sizing serve`, grouped by what they set (cli/serve.py applies them in this
order, which is the order --help lists them)."""

from __future__ import annotations

import click

from sizing.cli.options import GPU_NAME, PRICE_TYPE, Choice, Count, Length, efficiency_type, option_group, rate_type
from sizing.memory import FORMATS as QUANT_FORMATS
from sizing.vocabulary import (
    ATTENTION_CONVENTIONS,
    DEFAULT_MLA_IMPL,
    DEFAULT_SERVE_ATTENTION,
    DEFAULT_SERVE_BANDWIDTH_EFFICIENCY,
    DEFAULT_SERVE_COMPUTE_EFFICIENCY,
    DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
    MLA_IMPLS,
    SERVE_ACTIVATION_DTYPES,
    STORAGE_DTYPES,
)

DEFAULT_TOKEN_BUDGET, DEFAULT_BLOCK_SIZE = 8192, 16  # = sizing.serve.batching's (kept light: no import)


# The workload and where it runs: the GPU, the batch, prompt and output lengths, tensor parallelism and replicas.
workload_options = option_group(
    click.option(
        "--gpu",
        type=GPU_NAME,
        help="GPU name (see `sizing gpus`).  [default: h100-sxm, or the preset's published run's GPU]",
    ),
    click.option(
        "--batch", "-b", type=Count("--batch"), default=1, show_default=True, help="Sequences decoded together."
    ),
    click.option("--prompt", type=Length("--prompt"), help="Prompt tokens per sequence (required)."),
    click.option(
        "--output",
        type=Length("--output", minimum=2),
        help="Output tokens per sequence, the first from the prefill (required, at least 2).",
    ),
    click.option("--tp", type=Count("--tp"), default=1, show_default=True, help="Tensor-parallel GPUs per replica."),
    click.option(
        "--gpus", type=Count("--gpus"), help="GPUs in all, a multiple of --tp (replicas = gpus / tp).  [default: tp]"
    ),
)

# The storage dtypes and the compute dtype, and how prefill attention FLOPs are counted.
dtype_options = option_group(
    click.option("--weight-dtype", type=Choice("--weight-dtype", STORAGE_DTYPES), default="bf16", show_default=True),
    click.option("--kv-dtype", type=Choice("--kv-dtype", STORAGE_DTYPES), default="bf16", show_default=True),
    click.option(
        "--activation-dtype",
        type=Choice("--activation-dtype", SERVE_ACTIVATION_DTYPES),
        default="bf16",
        show_default=True,
        help="The dtype the matmuls run in: its peak rate is used.",
    ),
    click.option(
        "--attention",
        type=Choice("--attention", ATTENTION_CONVENTIONS),
        default=DEFAULT_SERVE_ATTENTION,
        show_default=True,
        help="Prefill FLOPs: causal (serving kernels skip masked tiles) or full (T keys per query).",
    ),
)

# The roofline's efficiencies and the price of a GPU-hour.
rate_options = option_group(
    click.option(
        "--compute-efficiency",
        type=efficiency_type("--compute-efficiency"),
        help="Share of the dense peak reached (1: the roofline bound).  [default: the GPU's calibrated value "
        f"(docs/serving.md), else {DEFAULT_SERVE_COMPUTE_EFFICIENCY}]",
    ),
    click.option(
        "--bandwidth-efficiency",
        type=efficiency_type("--bandwidth-efficiency"),
        help="Share of HBM and NVLink bandwidth reached (1: the roofline bound).  [default: the GPU's calibrated "
        f"value (docs/serving.md), else {DEFAULT_SERVE_BANDWIDTH_EFFICIENCY}]",
    ),
    click.option(
        "--price",
        type=PRICE_TYPE,
        default=DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
        show_default=True,
        help="USD per GPU-hour, for $ per million tokens.",
    ),
)

# How the engine serves: chunked prefill, a deployed weight format, prefix caching, the MLA
# implementation (DeepSeek's latent attention).
deployment_options = option_group(
    click.option(
        "--prefill-chunk",
        type=Length("--prefill-chunk"),
        help="Tokens per prefill forward (chunked prefill).  [default: the whole batch's prompts at once]",
    ),
    click.option(
        "--quant",
        type=Choice("--quant", QUANT_FORMATS),
        help="Weights in a deployed format (GPTQ/AWQ, MXFP4, NVFP4, fp8, GGUF; see `sizing memory --quant`) "
        "instead of --weight-dtype.",
    ),
    click.option(
        "--prefix-cached",
        "prefix",
        type=Length("--prefix-cached"),
        help="Prompt tokens every request shares and the engine caches (prefix caching): their prefill is "
        "skipped and their KV blocks stored once.",
    ),
    click.option(
        "--mla",
        type=Choice("--mla", MLA_IMPLS),
        default=DEFAULT_MLA_IMPL,
        show_default=True,
        help="Latent attention (DeepSeek): absorbed (attention over the cached latent) or naive (per-head K/V).",
    ),
)

# Capacity planning (continuous batching): the request rate, the latency bounds, the scheduler's
# token budget and KV block size.
capacity_options = option_group(
    click.option(
        "--rate",
        type=rate_type("--rate"),
        help="Requests/s to serve: answers replicas x (tp, pp), GPUs and $/M tokens, searching tp and dtypes.",
    ),
    click.option("--slo-ttft", metavar="DURATION", help="With --rate: time-to-first-token bound, e.g. 2s."),
    click.option("--slo-tpot", metavar="DURATION", help="With --rate: time-per-output-token bound, e.g. 50ms."),
    click.option(
        "--token-budget",
        type=Count("--token-budget", minimum=2),
        default=DEFAULT_TOKEN_BUDGET,
        show_default=True,
        help="With --rate: tokens per scheduler iteration (vLLM max_num_batched_tokens).",
    ),
    click.option(
        "--block-size",
        type=Count("--block-size"),
        default=DEFAULT_BLOCK_SIZE,
        show_default=True,
        help="With --rate: tokens per paged KV block.",
    ),
)
