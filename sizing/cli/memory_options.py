"""The options of `sizing memory`, grouped by what they ask about: the training run, the GPU and
fine-tuning, inference, and the serving engine (cli/memory.py applies them in this order)."""

from __future__ import annotations

import click

from sizing.cli.options import GPU_NAME, Choice, Count, Length, Number, option_group
from sizing.memory import ENGINES, OPTIMIZER_ALIASES, OPTIMIZERS, ZERO_STAGES
from sizing.memory import FORMATS as QUANT_FORMATS
from sizing.parallel import FINETUNE_MODES
from sizing.validate import MAX_SEQ_LEN
from sizing.vocabulary import (
    ATTENTION_IMPL_ALIASES,
    ATTENTION_IMPLS,
    DEFAULT_ATTENTION_IMPL,
    DEFAULT_OPTIMIZER,
    DEFAULT_PRECISION,
    DEFAULT_RECOMPUTE,
    DTYPE_BITS,
    PRECISION_ALIASES,
    PRECISION_POLICIES,
    RECOMPUTE_MODES,
)

_SEQ_LEN = Length("--seq-len")
_CONTEXT = Length("--context")
_PRECISION = Choice("--precision", PRECISION_POLICIES, PRECISION_ALIASES)  # mixed = bf16-mixed
_OPTIMIZER = Choice("--optimizer", OPTIMIZERS, OPTIMIZER_ALIASES)  # adam = adamw
_ATTENTION_IMPL = Choice("--attention-impl", ATTENTION_IMPLS, ATTENTION_IMPL_ALIASES)  # sdpa = flash

training_options = option_group(
    click.option("--seq-len", "-T", type=_SEQ_LEN, help="Tokens per sequence (default: the preset's context)."),
    click.option("--micro-batch", "-b", type=Count("--micro-batch"), help="Sequences per GPU per step.  [default: 1]"),
    click.option(
        "--precision",
        type=_PRECISION,
        default=DEFAULT_PRECISION,
        show_default=True,
        help="fp32; bf16-mixed / fp16-mixed (16-bit weights and grads, fp32 master + states: 16 B/param "
        "with AdamW); bf16 (pure, no master copy).",
    ),
    click.option(
        "--optimizer",
        type=_OPTIMIZER,
        default=DEFAULT_OPTIMIZER,
        show_default=True,
        help="adamw (m, v); sgd (momentum); adam8bit (bitsandbytes block-wise 8-bit m, v).",
    ),
    click.option(
        "--zero",
        type=Choice("--zero", ZERO_STAGES),
        default=0,
        show_default=True,
        help="ZeRO stage over --dp: 1 shards optimizer states, 2 + gradients, 3 + weights (FSDP FULL_SHARD).",
    ),
    click.option(
        "--dp", type=Count("--dp"), default=1, show_default=True, help="Data-parallel degree (ZeRO shards over it)."
    ),
    click.option(
        "--recompute",
        type=Choice("--recompute", RECOMPUTE_MODES),
        default=DEFAULT_RECOMPUTE,
        show_default=True,
        help="Activation recomputation: selective (attention core) or full (each block keeps its input).",
    ),
    click.option(
        "--attention-impl",
        "attention_impl",
        type=_ATTENTION_IMPL,
        default=DEFAULT_ATTENTION_IMPL,
        show_default=True,
        help="math materialises the T x T scores and probabilities; flash (= sdpa) is a fused kernel.",
    ),
)

gpu_and_finetune_options = option_group(
    click.option(
        "--gpu",
        type=GPU_NAME,
        help="GPU name (see `sizing gpus`).  [default: h100-sxm, or the preset's published run's GPU]",
    ),
    click.option(
        "--finetune",
        type=Choice("--finetune", FINETUNE_MODES),
        help="Training: full (every weight trains), lora or qlora (frozen bf16 / NF4 base, adapters train).  "
        "[default: full]",
    ),
    click.option("--lora-rank", type=Count("--lora-rank"), help="LoRA / QLoRA rank r.  [default: 16]"),
    click.option(
        "--lora-targets", metavar="q,k,v,o,up,gate,down", help="Projections with adapters.  [default: all linears]"
    ),
    click.option(
        "--runtime-reserve",
        "reserve_gib",
        type=Number("--runtime-reserve", 0, 1024, exclusive_minimum=False, what="GiB in [0, 1024]"),
        metavar="GiB",
        help="Memory the process holds beyond its tensors (CUDA context, NCCL, allocator), taken off the GPU "
        "before the fit.  [default: 0.5 GiB CUDA context + 0.25 GiB NCCL with --dp > 1; docs/memory.md]",
    ),
)

inference_options = option_group(
    click.option("--inference", is_flag=True, help="Inference memory (weights + KV cache) instead of training."),
    click.option(
        "--context",
        "-C",
        type=_CONTEXT,
        help="Inference: tokens in the KV cache per sequence (default: --seq-len or the preset's context).",
    ),
    click.option("--batch", type=Count("--batch"), help="Inference: sequences decoded together.  [default: 1]"),
    click.option(
        "--weight-dtype", type=Choice("--weight-dtype", DTYPE_BITS), help="Inference: weight dtype.  [default: bf16]"
    ),
    click.option(
        "--kv-dtype", type=Choice("--kv-dtype", DTYPE_BITS), help="Inference: KV cache dtype.  [default: bf16]"
    ),
    click.option(
        "--prefill-chunk",
        type=Length("--prefill-chunk"),
        help="Inference: tokens per prefill forward (chunked prefill; up to batch x context for a batch "
        "prefilled at once).  [default: one sequence's context]",
    ),
    click.option(
        "--quant",
        type=Choice("--quant", QUANT_FORMATS),
        help="Inference: a deployed weight format (GPTQ/AWQ, MXFP4, NVFP4, fp8, GGUF) with its real bits per "
        "weight and 16-bit tensors, instead of --weight-dtype.",
    ),
)

engine_options = option_group(
    click.option(
        "--engine", type=Choice("--engine", ENGINES), help="Inference: the engine's own split (vllm, sglang)."
    ),
    click.option(
        "--gpu-memory-utilization",
        "--mem-fraction-static",
        "utilization",
        type=Number("--gpu-memory-utilization", 0, 1, what="a number in (0, 1]"),
        help="With --engine: the GPU share the engine takes.  [default: vllm 0.9, sglang 0.88]",
    ),
    click.option(
        "--max-num-batched-tokens",
        type=Count("--max-num-batched-tokens", maximum=MAX_SEQ_LEN),
        help="With --engine vllm: tokens of the profiling forward.  [default: 8192]",
    ),
)

# inference under tensor parallelism: memory per GPU
tp_option = click.option(
    "--tp",
    type=Count("--tp"),
    help="Inference: tensor-parallel GPUs; memory per GPU (weights / tp, its KV heads).  [default: 1]",
)
