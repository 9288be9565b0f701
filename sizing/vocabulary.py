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
# ---- dtypes a GPU has a peak matmul rate for (sizing.hardware)
COMPUTE_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "tf32", "fp32")
# ---- dtypes the reference model trains in (sizing profile)
TRAINING_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp32")

# ---- training precision policies (sizing.memory.states.PRECISIONS has the bytes of each)
PRECISION_POLICIES: tuple[str, ...] = ("fp32", "bf16-mixed", "fp16-mixed", "bf16")
PRECISION_ALIASES: dict[str, str] = {"mixed": "bf16-mixed"}

# ---- named defaults
DEFAULT_GPU = "a100-80gb"  # the GPU of the LLaMA and Llama-2 papers' published GPU-hours
DEFAULT_MFU = 0.4  # a typical large-run MFU (PaLM reports 46.2%, LLaMA-1 implies ~0.4 on A100)
DEFAULT_ATTENTION: str = "full"
DEFAULT_ATTENTION_IMPL: str = "flash"
DEFAULT_RECOMPUTE: str = "none"
DEFAULT_PRECISION = "bf16-mixed"
DEFAULT_OPTIMIZER = "adamw"


def ceil_div(numerator: int, denominator: int) -> int:
    """⌈a / b⌉ for integers, exactly (no float): shards, padded buffers, blocks."""
    return -(-numerator // denominator)


def attention_impl(name: str) -> str:
    """The canonical implementation name: 'sdpa' -> 'flash'."""
    return ATTENTION_IMPL_ALIASES.get(name, name)
