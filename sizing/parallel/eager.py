"""Memory traffic and kernel launches of a block's elementwise ops when a stack runs them unfused.

A fused stack (Megatron's fused kernels, torch.compile's Inductor) reads each op's input once and
writes its output once. Eager PyTorch runs each ATen op of the composite path as its own kernel,
reading and writing the full activation every time, some of them in fp32. The byte counts below
are counted from the eager paths torchtitan runs (pytorch/torchtitan,
torchtitan/models/llama3/model.py; aten/src/ATen/native/layer_norm.cpp's composite rms_norm),
per element of the tensor the op applies to, forward only (the backward is charged
sizing.parallel.ops.BACKWARD_TRAFFIC times the forward):

* RMSNorm: upcast to fp32 (read 2, write 4), pow (4, 4), mean (read 4), x * rsqrt (4, 4),
  * weight (4, 4), downcast (4, 2) = 40 B, in 6 full-size kernels and 2 small ones (+ eps,
  rsqrt of the row means). LayerNorm's eager kernel is one fused ATen kernel (4 B);
* rotary through view_as_complex: upcast (2, 4), complex multiply (4, 4), downcast (4, 2)
  = 20 B in 3 kernels, for q and for k;
* SwiGLU as silu(x W1) * (x W3): silu (2, 2), then the product (4, 2) = 10 B per f element in
  2 kernels; a plain activation (GeLU) is one kernel of 4 B;
* residual adds: one kernel each (read 2 x 2, write 2 = 6 B), the same fused or not.

Dropout (torchtitan trains without it) is not counted here.
"""

from __future__ import annotations

from sizing.inputs import ModelConfig
from sizing.parallel.layout import ParallelLayout

ACT_BYTES = 2
RMSNORM_EAGER_BYTES = 40  # per element, see above
RMSNORM_EAGER_KERNELS = 8
LAYERNORM_BYTES = 4  # one ATen kernel (read 2, write 2)
ROTARY_EAGER_BYTES = 20
ROTARY_EAGER_KERNELS = 3  # per tensor (q, k)
SWIGLU_EAGER_BYTES = 10  # per f element
RESIDUAL_BYTES = 6


def norm_bytes(cfg: ModelConfig) -> int:
    return RMSNORM_EAGER_BYTES if cfg.norm == "rmsnorm" else LAYERNORM_BYTES


def elementwise_bytes(cfg: ModelConfig, layout: ParallelLayout, t: int) -> float:
    """Norms, residual adds and rotary of one block, forward, eager: tokens x bytes per element."""
    d = cfg.d_model
    tokens = t // layout.tp if layout.sequence_parallel else t
    per_token = cfg.norms_per_block * d * norm_bytes(cfg) + 2 * d * RESIDUAL_BYTES
    rope = 0
    if cfg.position == "rope":
        rope = t * (cfg.q_width + cfg.kv_width) // layout.tp * ROTARY_EAGER_BYTES
    return tokens * per_token + rope


def activation_bytes(cfg: ModelConfig, tokens: int, f: int) -> float:
    """The MLP activation over `tokens` x `f` (f already divided by tp), forward, eager."""
    per = SWIGLU_EAGER_BYTES if cfg.mlp_matrices == 3 else 2 * ACT_BYTES
    return tokens * f * per


def kernels_per_block(cfg: ModelConfig) -> int:
    """Kernels one block launches forward (elementwise ops as counted above, residual adds, one
    per GEMM with q, k, v apart as torchtitan's wq/wk/wv, one attention kernel); backward
    launches about twice as many (each op's backward computes one or two gradients)."""
    norms = cfg.norms_per_block * (RMSNORM_EAGER_KERNELS if cfg.norm == "rmsnorm" else 1)
    rope = 2 * ROTARY_EAGER_KERNELS if cfg.position == "rope" else 0
    activation = 2 if cfg.mlp_matrices == 3 else 1
    gemms = 4 + cfg.mlp_matrices  # wq, wk, wv, wo + the MLP's
    return norms + rope + activation + 2 + gemms + 1
