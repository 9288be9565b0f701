"""Render a capacity plan (sizing.serve.capacity) as a table, markdown, JSON or CSV:
`sizing serve --rate R --slo-ttft X --slo-tpot Y [--percentile 0.99]`."""

from __future__ import annotations

import json

from sizing.render.serve import format_seconds
from sizing.render.tables import csv_text, heading, table
from sizing.serve import CapacityPlan, CapacityRow


def pct_label(q: float) -> str:
    return f"p{round(q * 100, 3):g}"


def capacity_headers(plan: CapacityPlan) -> list[str]:
    p = pct_label(plan.percentile)
    return [
        "tp x pp",
        "weights",
        "KV",
        "replicas",
        "GPUs",
        "$/M output tokens",
        "max req/s per replica",
        "limited by",
        f"{p} TTFT",
        f"{p} TPOT",
        f"{p} latency",
    ]


CAPACITY_HEADERS = capacity_headers  # kept for the report page


def capacity_rows(plan: CapacityPlan, limit: int | None = None) -> list[list[str]]:
    return [_row(r, plan.percentile) for r in plan.feasible[:limit]]


def _row(r: CapacityRow, q: float) -> list[str]:
    at, unsolved = r.load, "-"  # unsolved: a --verdict-only row (whether the layout serves, not how much)
    return [
        f"{r.tp} x {r.pp}",
        r.weight_dtype,
        r.kv_dtype,
        unsolved if r.replicas is None else str(r.replicas),
        str(r.gpus),
        unsolved if r.usd_per_million_output_tokens is None else f"${r.usd_per_million_output_tokens:,.4g}",
        unsolved if r.limit.max_rate is None else f"{r.limit.max_rate:,.3g}",
        r.binding or "",
        *(unsolved if at is None else format_seconds(getattr(at, k)[q]) for k in ("ttft", "tpot", "e2e")),
    ]


def capacity_heading(plan: CapacityPlan) -> str:
    p = pct_label(plan.percentile)
    slos = ", ".join(
        f"{p} {name} <= {format_seconds(v)}"
        for name, v in (("TTFT", plan.slo_ttft_seconds), ("TPOT", plan.slo_tpot_seconds))
        if v is not None
    )
    return f"Capacity for {plan.model or 'model'} on {plan.gpu}: {plan.rate:g} requests/s of {plan.mix.describe()}" + (
        f", {slos}" if slos else ""
    )


def answer_line(plan: CapacityPlan) -> str:
    best = plan.best
    if best is None:
        return "no layout meets the SLOs: " + "; ".join(_rejections(plan)[:3])
    if best.replicas is None:  # --verdict-only: the first layout that serves the rate, not sized
        return f"answer: tp {best.tp}, {best.weight_dtype} weights, {best.kv_dtype} KV serve the rate (verdict only)"
    at, p = best.load, pct_label(plan.percentile)
    return (
        f"answer: {best.replicas} replica(s) x (tp {best.tp}, pp {best.pp}), {best.weight_dtype} weights, "
        f"{best.kv_dtype} KV = {best.gpus} GPUs, ${best.usd_per_million_output_tokens:,.4g}/M output tokens "
        f"at ${plan.price_per_gpu_hour:g}/GPU-h; at {at.rate:.3g} requests/s per replica: {p} TTFT "
        f"{format_seconds(at.ttft[plan.percentile])}, {p} TPOT {format_seconds(at.tpot[plan.percentile])}"
    )


def _rejections(plan: CapacityPlan) -> list[str]:
    """One line per distinct reason a layout is out (not the ones left unsolved by the bound)."""
    seen, out = set(), []
    for r in plan.rejected:
        if r.binding == "bound" or r.why_not in seen:
            continue
        seen.add(r.why_not)
        out.append(f"tp {r.tp}, {r.weight_dtype} weights, {r.kv_dtype} KV: {r.binding}: {r.why_not}")
    return out


def latency_lines(plan: CapacityPlan) -> list[str]:
    best = plan.best
    if best is None or best.load is None:  # none, or a --verdict-only row (no load solved)
        return []
    at = best.load
    rows = [
        [name, *(format_seconds(getattr(at, key)[q]) for q in sorted(at.ttft))]
        for name, key in (("TTFT", "ttft"), ("TPOT", "tpot"), ("end-to-end", "e2e"))
    ]
    head = ["at the answer's load", *(pct_label(q) for q in sorted(at.ttft))]
    extra = (
        f"{at.rate:.3g} requests/s per replica, {at.state.decoding:.1f} sequences decoding on average, "
        f"prefilling {at.state.utilization:.0%} of the time, {at.output_tokens_per_second:,.0f} output tokens/s "
        f"per replica ({at.output_tokens_per_second / best.tp:,.0f} per GPU)"
    )
    if at.slo_attainment is not None:
        extra += (
            f"; {at.slo_attainment:.2%} of requests meet the SLOs (goodput {at.goodput:.3g} requests/s per replica)"
        )
    return [table(head, rows, "table"), extra]


def render_capacity(plan: CapacityPlan, fmt: str = "table", limit: int = 12) -> str:
    if fmt == "json":
        return json.dumps(plan.to_dict(), indent=2, allow_nan=False)
    if fmt == "csv":
        return csv_text(capacity_headers(plan), capacity_rows(plan))
    lines = [heading(capacity_heading(plan), fmt), table(capacity_headers(plan), capacity_rows(plan, limit), fmt), ""]
    lines += [answer_line(plan), *latency_lines(plan)]
    lines += [f"out: {line}" for line in _rejections(plan)]
    lines.append(
        "note: continuous batching with chunked prefill, Poisson arrivals; latency percentiles from the load model "
        "(sizing/serve/load.py: prefill rounds and the decoding population), checked against a step-level "
        "simulation in the tests; pp is 1 (pipeline parallelism is not modelled)"
    )
    if plan.efficiency_note:
        lines.append(f"note: {plan.efficiency_note}")
    return "\n".join(lines)
