"""Render sizing.parallel results: one plan (memory term by term, collectives, step time) or a
search answer (the layout found, or a clear no with what would fit), as a table, markdown,
JSON or CSV."""

from __future__ import annotations

import json

from sizing.inputs import format_gib, format_int
from sizing.parallel import GPU_TERMS, ParallelPlan
from sizing.render.memory import flat_items
from sizing.render.tables import csv_text, heading, table

TERM_LABELS = {
    "base_weights_bytes": "frozen base weights (LoRA/QLoRA)",
    "weights_bytes": "weights (trained)",
    "fp8_weight_copies_bytes": "fp8 weight copies (Transformer Engine)",
    "gradients_bytes": "gradients",
    "optimizer_bytes": "optimizer states (master + moments)",
    "gathered_unit_bytes": "ZeRO-3/FSDP gathered unit",
    "activations_blocks_bytes": "activations: blocks x in-flight micro-batches",
    "activations_embedding_bytes": "activations: embedding (first stage)",
    "activations_head_loss_bytes": "activations: lm_head + loss (last stage)",
    "activations_shared_bytes": "activations: RoPE tables",
    "logits_bytes": "logits + their gradient (last stage)",
    "recompute_block_bytes": "recomputed block (working set)",
    "dualpipe_mirror_states_bytes": "DualPipe mirror stage: model states (2nd parameter copy)",
    "dualpipe_mirror_activations_bytes": "DualPipe mirror stage: activations in flight",
}


COMM_HEADERS = ["dim", "collective", "what", "calls", "bytes per call", "ranks", "GiB sent", "link GB/s", "seconds"]


def _seconds(value: float) -> str:
    return f"{value:.4f}"


def plan_sections(plan: ParallelPlan, fmt: str) -> list[str]:
    lay = plan.layout
    title = (
        f"{plan.model}: {lay.label()} = {lay.world} x {plan.gpu.key}, T = {plan.work.seq_len}, "
        f"global batch {lay.global_batch()} (b {lay.micro_batch} x m {lay.micro_batches} x dp {lay.dp}), "
        f"{plan.work.precision} {plan.work.optimizer}, recompute {plan.work.recompute}"
    )
    rows = memory_rows(plan)
    comm_rows = [
        [
            c.dimension,
            c.kind,
            c.what,
            format_int(c.count),
            format_int(c.bytes_per_call),
            format_int(c.group),
            format_gib(c.wire_bytes_per_step),
            f"{c.link} {c.gbs:g}",
            _seconds(c.seconds_per_step),
        ]
        for c in plan.collectives
    ]
    step_rows = _predicted_rows(plan) if plan.predicted is not None else _constant_rows(plan)
    step_rows += _run_rows(plan)
    verdict = memory_verdict_line(plan)
    stack = f"memory as {plan.work.stack} stores it (sizing/parallel/memory_stack.py)" if plan.work.stack else ""
    return [
        heading(title, fmt, 2),
        "",
        table([f"per GPU (pipeline stage {plan.stage})", "GiB", "bytes"], rows, fmt),
        "",
        heading("Communication per GPU per step", fmt, 3),
        "",
        table(COMM_HEADERS, comm_rows, fmt) if comm_rows else "none (one GPU)",
        "",
        heading(f"Step time ({plan.step_model} model)", fmt, 3),
        "",
        table(["part", "seconds"], step_rows, fmt),
        "",
        verdict,
        *[f"note: {line}" for line in model_notes(plan.config)],
        *([f"note: {stack}"] if stack else []),
        *[f"note: not modelled: {line}" for line in plan.not_modelled],
        *([f"note: assumed: {line}" for line in plan.predicted.assumptions] if plan.predicted is not None else []),
        f"note: {plan.mfu_meaning}",
    ]


def memory_rows(plan: ParallelPlan) -> list[list[str]]:
    """The most-loaded GPU's bytes term by term, the runtime reserve and the GPU's memory."""
    t = plan.terms
    rows = [[TERM_LABELS[k], format_gib(t[k]), format_int(t[k])] for k in GPU_TERMS if t[k]]
    rows.append(["total per GPU", format_gib(t["total_bytes"]), format_int(t["total_bytes"])])
    reserve = plan.runtime_reserve.total_bytes  # CUDA context + NCCL (sizing.memory.runtime)
    rows.append(["runtime reserve (CUDA context, NCCL; not tensors)", format_gib(reserve), format_int(reserve)])
    rows.append([f"{plan.gpu.key} memory", format_gib(plan.gpu_memory_bytes), format_int(plan.gpu_memory_bytes)])
    if t["cpu_total_bytes"]:
        what = "in CPU memory (offloaded states, EMA)" if t["cpu_ema_bytes"] else "offloaded to CPU memory"
        rows.append([what, format_gib(t["cpu_total_bytes"]), format_int(t["cpu_total_bytes"])])
    return rows


def memory_verdict_line(plan: ParallelPlan) -> str:
    return (
        f"{plan.memory_verdict.describe()}: {format_gib(plan.per_gpu_bytes)} on the most-loaded GPU (pipeline stage "
        f"{plan.stage}) of {format_gib(plan.gpu_memory_bytes)} less the runtime reserve "
        f"{format_gib(plan.runtime_reserve.total_bytes)}"
    )


def layout_memory_text(plan: ParallelPlan, fmt: str) -> str:
    """The training memory of `sizing estimate --gpus N`: the assumed layout's most-loaded GPU."""
    lay, w = plan.layout, plan.work
    title = (
        f"Training memory per GPU: {lay.label()} = {lay.world} x {plan.gpu.key} (the layout assumed above), "
        f"global batch {lay.global_batch()} (b {lay.micro_batch}), T = {w.seq_len}, {w.precision} {w.optimizer}, "
        f"recompute {w.recompute}"
    )
    rows = memory_rows(plan)
    return "\n".join(
        [heading(title, fmt), table([f"per GPU (pipeline stage {plan.stage})", "GiB", "bytes"], rows, fmt)]
        + [memory_verdict_line(plan)]
    )


def model_notes(cfg) -> list[str]:
    """What a hybrid's or a vision-language model's plan holds beyond a stack's (sizing.parallel)."""
    from sizing.hybrid import hybrid_of
    from sizing.vision import vision_of

    m, vision = hybrid_of(cfg), vision_of(cfg)
    if m is not None:
        return [
            f"hybrid: {m.count(mixer='attention')} attention layers of {cfg.n_layers}; the state mixers' tensors "
            "split over tp as Megatron-Core and vLLM shard them, their saved activations per layer kind "
            "(sizing.hybrid.activations), their scans timed as batched matmuls"
        ]
    if vision is not None:
        h, w = cfg.image_size
        return [
            f"vision-language: the tower and projector on the first stage, split over tp (Megatron-Core's LLaVA); "
            f"{cfg.images} image(s) of {h}x{w} per sequence ({cfg.image_tokens:,} image tokens), the tower's "
            "activations in the first stage's embedding row"
        ]
    return []


STEP_PARTS = {
    "gemm": "GEMMs (per-rank shapes, tile/wave quantization)",
    "attention": "attention kernels",
    "memory": "memory-bound ops (norms, activations, residuals, loss, grad accumulation)",
    "recompute": "recomputed forward",
    "tp": "tp collectives (critical path)",
    "cp": "cp ring not hidden under attention",
    "ep": "ep all-to-all (critical path)",
    "pp": "pp sends (critical path)",
    "bubble": "pipeline bubble (fill and drain)",
    "dp": "dp gradient reduction exposed",
    "optimizer": "optimizer step",
    "overhead": "stack overhead on kernel time (fitted per stack)",
}


def _run_rows(plan: ParallelPlan) -> list[list[str]]:
    """GPU-hours and days for the run's tokens, each with the step's band."""
    if plan.gpu_hours is None:
        return []
    band, world = plan.gpu_hours_band, plan.layout.world
    hours = f"{plan.gpu_hours:,.0f}" + (f" ({band[0]:,.0f}-{band[1]:,.0f})" if band else "")
    days = f"{plan.gpu_hours / world / 24:,.1f}"
    if band:
        days += f" ({band[0] / world / 24:,.1f}-{band[1] / world / 24:,.1f})"
    return [[f"GPU-hours for {plan.tokens:,} tokens", hours], ["days", days]]


def _predicted_rows(plan: ParallelPlan) -> list[list[str]]:
    pred = plan.predicted
    rows = [[STEP_PARTS[k], _seconds(s)] for k, s in pred.seconds.items() if s]
    rows.append(["step (slowest stage x m + fill/drain + dp + optimizer + overhead)", _seconds(pred.step_seconds)])
    if pred.band is not None:
        rows.append(["step band (cross-validated on published runs)", pred.band.text(pred.step_seconds)])
    mfu = f"{pred.mfu:.1%}"
    if pred.band is not None:
        lo, hi = pred.band.scaled(pred.mfu, inverse=True)
        mfu += f" ({lo:.1%}-{hi:.1%})"
    rows.append(["MFU (model FLOPs, causal attention / step / bf16 peak)", mfu])
    rows.append(["HFU (with recomputation)", f"{pred.hfu:.1%}"])
    rows.append(["tokens/s per GPU", f"{pred.tokens_per_second_per_gpu:,.0f}"])
    if len(set(pred.stage_layers)) > 1:
        rows.append(["layers per stage", ",".join(map(str, pred.stage_layers))])
    return rows


def _constant_rows(plan: ParallelPlan) -> list[list[str]]:
    st = plan.step
    label = f"compute (hardware FLOPs at a constant efficiency {st.mfu:g} of peak)"
    if plan.whole_run_mfu is not None:
        label = f"step (model FLOPs at a whole-run MFU {plan.whole_run_mfu:g}; comms and bubble inside it)"
    step_rows = [[label, _seconds(st.compute_seconds)]]
    for dim, sec in st.comm_seconds.items():
        if sec:
            step_rows.append(
                [
                    f"{dim} communication exposed (overlap {st.overlap[dim]:g} of {sec:.4f} s)",
                    _seconds(st.exposed_seconds[dim]),
                ]
            )
    if st.bubble_seconds:
        step_rows.append(["pipeline bubble (p - 1)/(m v) x compute", _seconds(st.bubble_seconds)])
    step_rows.append(["step", _seconds(st.step_seconds)])
    step_rows.append(["predicted MFU (model FLOPs / step / peak)", f"{st.predicted_mfu:.1%}"])
    return step_rows


def render_parallel_plan(plan: ParallelPlan, fmt: str = "table") -> str:
    if fmt == "json":
        return json.dumps(plan.to_dict(), indent=2, allow_nan=False)
    if fmt == "csv":
        return csv_text(["key", "value"], [list(item) for item in flat_items(plan)])
    return "\n".join(plan_sections(plan, fmt))


def _alternative_dict(label: str, plan: ParallelPlan) -> dict:
    return {
        "what": label,
        "layout": plan.layout.label(),
        "recompute": plan.work.recompute,
        "precision": plan.work.precision,
        "optimizer": plan.work.optimizer,
        "gpus": plan.layout.world,
        "per_gpu_bytes": plan.per_gpu_bytes,
        "step_seconds": plan.step_seconds,
        "not_modelled": list(plan.not_modelled),
    }


def render_no_fit(
    model: str, gpus: tuple[int, ...], gpu: str, alternatives: list[tuple[str, ParallelPlan]], fmt: str
) -> str:
    """The clear no: no layout of the searched GPU counts fits; what would."""
    where = f"{gpus[0]} x {gpu}" if len(gpus) == 1 else f"up to {gpus[-1]} x {gpu}"
    message = f"{model}: no layout on {where} fits (searched dp/ZeRO/FSDP x tp x pp x cp, recompute modes)"
    if fmt == "json":
        doc = {"model": model, "fits": False, "gpus_searched": list(gpus), "gpu": gpu, "reason": message}
        doc["would_fit"] = [_alternative_dict(label, p) for label, p in alternatives]
        return json.dumps(doc, indent=2, allow_nan=False)
    rows = [
        [label, p.layout.label(), p.work.recompute, format_gib(p.per_gpu_bytes), _seconds(p.step_seconds)]
        for label, p in alternatives
    ]
    if fmt == "csv":
        return csv_text(["would fit", "layout", "recompute", "GiB per GPU", "step seconds"], rows)
    out = [heading(message, fmt, 2), ""]
    if rows:
        out += ["would fit:", "", table(["with", "layout", "recompute", "GiB per GPU", "step s"], rows, fmt)]
    else:
        out.append("nothing in this tool's range fits")
    notes = dict.fromkeys(line for _, p in alternatives for line in p.not_modelled)
    out += [f"note: not modelled: {line}" for line in notes]
    return "\n".join(out)
