"""Every option of the `sizing` commands, declared once (the machinery and the rules for a
command that differs are in sizing/cli/specs.py). Grouped as the browser form shows them.

To add an option: one `_add(...)` line here (key, flags, group, help, parser, default), then
`option("key")` in the commands that take it; `python tools/cli_reference.py` for docs/cli.md.
Vocabularies that live in a question package (engines, quantized formats, stacks) are read when
the option's parser is first built, so importing this table loads no question package.
"""

from __future__ import annotations

import importlib

from sizing.cli.common import FORMATS, once
from sizing.cli.options import (
    CONFIG_NAME,
    GPU_NAME,
    MFU_TYPE,
    PRESET_NAME,
    PRICE_TYPE,
    Choice,
    Count,
    Length,
    Number,
    Quantity,
    efficiency_type,
    link_gbs_type,
    rate_type,
)
from sizing.cli.specs import declare
from sizing.training import DEFAULT_KG_CO2_PER_KWH, DEFAULT_PUE
from sizing.validate import MAX_FLOAT, MAX_SEQ_LEN, MIN_PEAK_TFLOPS, PEAK_WHAT
from sizing.vocabulary import (
    ATTENTION_CONVENTIONS,
    ATTENTION_IMPL_ALIASES,
    ATTENTION_IMPLS,
    COMPUTE_DTYPES,
    DEFAULT_ATTENTION,
    DEFAULT_ATTENTION_IMPL,
    DEFAULT_MLA_IMPL,
    DEFAULT_OPTIMIZER,
    DEFAULT_PRECISION,
    DEFAULT_RECOMPUTE,
    DTYPE_BITS,
    FP8_RECIPE_NAMES,
    GRAD_REDUCE_DTYPES,
    MLA_IMPLS,
    PRECISION_ALIASES,
    PRECISION_POLICIES,
    RECOMPUTE_MODES,
    SERVE_ACTIVATION_DTYPES,
)

# The engine's defaults: the same numbers as sizing.serve.batching's (kept here so that this table
# imports no question package); tests/test_option_specs.py checks that they agree.
DEFAULT_TOKEN_BUDGET, DEFAULT_BLOCK_SIZE = 8192, 16
MAX_SEARCH_GPUS = 2**15  # = sizing.parallel.search.MAX_SEARCH_GPUS (checked by the same test)


_add = declare


def _count(flag: str, minimum: int = 1, maximum: int | None = None):
    return lambda: Count(flag, minimum) if maximum is None else Count(flag, minimum, maximum)


def _number(flag: str, minimum, maximum, exclusive: bool = True, what: str | None = None):
    return lambda: Number(flag, minimum, maximum, exclusive_minimum=exclusive, what=what)


def _choice(flag: str, values, aliases: dict | None = None):
    """A Choice over `values`, or over a package's table named "module:NAME" (read when built)."""

    def make():
        if isinstance(values, str):
            module, name = values.split(":")
            return Choice(flag, tuple(getattr(importlib.import_module(module), name)), aliases)
        return Choice(flag, values, aliases)

    return make


def _length(flag: str, minimum: int = 1):
    """A sequence or context length: K = 1024 (128K = 131,072), as its --help line says."""
    return lambda: Length(flag, minimum)


# ---------------------------------------------------------------- model
_add("preset", ("--preset", "-p"), "model", "A preset name (see `sizing presets`).", lambda: PRESET_NAME,
     metavar="NAME", multiple=True, callback=once, names="presets")  # fmt: skip
_add("config", ("--config",), "model", "A Hugging Face config.json or this tool's JSON config. Never executes code.",
     lambda: CONFIG_NAME, metavar="PATH", multiple=True, callback=once, dest="config_path")  # fmt: skip
_add("set", ("--set",), "model", "Override a config field, e.g. --set n_layers=48 (repeatable).",
     metavar="FIELD=VALUE", multiple=True, dest="overrides")  # fmt: skip
_add("like", ("--like",), "model", "The family of the shapes (vocab, MLP, norm, FFN ratio).", metavar="PRESET",
     names="presets")  # fmt: skip
_add("draft", ("--draft",), "model", "A draft model preset (same vocabulary); default: MTP heads.", metavar="PRESET",
     names="presets")  # fmt: skip
_add("all", ("--all",), "model", "Every preset.", is_flag=True, dest="all_presets")

# ---------------------------------------------------------------- data and context
_add("seq_len", ("--seq-len", "-T"), "data", "Tokens per sequence.", _length("--seq-len"))
_add("context", ("--context", "-C"), "data", "Tokens in each sequence's KV cache.", _length("--context"))
_add("tokens", ("--tokens",), "data", "Training tokens, e.g. 2T, 300B, 1.4e12.", lambda: Quantity("--tokens"),
     metavar="N")  # fmt: skip
_add("inference_tokens", ("--inference-tokens",), "data",
     "Tokens to be served (e.g. 10T): adds Sardana et al.'s inference-aware optimum.",
     lambda: Quantity("--inference-tokens"), metavar="N")  # fmt: skip
_add("micro_batch", ("--micro-batch", "-b"), "data", "Sequences per GPU per micro-batch.", _count("--micro-batch"))
_add("global_batch", ("--global-batch",), "data", "Sequences per optimizer step.", _count("--global-batch"))
_add("batch", ("--batch",), "data", "Sequences decoded together.", _count("--batch"))
_add("attention", ("--attention",), "data", "full: T keys per query; causal: T(T+1)/2 pairs per sequence.",
     _choice("--attention", ATTENTION_CONVENTIONS), default=DEFAULT_ATTENTION)  # fmt: skip
_add("images", ("--images",), "data", "Images in the prompt.", _count("--images", 0), default=1)
_add("image_size", ("--image-size",), "data", "HEIGHTxWIDTH in pixels.", default="896x896")
_add("prompt_tokens", ("--prompt-tokens",), "data", "Text tokens in the prompt.", _length("--prompt-tokens", 0),
     default=512)  # fmt: skip

# ---------------------------------------------------------------- hardware
_add("gpu", ("--gpu",), "hardware", "GPU name (see `sizing gpus`).", lambda: GPU_NAME, metavar="NAME", names="gpus")
_add("gpus", ("--gpus",), "hardware", "GPUs in all.", _count("--gpus"))
_add("mfu", ("--mfu",), "hardware",
     "A constant model FLOPs utilisation in (0, 1] instead of the step model: step = model FLOPs / (peak x MFU).",
     lambda: MFU_TYPE, advanced=True)  # fmt: skip
_add("nvlink_gbs", ("--nvlink-gbs",), "hardware", "Override the GPU's NVLink GB/s per direction.",
     lambda: link_gbs_type("--nvlink-gbs"), advanced=True)  # fmt: skip
_add("network_gbs", ("--network-gbs",), "hardware", "Override the GPU's network GB/s per direction.",
     lambda: link_gbs_type("--network-gbs"), advanced=True)  # fmt: skip
_add("runtime_reserve", ("--runtime-reserve",), "hardware",
     "Memory the process holds beyond its tensors (CUDA context, NCCL, allocator), taken off the GPU before the fit.",
     _number("--runtime-reserve", 0, 1024, exclusive=False, what="GiB in [0, 1024]"), metavar="GiB",
     dest="reserve_gib", advanced=True)  # fmt: skip
_add("peak_tflops", ("--peak-tflops",), "hardware", "Peak dense TFLOP/s for the MFU.",
     _number("--peak-tflops", MIN_PEAK_TFLOPS, MAX_FLOAT, exclusive=False, what=PEAK_WHAT))  # fmt: skip

# ---------------------------------------------------------------- parallelism
for _dim, _what in (("dp", "Data-parallel"), ("tp", "Tensor-parallel"), ("cp", "Context-parallel"),
                    ("ep", "Expert-parallel")):  # fmt: skip
    _add(_dim, (f"--{_dim}",), "parallelism", f"{_what} degree.", _count(f"--{_dim}"))
_add("pp", ("--pp",), "parallelism", "Pipeline stages.", _count("--pp"))
_add("etp", ("--etp",), "parallelism",
     "Expert tensor-parallel degree (MoE; ep x etp must divide tp x cp x dp, Megatron's expert grid).  [default: 1]",
     _count("--etp"), advanced=True)  # fmt: skip
_add("zero", ("--zero",), "parallelism",
     "ZeRO stage over dp: 1 shards optimizer states, 2 + gradients, 3 + weights (FSDP FULL_SHARD).",
     _choice("--zero", "sizing.memory:ZERO_STAGES"), default=0)  # fmt: skip
_add("fsdp", ("--fsdp",), "parallelism", "FSDP2 per-parameter sharding: full or hybrid (HSDP).",
     _choice("--fsdp", "sizing.parallel:FSDP_MODES"))  # fmt: skip
_add("shard_group", ("--shard-group",), "parallelism", "HSDP: ranks one shard spans.", _count("--shard-group"),
     advanced=True)  # fmt: skip
_add("sp", ("--sp",), "parallelism", "Sequence parallelism (needs --tp 2 or more).", is_flag=True,
     dest="sequence_parallel")  # fmt: skip
_add("no_vocab_parallel", ("--no-vocab-parallel",), "parallelism", "Replicate the embedding and lm_head over tp.",
     is_flag=True, advanced=True)  # fmt: skip
_add("schedule", ("--schedule",), "parallelism", "Pipeline schedule.  [default: 1f1b]",
     _choice("--schedule", "sizing.parallel:PP_SCHEDULES"), advanced=True)  # fmt: skip
_add("v", ("--v",), "parallelism", "Interleaved: model chunks per pipeline rank.  [default: 1]", _count("--v"),
     advanced=True)  # fmt: skip
_add("micro_batches", ("--micro-batches", "-m"), "parallelism", "Micro-batches per step per dp rank.",
     _count("--micro-batches"))  # fmt: skip
_add("stage_layers", ("--stage-layers",), "parallelism",
     "Layers per pipeline stage, e.g. 7,8,...,8,7 (default: L/pp, or first and last lighter).", metavar="N,N,...",
     advanced=True)  # fmt: skip
_add("offload_optimizer", ("--offload-optimizer",), "parallelism", "Optimizer states in CPU memory.", is_flag=True,
     advanced=True)  # fmt: skip
_add("offload_params", ("--offload-params",), "parallelism", "Weights and gradients in CPU memory too.",
     is_flag=True, advanced=True)  # fmt: skip
_add("max_gpus", ("--max-gpus",), "parallelism", f"Search: at most this many GPUs.  [default: {MAX_SEARCH_GPUS}]",
     _count("--max-gpus", maximum=MAX_SEARCH_GPUS), advanced=True)  # fmt: skip
_add("overlap", ("--overlap",), "parallelism", "Comm hidden under compute, e.g. dp=0.5.", metavar="DIM=SHARE",
     multiple=True, advanced=True)  # fmt: skip
_add("stack", ("--stack",), "parallelism",
     "Training software: overlap, fusion, flash kernel, recompute policy (docs/step-time.md).",
     _choice("--stack", "sizing.parallel:STACKS"), advanced=True)  # fmt: skip
_add("compute_efficiency", ("--compute-efficiency",), "hardware",
     "Share of the dense peak the matmuls reach (a constant instead of the model's).",
     lambda: efficiency_type("--compute-efficiency"), advanced=True)  # fmt: skip
_add("bandwidth_efficiency", ("--bandwidth-efficiency",), "hardware",
     "Share of HBM and NVLink bandwidth reached (1: the roofline bound).",
     lambda: efficiency_type("--bandwidth-efficiency"), advanced=True)  # fmt: skip

# ---------------------------------------------------------------- precision and memory
_add("dtype", ("--dtype",), "precision",
     "The dtype whose dense peak rate is used (default: bf16, else the GPU's first).",
     _choice("--dtype", COMPUTE_DTYPES))  # fmt: skip
_add("precision", ("--precision",), "precision",
     "fp32; bf16-mixed / fp16-mixed (16-bit weights and grads, fp32 master + states: 16 B/param with AdamW); "
     "bf16 (pure, no master copy); fp8 (fp8 matmuls).",
     _choice("--precision", PRECISION_POLICIES, PRECISION_ALIASES), default=DEFAULT_PRECISION)  # fmt: skip
_add("fp8_recipe", ("--fp8-recipe",), "precision",
     "fp8 scaling recipe (--precision fp8): tensorwise (delayed or current), blockwise (128), mxfp8.  "
     "[default: tensorwise]", _choice("--fp8-recipe", FP8_RECIPE_NAMES), advanced=True)  # fmt: skip
_add("fp8_param_gather", ("--fp8-param-gather",), "precision",
     "Primary fp8 weights, no bf16 copy (Megatron's --fp8-param-gather).  [default: the stack's]",
     off_flag="--no-fp8-param-gather", advanced=True)  # fmt: skip
_add("grad_reduce", ("--grad-reduce",), "precision",
     "Gradient buffer and reduction dtype (default: the stack's; Megatron-Core fp32 for bf16, bf16 for fp8).",
     _choice("--grad-reduce", GRAD_REDUCE_DTYPES), advanced=True)  # fmt: skip
_add("weight_dtype", ("--weight-dtype",), "precision", "Weight dtype.", _choice("--weight-dtype", tuple(DTYPE_BITS)))
_add("kv_dtype", ("--kv-dtype",), "precision", "KV cache dtype.", _choice("--kv-dtype", tuple(DTYPE_BITS)))
_add("activation_dtype", ("--activation-dtype",), "precision", "The dtype the matmuls run in: its peak rate is used.",
     _choice("--activation-dtype", SERVE_ACTIVATION_DTYPES), default="bf16")  # fmt: skip
_add("ssm_dtype", ("--ssm-dtype",), "precision", "Recurrent-state dtype (fp32 as HF's caches and vLLM keep it).",
     _choice("--ssm-dtype", ("fp32", "bf16", "fp16")), default="fp32")  # fmt: skip
_add("quant", ("--quant",), "precision",
     "A deployed weight format (GPTQ/AWQ, MXFP4, NVFP4, fp8, GGUF) with its real bits per weight and 16-bit "
     "tensors, instead of --weight-dtype.", _choice("--quant", "sizing.memory:FORMATS"))  # fmt: skip
_add("weights", ("--weights",), "precision", "A dtype or a deployed format (see `sizing memory --quant`).",
     _choice("--weights", "sizing.serve:WEIGHT_CHOICES"), default="fp8")  # fmt: skip
_add("attention_impl", ("--attention-impl",), "precision",
     "math materialises the T x T scores and probabilities; flash (= sdpa) is a fused kernel.",
     _choice("--attention-impl", ATTENTION_IMPLS, ATTENTION_IMPL_ALIASES), default=DEFAULT_ATTENTION_IMPL)  # fmt: skip

# ---------------------------------------------------------------- training
_add("recompute", ("--recompute",), "training",
     "Activation recomputation: selective (the attention core) or full (each block keeps its input; one more forward).",
     _choice("--recompute", RECOMPUTE_MODES), default=DEFAULT_RECOMPUTE)  # fmt: skip
_add("optimizer", ("--optimizer",), "training", "adamw (m, v); sgd (momentum); adam8bit (block-wise 8-bit m, v).",
     _choice("--optimizer", "sizing.memory:OPTIMIZERS", {"adam": "adamw"}), default=DEFAULT_OPTIMIZER)  # fmt: skip
_add("finetune", ("--finetune",), "training",
     "full (every weight trains), lora or qlora (frozen bf16 / NF4 base, adapters train).  [default: full]",
     _choice("--finetune", "sizing.parallel:FINETUNE_MODES"))  # fmt: skip
_add("lora_rank", ("--lora-rank",), "training", "LoRA / QLoRA rank r.  [default: 16]", _count("--lora-rank"))
_add("lora_targets", ("--lora-targets",), "training", "Projections with adapters.  [default: all linears]",
     metavar="q,k,v,o,up,gate,down")  # fmt: skip

# ---------------------------------------------------------------- serving
_add("prompt", ("--prompt",), "serving", "Prompt tokens per sequence.", _length("--prompt"))
_add("output", ("--output",), "serving", "Output tokens per sequence, the first from the prefill (at least 2).",
     _length("--output", 2))  # fmt: skip
_add("rate", ("--rate",), "serving",
     "Requests/s to serve: answers replicas x (tp, pp), GPUs and $/M tokens, searching tp and dtypes.",
     lambda: rate_type("--rate"))  # fmt: skip
_add("slo_ttft", ("--slo-ttft",), "serving", "With --rate: time-to-first-token bound, e.g. 2s.", metavar="DURATION")
_add("slo_tpot", ("--slo-tpot",), "serving", "With --rate: time-per-output-token bound, e.g. 50ms.",
     metavar="DURATION")  # fmt: skip
_add("mla", ("--mla",), "serving",
     "Latent attention (DeepSeek): absorbed (attention over the cached latent) or naive (per-head K/V).",
     _choice("--mla", MLA_IMPLS), default=DEFAULT_MLA_IMPL, advanced=True)  # fmt: skip
_add("k", ("--k",), "serving", "Tokens proposed per step.", _count("--k", maximum=64), default=4)
_add("acceptance", ("--acceptance",), "serving", "Probability each proposed token is accepted.",
     _number("--acceptance", 0, 1, exclusive=False, what="a number in [0, 1]"), default=0.7)  # fmt: skip

# ---------------------------------------------------------------- serving engine
_add("engine", ("--engine",), "engine", "Inference: the engine's own split (vllm, sglang).",
     _choice("--engine", "sizing.memory:ENGINES"))  # fmt: skip
_add("gpu_memory_utilization", ("--gpu-memory-utilization", "--mem-fraction-static"), "engine",
     "With --engine: the GPU share the engine takes.  [default: vllm 0.9, sglang 0.88]",
     _number("--gpu-memory-utilization", 0, 1, what="a number in (0, 1]"), dest="utilization")  # fmt: skip
_add("max_num_batched_tokens", ("--max-num-batched-tokens",), "engine",
     "With --engine vllm: tokens of the profiling forward.  [default: vLLM's, 8192 on a GPU of >= 70 GiB that "
     "is not an A100, else 2048]", _count("--max-num-batched-tokens", maximum=MAX_SEQ_LEN), advanced=True)  # fmt: skip
_add("max_num_seqs", ("--max-num-seqs",), "engine",
     "With --engine vllm: rows its profiling sampler draws (and the most running requests).  [default: vLLM's, "
     "1024 on a GPU of >= 70 GiB that is not an A100, else 256]", _count("--max-num-seqs"), advanced=True)  # fmt: skip
_add("prefill_chunk", ("--prefill-chunk",), "engine", "Tokens per prefill forward (chunked prefill).",
     _length("--prefill-chunk"), advanced=True)  # fmt: skip
_add("prefix_cached", ("--prefix-cached",), "engine",
     "Prompt tokens every request shares and the engine caches (prefix caching): their prefill is skipped and "
     "their KV blocks stored once.", _length("--prefix-cached"), dest="prefix",
     advanced=True)  # fmt: skip
_add("token_budget", ("--token-budget",), "engine",
     "With --rate: tokens per scheduler iteration (vLLM max_num_batched_tokens).", _count("--token-budget", 2),
     default=DEFAULT_TOKEN_BUDGET, advanced=True)  # fmt: skip
_add("block_size", ("--block-size",), "engine", "With --rate: tokens per paged KV block.", _count("--block-size"),
     default=DEFAULT_BLOCK_SIZE, advanced=True)  # fmt: skip

# ---------------------------------------------------------------- cost and energy
_add("price", ("--price",), "cost", "Price per GPU-hour, for the cost.", lambda: PRICE_TYPE, metavar="USD")
_add("power", ("--power",), "cost", "Power per GPU for the energy line (default: the GPU's TDP; docs/energy.md).",
     _number("--power", 0, 100_000, exclusive=False, what="watts per GPU in [0, 100000]"), metavar="W",
     dest="power_watts", advanced=True)  # fmt: skip
_add("pue", ("--pue",), "cost", "Data-centre power usage effectiveness (1.0: GPU power alone, the Llama 2 card's "
     "convention).", _number("--pue", 1, 10, exclusive=False, what="a number in [1, 10]"), default=DEFAULT_PUE,
     advanced=True)  # fmt: skip
_add("grid_intensity", ("--grid-intensity",), "cost",
     f"Grid carbon intensity, kgCO2eq/kWh (default: {DEFAULT_KG_CO2_PER_KWH}, implied by the Llama 2 card).",
     _number("--grid-intensity", 0, 10, exclusive=False, what="kgCO2eq per kWh in [0, 10]"),
     metavar="KG_PER_KWH", dest="grid_kg_co2_per_kwh", advanced=True)  # fmt: skip
_add("flops", ("--flops",), "cost", "The compute budget C in FLOPs, e.g. 1e23.",
     _number("--flops", 1e10, 1e30, exclusive=False, what="a FLOP budget between 1e10 and 1e30"))  # fmt: skip
_add("days", ("--days",), "cost", "Days of training on --gpus GPUs (the budget is GPUs x days x peak x MFU).",
     _number("--days", 0, 1e6, what="a number of days in (0, 1e6]"))  # fmt: skip

# ---------------------------------------------------------------- output
_add("format", ("--format",), "output", "Output format.", _choice("--format", FORMATS), default="table", dest="fmt")
_add("memory", ("--memory",), "output", "Include the memory summary.", off_flag="--no-memory", default=True,
     dest="with_memory")  # fmt: skip
_add("sort", ("--sort",), "output", "Sort the rows by this column (ascending), e.g. gpu_hours or params_total.",
     metavar="COLUMN")  # fmt: skip
_add("out", ("--out",), "output", "Where to write.", metavar="PATH")
# The UI's fits-on list asks each GPU only whether the answer fits (sizing.ui.api.fits_by_gpu): this
# switch leaves out the work that does not decide it. Hidden: the server's own, not the CLI's surface.
_add("verdict_only", ("--verdict-only",), "output",
     "Only what decides whether it fits: a layout search stops at the first layout that fits, and the advice on "
     "what would fit (other layouts, the fewest GPUs) is left out.", is_flag=True, hidden=True)  # fmt: skip
