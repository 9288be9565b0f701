"""Every option of the `sizing` commands, declared once (the machinery and the rules for a
command that differs are in sizing/cli/specs.py). Grouped as the browser form shows them.

To add an option: one `_add(...)` line here (key, flags, group, help, parser, default), then
`option("key")` in the commands that take it; `python tools/cli_reference.py` for docs/cli.md.
Vocabularies that live in a question package (engines, quantized formats, stacks) are read when
the option's parser is first built, so importing this table loads no question package.
"""

from __future__ import annotations

import importlib

from sizing.cli import options as kinds  # the option types (GPU_NAME, Length, rate_type, ...)
from sizing.cli.common import FORMATS, once, use_calibration
from sizing.cli.options import MFU_TYPE, PRICE_TYPE, Choice, Count, Number, Quantity
from sizing.cli.specs import declare, describe
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
    LOSS_KERNELS,
    MLA_IMPLS,
    OPTIMIZER_ALIASES,
    PRECISION_ALIASES,
    PRECISION_POLICIES,
    RECOMPUTE_MODES,
    SELECTIVE_POLICIES,
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


# ---------------------------------------------------------------- model
_add("preset", ("--preset", "-p"), "model", "A preset name (see `sizing presets`).", lambda: kinds.PRESET_NAME,
     metavar="NAME", multiple=True, callback=once, names="presets")  # fmt: skip
_add("config", ("--config",), "model", "A Hugging Face config.json or this tool's JSON config. Never executes code.",
     lambda: kinds.CONFIG_NAME, metavar="PATH", multiple=True, callback=once, dest="config_path")  # fmt: skip
_add("set", ("--set",), "model", "Override a config field, e.g. --set n_layers=48 (repeatable).",
     metavar="FIELD=VALUE", multiple=True, dest="overrides")  # fmt: skip
_add("like", ("--like",), "model", "The family of the shapes (vocab, MLP, norm, FFN ratio).", metavar="PRESET",
     names="presets")  # fmt: skip
_add("draft", ("--draft",), "model", "A draft model preset (same vocabulary); default: MTP heads.", metavar="PRESET",
     names="presets")  # fmt: skip
_add("mtp_depth", ("--mtp-depth",), "model",
     "Multi-token-prediction modules (DeepSeek-V3's MTP), sized apart from the totals; 0: none.  "
     "[default: the config's num_nextn_predict_layers]", _count("--mtp-depth", 0, 16), advanced=True)  # fmt: skip
_add("all", ("--all",), "model", "Every preset.", is_flag=True, dest="all_presets")
_add("from_file", ("--from",), "model",
     "A trainer's or engine's own file (torchtitan .toml, Megatron arguments or YAML, NeMo recipe, DeepSpeed "
     "JSON, TrainingArguments JSON, accelerate or axolotl YAML, a vllm/sglang/trtllm-serve command line): its "
     "settings become these options, each shown with its field; a flag you give wins (docs/files.md).",
     metavar="FILE", advanced=True)  # fmt: skip
_add("from_format", ("--from-format",), "model", "The format of --from FILE when it cannot be told from the file.",
     _choice("--from-format", "sizing.frameworks:READ_FORMATS"), advanced=True)  # fmt: skip
_add("run_remote_code", ("--run-remote-code",), "model",
     "Run the Python code a trust_remote_code model ships in its repository (config.json auto_map) to build it "
     "on the meta device. Without it no model code is ever run. Only for code you trust.", is_flag=True)  # fmt: skip

# ---------------------------------------------------------------- data and context
_add("seq_len", ("--seq-len", "-T"), "data", "Tokens per sequence.", lambda: kinds.Length("--seq-len"))
_add("context", ("--context", "-C"), "data", "Tokens in each sequence's KV cache.", lambda: kinds.Length("--context"))
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
_add("prompt_tokens", ("--prompt-tokens",), "data", "Text tokens in the prompt.",
     lambda: kinds.Length("--prompt-tokens", 0), default=512)  # fmt: skip

# ---------------------------------------------------------------- hardware
_add("gpu", ("--gpu",), "hardware", "GPU name (see `sizing gpus`).", lambda: kinds.GPU_NAME, metavar="NAME",
     names="gpus")  # fmt: skip
_add("gpus", ("--gpus",), "hardware", "GPUs in all.", _count("--gpus"))
_add("mfu", ("--mfu",), "hardware",
     "A constant model FLOPs utilisation in (0, 1] instead of the step model: step = model FLOPs / (peak x MFU).",
     lambda: MFU_TYPE, advanced=True)  # fmt: skip
_add("nvlink_gbs", ("--nvlink-gbs",), "hardware", "Override the GPU's NVLink GB/s per direction.",
     lambda: kinds.link_gbs_type("--nvlink-gbs"), advanced=True)  # fmt: skip
_add("network_gbs", ("--network-gbs",), "hardware", "Override the GPU's network GB/s per direction.",
     lambda: kinds.link_gbs_type("--network-gbs"), advanced=True)  # fmt: skip
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
_add("calibration", ("--calibration",), "training",
     "A calibration file from `sizing calibrate`: its fitted stack overheads replace the built-in ones.",
     metavar="FILE", multiple=True, callback=use_calibration, advanced=True)  # fmt: skip
_add("compute_efficiency", ("--compute-efficiency",), "hardware",
     "Share of the dense peak the matmuls reach (a constant instead of the model's).",
     lambda: kinds.efficiency_type("--compute-efficiency"), advanced=True)  # fmt: skip
_add("bandwidth_efficiency", ("--bandwidth-efficiency",), "hardware",
     "Share of HBM and NVLink bandwidth reached (1: the roofline bound).",
     lambda: kinds.efficiency_type("--bandwidth-efficiency"), advanced=True)  # fmt: skip

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
_add("optimizer", ("--optimizer",), "training", "adamw (m, v); sgd (momentum); adam8bit (block-wise 8-bit m, v); "
     "paged-adam8bit / paged-adamw: bitsandbytes' paged ones, the same bytes counted on the GPU.",
     _choice("--optimizer", "sizing.memory:OPTIMIZERS", OPTIMIZER_ALIASES), default=DEFAULT_OPTIMIZER)  # fmt: skip
_add("finetune", ("--finetune",), "training",
     "full (every weight trains), lora or qlora (frozen bf16 / NF4 base, adapters train).  [default: full]",
     _choice("--finetune", "sizing.parallel:FINETUNE_MODES"))  # fmt: skip
_add("lora_rank", ("--lora-rank",), "training", "LoRA / QLoRA rank r.  [default: 16]", _count("--lora-rank"))
_add("lora_targets", ("--lora-targets",), "training", "Projections with adapters.  [default: all linears]",
     metavar="q,k,v,o,up,gate,down")  # fmt: skip
_add("lora_base", ("--lora-base",), "training",
     "LoRA: the frozen base's linears in bf16 or int8 (bitsandbytes LLM.int8, load_in_8bit).  [default: bf16]",
     _choice("--lora-base", ("bf16", "int8")), advanced=True)  # fmt: skip
_add("lora_trained", ("--lora-trained",), "training",
     "LoRA/QLoRA: modules trained in full beside the adapters (PEFT modules_to_save).", metavar="embedding,lm_head",
     advanced=True)  # fmt: skip
_add("cross_entropy", ("--cross-entropy",), "training",
     "The loss kernel: eager (fp32 log-softmax of b·T·V), fused (in place, Megatron) or chunked (Liger's fused "
     "linear cross-entropy: no whole logits).  [default: the stack's]", _choice("--cross-entropy", LOSS_KERNELS),
     advanced=True)  # fmt: skip
_add("selective", ("--selective",), "training",
     "What --recompute selective drops: the attention core (Megatron) or op-level (torchtitan's selective_ac_option "
     "op).  [default: the stack's]", _choice("--selective", SELECTIVE_POLICIES), advanced=True)  # fmt: skip
_add("recompute_modules", ("--recompute-modules",), "training",
     "Megatron-Core's --recompute-modules (stack megatron-core; implies --recompute selective), comma-separated: "
     "core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts (the attention core re-runs only with "
     "core_attn).  [default: core_attn]", metavar="MOD,MOD,...", advanced=True)  # fmt: skip

# ---------------------------------------------------------------- serving
_add("prompt", ("--prompt",), "serving", "Prompt tokens per sequence.", lambda: kinds.Length("--prompt"))
_add("output", ("--output",), "serving", "Output tokens per sequence, the first from the prefill (at least 2).",
     lambda: kinds.Length("--output", 2))  # fmt: skip
_add("rate", ("--rate",), "serving",
     "Requests/s to serve: answers replicas x (tp, pp), GPUs and $/M tokens, searching tp and dtypes.",
     lambda: kinds.rate_type("--rate"))  # fmt: skip
_add("slo_ttft", ("--slo-ttft",), "serving", "With --rate: time-to-first-token bound, e.g. 2s.", metavar="DURATION")
_add("slo_tpot", ("--slo-tpot",), "serving", "With --rate: time-per-output-token bound, e.g. 50ms.",
     metavar="DURATION")  # fmt: skip
_add("percentile", ("--percentile",), "serving",
     "With --rate: the share of requests the SLOs hold for (0.99: p99 TTFT and TPOT).",
     _number("--percentile", 0, 1, what="a share in (0, 1), e.g. 0.99 for p99"), default=0.99)  # fmt: skip
_add("trace", ("--trace",), "serving",
     "With --rate: request lengths from a .csv or .jsonl file (prompt_tokens, output_tokens, optional weight; one "
     "row per request or per histogram bin) instead of --prompt and --output.", metavar="FILE",
     advanced=True)  # fmt: skip
_add("disaggregated", ("--disaggregated",), "serving",
     "With --rate: also size separate prefill and decode pools (DistServe, Splitwise) beside co-located serving.",
     is_flag=True, advanced=True)  # fmt: skip
_add("kv_link", ("--kv-link",), "serving",
     "With --disaggregated: the link a prompt's KV cache crosses from the prefill to the decode pool.",
     _choice("--kv-link", ("network", "nvlink")), default="network", advanced=True)  # fmt: skip
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
     lambda: kinds.Length("--prefill-chunk"), advanced=True)  # fmt: skip
_add("prefix_cached", ("--prefix-cached",), "engine",
     "Prompt tokens every request shares and the engine caches (prefix caching): their prefill is skipped and "
     "their KV blocks stored once.", lambda: kinds.Length("--prefix-cached"), dest="prefix", advanced=True)  # fmt: skip
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
# hidden: the server's own switch for the UI's fits-on list (sizing.ui.api.fits_by_gpu), not the CLI's surface
_add("verdict_only", ("--verdict-only",), "output",
     "Only what decides whether it fits: a layout search stops at the first layout that fits, and the advice on "
     "what would fit (other layouts, the fewest GPUs) is left out.", is_flag=True, hidden=True)  # fmt: skip
_add("emit", ("--emit",), "output",
     "Write the chosen layout or serving plan as the framework's own file or command line (to --out, else to "
     "stdout instead of the answer).", _choice("--emit", ("torchtitan", "megatron", "deepspeed", "vllm", "sglang",
     "trtllm")))  # fmt: skip
_add("prefix_caching", ("--prefix-caching",), "engine",
     "The engine caches shared prefixes (vLLM --enable-prefix-caching, SGLang's radix cache); off: --prefix-cached "
     "is refused.  [default: on]", off_flag="--no-prefix-caching", advanced=True)  # fmt: skip

# ---------------------------------------------------------------- the form's words and rules
# A short label per option, as the browser form shows it (the help is shown beside it), and the
# combinations every command that takes an option refuses, as terms the form disables it by
# (sizing/cli/specs.py: `needs`). An option without a label here is shown by its key in words.
# fmt: off
describe(
    {
        "preset": "Preset", "config": "Config file", "set": "Fields to change", "like": "Shape family (preset)",
        "draft": "Draft model", "all": "Every preset",
        "seq_len": "Sequence length (tokens)", "context": "Context (tokens in the KV cache)",
        "tokens": "Training tokens", "inference_tokens": "Tokens to serve over the model's life",
        "micro_batch": "Micro-batch (sequences per GPU)", "global_batch": "Global batch (sequences per step)",
        "batch": "Batch (sequences decoded together)", "attention": "Attention FLOPs convention",
        "images": "Images in the prompt", "image_size": "Image size (HEIGHTxWIDTH)",
        "prompt_tokens": "Text tokens in the prompt",
        "gpu": "GPU", "gpus": "GPUs", "mfu": "Constant MFU", "nvlink_gbs": "NVLink GB/s (override)",
        "network_gbs": "Network GB/s (override)", "runtime_reserve": "Runtime reserve (GiB)",
        "peak_tflops": "Peak TFLOP/s (override)",
        "dp": "Data parallel (dp)", "tp": "Tensor parallel (tp)", "cp": "Context parallel (cp)",
        "ep": "Expert parallel (ep)", "pp": "Pipeline stages (pp)", "zero": "ZeRO stage", "fsdp": "FSDP sharding",
        "shard_group": "HSDP shard group", "sp": "Sequence parallelism",
        "no_vocab_parallel": "Replicate the vocabulary",
        "schedule": "Pipeline schedule", "v": "Interleaved chunks per rank", "micro_batches": "Micro-batches per step",
        "stage_layers": "Layers per stage", "offload_optimizer": "Optimizer states on the CPU",
        "offload_params": "Weights and gradients on the CPU", "max_gpus": "Search at most (GPUs)",
        "overlap": "Communication overlap", "stack": "Training software stack",
        "compute_efficiency": "Compute efficiency", "bandwidth_efficiency": "Bandwidth efficiency",
        "dtype": "Peak-rate dtype", "precision": "Training precision", "weight_dtype": "Weight dtype",
        "kv_dtype": "KV cache dtype", "activation_dtype": "Matmul dtype", "ssm_dtype": "Recurrent-state dtype",
        "quant": "Quantized weight format", "weights": "Weight format", "attention_impl": "Attention kernel",
        "recompute": "Activation recomputation", "optimizer": "Optimizer", "finetune": "Fine-tuning",
        "lora_rank": "LoRA rank", "lora_targets": "LoRA target projections",
        "prompt": "Prompt tokens", "output": "Output tokens", "rate": "Request rate (requests/s)",
        "slo_ttft": "Time-to-first-token bound", "slo_tpot": "Time-per-output-token bound",
        "percentile": "SLO percentile", "trace": "Request trace file",
        "disaggregated": "Disaggregated prefill and decode", "kv_link": "KV transfer link",
        "mla": "Latent attention kernel", "k": "Draft tokens per step (k)", "acceptance": "Acceptance rate",
        "engine": "Serving engine", "gpu_memory_utilization": "GPU memory share of the engine",
        "max_num_batched_tokens": "Profiling forward tokens", "prefill_chunk": "Prefill chunk (tokens)",
        "prefix_cached": "Shared cached prefix (tokens)", "token_budget": "Tokens per scheduler step",
        "block_size": "KV block size (tokens)",
        "price": "Price per GPU-hour ($)", "power": "Power per GPU (W)", "pue": "PUE",
        "grid_intensity": "Grid carbon (kgCO2eq/kWh)", "flops": "Compute budget (FLOPs)", "days": "Days of training",
        "format": "Output format", "memory": "Memory summary", "sort": "Sort rows by", "out": "Write to",
        "run_remote_code": "Run the model's own code", "from_file": "From a framework's config file",
        "from_format": "Format of that file", "emit": "Emit a framework config", "calibration": "Step calibration file",
        "max_num_seqs": "Most sequences the engine runs", "prefix_caching": "Prefix caching",
        "lora_base": "LoRA frozen base", "lora_trained": "LoRA trained parts", "cross_entropy": "Cross-entropy kernel",
        "selective": "Selective recompute of", "recompute_modules": "Megatron recompute modules",
    },
    {
        "sp": ("tp>1",),
        "shard_group": ("fsdp=hybrid",),
        "lora_rank": ("finetune=lora|qlora",),
        "lora_targets": ("finetune=lora|qlora",),
        "gpu_memory_utilization": ("engine",),
        "max_num_batched_tokens": ("engine",),
        "slo_ttft": ("rate",), "slo_tpot": ("rate",), "percentile": ("rate",), "trace": ("rate",),
        "disaggregated": ("rate",), "token_budget": ("rate",), "block_size": ("rate",),
        "prefix_cached": ("prefix-caching",),
    },
)
# fmt: on
