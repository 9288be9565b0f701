"""The words every layer shares: attention conventions and implementations, recompute modes,
dtypes, precision policies, and the named defaults. Each is defined here once; the CLI
options, the formulas, the memory model and the reference model all read them from here.

Pure data: importing this module costs nothing (`sizing estimate` starts fast).
"""

from __future__ import annotations

from typing import Literal

# ---- FLOP counting convention for attention (README "Conventions")
AttentionConvention = Literal["full", "causal"]
ATTENTION_CONVENTIONS: tuple[str, ...] = ("full", "causal")

# ---- attention implementation: what the kernel materialises (memory), how the reference
# model computes it. `math`: QK^T, softmax and AV as separate ops, T x T tensors saved.
# `flash`: a fused kernel (FlashAttention; torch's scaled_dot_product_attention, "sdpa").
AttentionImpl = Literal["math", "flash"]
ATTENTION_IMPLS: tuple[str, ...] = ("math", "flash")
ATTENTION_IMPL_ALIASES: dict[str, str] = {"sdpa": "flash"}

# ---- activation recomputation (Korthikanti et al. 2022): none, the attention core, every block
Recompute = Literal["none", "selective", "full"]
RECOMPUTE_MODES: tuple[str, ...] = ("none", "selective", "full")

# ---- FLOP counters `sizing verify --flops` runs on the reference model (fvcore: toy size only)
FLOP_COUNTERS: tuple[str, ...] = ("torch", "fvcore", "both")

# ---- storage dtypes: bits per element (int4 packs two per byte)
DTYPE_BITS: dict[str, int] = {"fp32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "int4": 4}
STORAGE_DTYPES: tuple[str, ...] = tuple(DTYPE_BITS)
# ---- dtypes a GPU has a peak matmul rate for (sizing.inputs.hardware)
COMPUTE_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "fp4", "tf32", "fp32")
# ---- dtypes the reference model trains in (sizing profile)
TRAINING_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp32")

# ---- training precision policies (sizing.memory.states.PRECISIONS has the bytes of each)
PRECISION_POLICIES: tuple[str, ...] = ("fp32", "bf16-mixed", "fp16-mixed", "bf16", "fp8")
PRECISION_ALIASES: dict[str, str] = {"mixed": "bf16-mixed"}

# ---- optimizers (sizing.memory.states.OPTIMIZERS has the bytes of each) and fine-tuning modes
OPTIMIZER_NAMES: tuple[str, ...] = ("adamw", "sgd", "adam8bit")
# bitsandbytes' paged optimizers keep the same states, paged to CPU only when the GPU runs out
# (transformers OptimizerNames paged_adamw_8bit, paged_adamw_32bit): counted resident, as their unpaged kin.
OPTIMIZER_ALIASES: dict[str, str] = {"adam": "adamw", "paged-adam8bit": "adam8bit", "paged-adamw": "adamw"}
FINETUNE_MODES: tuple[str, ...] = ("full", "lora", "qlora")  # every weight trains; adapters; adapters on NF4

# ---- named defaults
# H100 unless the preset's published run says otherwise (sizing.inputs.default_gpu.default_gpu_for)
DEFAULT_GPU = "h100-sxm"
DEFAULT_MFU = 0.4  # a typical large-run MFU (PaLM reports 46.2%, LLaMA-1 implies ~0.4 on A100)
DEFAULT_ATTENTION: str = "full"
DEFAULT_ATTENTION_IMPL: str = "flash"
DEFAULT_RECOMPUTE: str = "none"
DEFAULT_PRECISION = "bf16-mixed"
DEFAULT_OPTIMIZER = "adamw"

# ---- serving (sizing.serve): the roofline's stated defaults, each changeable by the user
# Prefill is counted causal: serving kernels (FlashAttention, paged attention) skip masked tiles.
DEFAULT_SERVE_ATTENTION: str = "causal"
# Share of the dense peak a prefill reaches: large bf16 GEMMs run at ~60-75% of peak on
# A100/H100 (an assumption until benchmarks/gpu_profile.sh measures it), 0.6 to stay below.
DEFAULT_SERVE_COMPUTE_EFFICIENCY = 0.6
# Share of HBM (and NVLink) bandwidth a decode step reaches: memory-bound GEMV/attention kernels
# stream at ~75-90% of the datasheet figure; 0.8 (an assumption until measured).
DEFAULT_SERVE_BANDWIDTH_EFFICIENCY = 0.8
# USD per GPU-hour for $/M tokens when none is given: a round on-demand cloud rate (2024-25
# H100 offers span ~$2-4/h); a stated assumption, change it with --price.
DEFAULT_SERVE_PRICE_PER_GPU_HOUR = 2.0
# dtypes a serving forward may compute in: those a GPU has a peak matmul rate for and that
# store activations (integer activations would need integer peaks, which sizing.inputs.hardware lacks)
SERVE_ACTIVATION_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "fp4", "fp32")
# How MLA (latent attention) decodes: "absorbed" (attention over the cached latent with W_UK and
# W_UV folded into the query and output, as DeepSeek, vLLM and SGLang serve it) or "naive"
# (per-head K and V decompressed and cached). One per run: its FLOPs and its bytes together.
MLA_IMPLS: tuple[str, ...] = ("absorbed", "naive")
DEFAULT_MLA_IMPL: str = "absorbed"


def mfu_meaning(attention: str, dtype: str) -> str:
    """What "MFU" means, in one sentence printed beside every MFU (docs/conventions.md): PaLM's
    model FLOPs utilisation, one meaning everywhere."""
    return (
        f"MFU = model FLOPs (6N-style matmuls + attention counted {attention}, no recomputation) / "
        f"(GPU-seconds x the GPU's dense {dtype} peak)"
    )


def ceil_div(numerator: int, denominator: int) -> int:
    """⌈a / b⌉ for integers, exactly (no float): shards, padded buffers, blocks."""
    return -(-numerator // denominator)


def attention_impl(name: str) -> str:
    """The canonical implementation name: 'sdpa' -> 'flash'."""
    return ATTENTION_IMPL_ALIASES.get(name, name)


# fp8 training scaling recipes (sizing.memory.fp8 holds what each stores) and the gradient
# reduction dtypes a stack may use (sizing.parallel.memory_stack)
FP8_RECIPE_NAMES = ("tensorwise", "blockwise", "mxfp8")
GRAD_REDUCE_DTYPES = ("fp32", "bf16")
# The cross-entropy kernel (sizing.memory.stack_activations) and what selective recompute drops.
LOSS_KERNELS = ("eager", "fused", "chunked")
SELECTIVE_POLICIES = ("attention", "op")
# Megatron-Core's --recompute-modules under --recompute-granularity selective
# (megatron/core/transformer/transformer_config.py `recompute_modules`; its default is core_attn):
# what each drops is in sizing.memory.stack_activations.
RECOMPUTE_MODULES = ("core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts")
# Pipeline schedules beyond a layout's own (1f1b, interleaved) that change what a rank holds or
# when (sizing.parallel.schedule for the time, sizing.parallel.dualpipe for DualPipe's memory).
EXTRA_PIPELINE_SCHEDULES = ("zero-bubble", "dualpipe")
# The sequence length a fine-tune is sized at when none is given: axolotl's examples
# (examples/llama-3/lora-8b.yml, qlora.yml: sequence_len 2048 / 4096) and NeMo 2's SFT recipes
# (nemo/collections/llm/recipes/llama3_8b.py finetune_recipe: seq_length 2048) train adapters on
# short instruction data, not at the pretraining context.
DEFAULT_FINETUNE_SEQ_LEN = 2048
# A config file's default training context when it states no pretraining context and its
# max_position_embeddings is long (a served context reached by RoPE scaling, not the pretraining one).
DEFAULT_CONFIG_SEQ_LEN = 4096
MAX_TRAINED_CONTEXT = 8192  # max_position_embeddings up to this are taken as the pretraining context
