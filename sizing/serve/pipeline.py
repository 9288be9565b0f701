"""Pipeline-parallel serving across nodes: tp GPUs per stage inside a node, pp stages over
nodes, one decode step of the whole model per token.

* Stage: ceil(L / pp) consecutive layers (the largest stage sets the pace) with the larger of
  the token table and the lm_head (the first and last stages hold them), split over tp.
* Micro-batches: pp micro-batches of b sequences are in flight so every stage is busy; a stage
  holds the KV cache of its layers for all pp·b sequences.
* Stage time (one micro-batch through one stage) = max(compute, memory) of its layers for b
  tokens + the TP all-reduces of those layers (NVLink) + sending b·d activations to the next
  stage (the network link).
* Time per output token = pp x stage time (a token passes every stage in turn); tokens/s over
  the tp·pp GPUs = b / stage time (the pipeline emits one micro-batch per stage time).
"""

from __future__ import annotations

from sizing.formulas import params as P
from sizing.inputs import GPU, ModelConfig
from sizing.memory import dtype_bytes, kv_cache_bytes
from sizing.serve.roofline import (
    compute_seconds,
    memory_seconds,
    tp_allreduce_latency_seconds,
    tp_allreduces_per_layer,
    tp_ring_allreduce_seconds,
)
from sizing.serve.work import decode_step_flops, expected_experts_hit
from sizing.vocabulary import ceil_div


def stage_layers(n_layers: int, pp: int) -> int:
    return ceil_div(n_layers, pp)


def pipeline_stage(
    cfg: ModelConfig,
    gpu: GPU,
    context: int,
    split: tuple[int, int],
    kv_dtype: str,
    tp: int,
    pp: int,
    micro_batch: int,
    efficiencies: tuple[float, float],
) -> dict:
    """Per GPU of the largest stage: bytes held, KV held, and the stage's compute, memory and
    communication seconds for one micro-batch. `split` = (all but the routed experts, one
    routed expert) in bytes (moe_layout.weight_split_bytes)."""
    rest, one = split
    compute_eff, bandwidth_eff = efficiencies
    layers = stage_layers(cfg.n_layers, pp)
    share = layers / cfg.n_layers
    table = max(P.token_embedding_params(cfg), P.lm_head_params(cfg)) * rest // P.total_params(cfg)
    blocks = (rest - table) * share  # the stage's share of the non-expert block weights (bytes)
    moe_layers = cfg.n_moe_layers * share
    held = ceil_div(int(blocks + table + one * cfg.n_experts * moe_layers), tp)
    hit = expected_experts_hit(cfg.n_experts, cfg.top_k, micro_batch) if cfg.is_moe else 0.0
    read = (blocks + table + one * hit * moe_layers) / tp
    kv_share = ceil_div(cfg.kv_heads, tp) / cfg.kv_heads if not cfg.is_mla else 1.0
    kv_in_flight = int(kv_cache_bytes(cfg, context, pp * micro_batch, kv_dtype) * share * kv_share)
    kv_read = kv_cache_bytes(cfg, context, micro_batch, kv_dtype) * share * kv_share
    a = dtype_bytes(1, "bf16")
    link = gpu.nvlink_gbs * 1e9 * bandwidth_eff
    comm = layers * tp_allreduces_per_layer(cfg.parallel_block)
    ring = tp_ring_allreduce_seconds(micro_batch * cfg.d_model * a, tp, link, 1.0)
    comm *= ring + tp_allreduce_latency_seconds(tp) if tp > 1 else 0.0  # as the serving step model's
    send = micro_batch * cfg.d_model * a / (gpu.network_gbs * 1e9 * bandwidth_eff) if pp > 1 else 0.0
    flops = decode_step_flops(cfg, context, micro_batch) * share / tp
    return {
        "weights": held,
        "kv": kv_in_flight,
        "compute": compute_seconds(flops, gpu.peak_flops_per_second("bf16"), compute_eff),
        "memory": memory_seconds(read + kv_read, gpu.hbm_bytes_per_second, bandwidth_eff),
        "comm": comm + send,
        "experts_read": hit * (1 if cfg.is_moe else 0),
    }
