"""Communication a training step leaves on the critical path after overlap: the data-parallel
gradient reduction (ZeRO 0-2 buckets, FSDP per unit), the sequence-parallel norm-gradient
all-reduce, DeepSpeed's tied-embedding gradient all-reduce."""

from __future__ import annotations

from sizing.parallel.blocktime import expert_dp_stride, link_for
from sizing.parallel.ops import ACT_BYTES


def sp_norm_grad_seconds(cfg, layout, gpu_key, opts, st, layers: int) -> float:
    """Under sequence parallelism each tp rank sees a slice of the sequence, so the norm weights'
    gradients are partial sums: Megatron all-reduces them over tp once per step, before the
    optimizer (allreduce_layernorm_grads), on the critical path. Bytes: layers x norms x (d, and d
    of bias for LayerNorm) x gradient bytes."""
    if not layout.sequence_parallel:
        return 0.0
    per_norm = cfg.d_model * (2 if cfg.has_norm_bias else 1)
    n_bytes = layers * cfg.norms_per_block * per_norm * st.grad_bytes
    link = link_for(gpu_key, layout.tp, 1, layout.gpus_per_node, opts)
    return link.seconds("all_reduce", n_bytes, layout.tp)


def tied_grad_seconds(cfg, layout, gpu_key, opts, st) -> float:
    """DeepSpeed's pipeline engine all-reduces the tied embedding / lm_head gradient (vocab x d / tp
    per rank) between the first and the last stage after the flush, before the dp reduction
    (deepspeed/runtime/pipe/engine.py, _exec_reduce_tied_grads): exposed."""
    if not (st.tied_grad_allreduce and cfg.tied_embeddings and layout.pp > 1):
        return 0.0
    n_bytes = cfg.padded_vocab * cfg.d_model / layout.tp * st.grad_bytes
    stride = layout.tp * layout.cp * layout.dp * (layout.pp - 1)
    link = link_for(gpu_key, 2, stride, layout.gpus_per_node, opts)
    return link.seconds("all_reduce", n_bytes, 2)


def reduction_seconds(layout, gpu_key, opts, st, trained: float, experts: float) -> float:
    """One gradient reduction of the stage's trained parameters (ZeRO 0: all-reduce; ZeRO >= 1:
    reduce-scatter of the gradients and all-gather of the updated weights): the dense ones over
    the dp x cp ranks (tp apart), the routed experts' over their expert-data-parallel group
    (edp ranks, etp x ep apart: Megatron-Core's expert grid), each its own collectives."""
    return sum(reduction_parts(layout, gpu_key, opts, st, trained, experts))


def reduction_parts(layout, gpu_key, opts, st, trained: float, experts: float) -> tuple[float, float]:
    """reduction_seconds as (gradient reduction, updated-weight all-gather): the gather is 0 at
    ZeRO 0, where the all-reduce is the whole of it."""
    reduce, gather = 0.0, 0.0
    edp = layout.expert_data_parallel
    for count, group, stride in (
        (trained - experts, layout.dp * layout.cp, layout.tp),
        (experts, edp, expert_dp_stride(layout, opts)),
    ):
        if count <= 0 or group <= 1:
            continue
        link = link_for(gpu_key, group, stride, layout.gpus_per_node, opts)
        if layout.zero_stage == 0:
            reduce += link.seconds("all_reduce", count * st.grad_bytes, group)
        else:
            reduce += link.seconds("reduce_scatter", count * st.grad_bytes, group)
            gather += link.seconds("all_gather", count * ACT_BYTES, group)
    return reduce, gather


def dp_exposed_seconds(
    layout,
    gpu_key,
    hw,
    opts,
    st,
    params,
    stage_seconds,
    overlap,
    units: int = 1,
    trained: float | None = None,
    experts: float = 0.0,
) -> float:
    """The data-parallel traffic left on the critical path.

    * ZeRO 0-2 (and FSDP run as ZeRO-2, one gather per step): one gradient reduction per step
      (all-reduce; ZeRO >= 1 a reduce-scatter and a parameter all-gather, the same bytes).
      Overlapped, it runs under the last micro-batch's backward (2/3 of a stage's micro-batch
      time) in buckets: exposed = max(one bucket, traffic - that backward). Not overlapped
      (Megatron-LM 2021): all of it.
    * FSDP (ZeRO-3, resharded after forward): every micro-batch gathers each of the stage's
      `units` (one per block, torch FSDP's wrapping) twice (forward, backward) and
      reduce-scatters its gradients, one collective per unit with its own latency, prefetched
      under that micro-batch's compute: exposed = m x max(0, traffic - compute), plus the first
      unit's gather and the last unit's reduce-scatter, which nothing hides. An FSDP-family
      stack at ZeRO-2 (torch FSDP's SHARD_GRAD_OP) does the same with one gather per unit.
    * Megatron-Core's --overlap-param-gather (the stack's param_gather_overlap): the updated
      weights' all-gather is not waited for after the optimizer but in the next step's forward
      pre-hooks, bucket by bucket, so it hides under the first micro-batch's forward (1/3 of a
      stage's micro-batch) and the reduction alone under the last one's backward.
    * While a collective overlaps compute it runs on `nccl_channels` SMs the GEMMs then lack:
      the overlapped time x channels / SMs is added (sizing/data/step_time.json "nccl_latency").

    `params`: the stage's parameters on this rank; `trained`: those with gradients (LoRA's
    adapters; None: all), of which `experts` are routed experts' (reduced over their own
    expert-data-parallel group, reduction_seconds). FSDP gathers every weight but reduces only
    trained gradients.
    """
    trained = params if trained is None else trained
    group = layout.dp * layout.cp
    if group == 1:
        return 0.0
    link = link_for(gpu_key, group, layout.tp, layout.gpus_per_node, opts)
    grads, weights = trained * st.grad_bytes, params * ACT_BYTES
    steal = hw.consts.nccl_channels / hw.consts.sms  # the SMs a running collective takes from the GEMMs
    per_unit = layout.fsdp is not None or (st.family == "fsdp" and layout.zero_stage == 2)
    if per_unit:  # torch FSDP: one flat parameter per wrapped block; SHARD_GRAD_OP gathers it once
        units = max(1, units)
        gather = link.seconds("all_gather", weights / units, group)
        scatter = link.seconds("reduce_scatter", grads / units, group)
        per = units * ((2 if layout.fsdp is not None else 1) * gather + scatter)
        hidden = layout.micro_batches * min(per, stage_seconds) * steal
        return layout.micro_batches * max(0.0, per - stage_seconds) + gather + scatter + hidden
    reduce, gather = reduction_parts(layout, gpu_key, opts, st, trained, experts)
    if not overlap:
        return reduce + gather
    bucket = link.seconds("all_reduce", min(grads, opts.bucket_params * st.grad_bytes), group)
    return _overlapped_reduction(reduce, gather, bucket, stage_seconds, steal, st.param_gather_overlap)


def _overlapped_reduction(reduce, gather, bucket, stage_seconds, steal, gather_in_forward) -> float:
    """ZeRO 0-2 reduction overlapped in buckets under the last micro-batch's backward (2/3 of a
    stage's micro-batch); with gather_in_forward (--overlap-param-gather) the weight all-gather
    waits in the next step's forward hooks instead, under the first micro-batch's forward."""
    if gather_in_forward:
        hidden = (min(reduce, 2 / 3 * stage_seconds) + min(gather, stage_seconds / 3)) * steal
        exposed = max(bucket, reduce - 2 / 3 * stage_seconds)
        return exposed + max(0.0, gather - stage_seconds / 3) + hidden
    total = reduce + gather
    hidden = min(total, 2 / 3 * stage_seconds) * steal
    return max(bucket, total - 2 / 3 * stage_seconds) + hidden
