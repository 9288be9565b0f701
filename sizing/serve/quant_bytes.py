"""The bytes serving reads when the weights are in a deployed format (sizing/memory/quant.py)
rather than one dtype: the same StepBytes as sizing.serve.work.step_bytes, with the routed
experts and everything else at the widths the format stores them in.

Weight-only formats (GPTQ, AWQ, GGUF, MXFP4/NVFP4 on Hopper) dequantize inside the matmul
kernel: the step reads the packed bytes and the matmuls run at the activation dtype's peak; the
dequantization (about 2 FLOPs per weight read, in registers) is not counted, hidden while decode
is memory-bound.
"""

from __future__ import annotations

from sizing.formulas import params as P
from sizing.inputs import ModelConfig
from sizing.memory import (
    FORMATS,
    deployed_weights_bytes,
    dtype_bytes,
    plain_dtype_note,
    quantized_weights,
    routed_expert_matrix_params,
    weight_format,
)
from sizing.serve.work import (
    StepBytes,
    expected_experts_hit,
    kv_read_bytes,
    kv_read_bytes_per_rank,
    step_bytes,
    unread_table_params,
)
from sizing.validate import require_int
from sizing.vocabulary import DEFAULT_MLA_IMPL, DTYPE_BITS, ceil_div

WEIGHT_CHOICES = (*DTYPE_BITS, *FORMATS)  # a dtype or a format's key


def weight_split_bytes(cfg: ModelConfig, weights: str) -> tuple[int, int]:
    """(everything but the routed experts, one routed expert of one layer) in bytes, for a plain
    dtype or a deployed format (fp8 and int8 as their W8A8 formats)."""
    expert_count = cfg.n_moe_layers * cfg.n_experts if cfg.is_moe else 0
    fmt = weight_format(weights)
    if fmt is None:
        one = dtype_bytes(P.expert_params(cfg), weights) if expert_count else 0
        return dtype_bytes(P.total_params(cfg), weights) - one * expert_count, one
    if not expert_count:
        return quantized_weights(cfg, fmt).bytes, 0
    matrix = routed_expert_matrix_params(cfg) // expert_count
    one = ceil_div(int(matrix * fmt.bits), 8) + dtype_bytes(P.expert_params(cfg) - matrix, "bf16")
    return quantized_weights(cfg, fmt).bytes - one * expert_count, one


def model_weights_bytes(cfg: ModelConfig, weights: str) -> int:
    """All N parameters in `weights` (a dtype, or a format with its scales and 16-bit tensors):
    sizing.memory's one weight-bytes function, which `memory --inference` and `--engine` use too."""
    return deployed_weights_bytes(cfg, weights)


def weights_step_bytes(
    cfg: ModelConfig,
    context: int,
    batch: int,
    weights: str,
    kv_dtype: str,
    new_tokens: int = 1,
    tp: int = 1,
    mla: str = DEFAULT_MLA_IMPL,
) -> StepBytes:
    """step_bytes for a dtype; for a format, the same parts at the format's widths (the unread
    token-table rows at its embedding width). The KV bytes as step_bytes counts them (the MLA
    implementation `mla`, one rank of tp)."""
    fmt = weight_format(weights)
    if fmt is None:
        return step_bytes(cfg, context, batch, weights, kv_dtype, new_tokens=new_tokens, tp=tp, mla=mla)
    require_int("batch", batch)
    require_int("new_tokens", new_tokens)
    n = batch * new_tokens
    rest, one = weight_split_bytes(cfg, weights)
    unread = ceil_div(int(unread_table_params(cfg, n, new_tokens) * fmt.embedding_bits), 8)
    return StepBytes(
        dense_weight_bytes=rest - unread,
        expert_bytes=one,
        experts_read_per_layer=expected_experts_hit(cfg.n_experts, cfg.top_k, n),
        layers=cfg.n_moe_layers if cfg.is_moe else cfg.n_layers,
        kv_bytes=kv_read_bytes(cfg, context, batch, kv_dtype, mla),
        kv_bytes_per_rank=kv_read_bytes_per_rank(cfg, context, batch, kv_dtype, tp, mla),
    )


def format_note(weights: str, activation_dtype: str) -> str | None:
    """What serving in a format assumes, for the notes."""
    if weights not in FORMATS:
        return plain_dtype_note(weights)
    fmt = weight_format(weights)
    if fmt.weight_only:
        return (
            f"weights {weights} ({float(fmt.bits):g} bits per weight): weight-only, dequantized in the kernel; "
            f"matmuls at the {activation_dtype} peak; dequantization (~2 FLOPs per weight read) not counted"
        )
    return f"weights {weights}: W8A8, the matmuls run at the --activation-dtype peak (fp8 for the full rate)"
