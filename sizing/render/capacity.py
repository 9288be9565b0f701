"""Render a capacity plan (sizing.serve.capacity) as a table, markdown, JSON or CSV:
`sizing serve --rate R --slo-ttft X --slo-tpot Y`."""

from __future__ import annotations

import json

from sizing.render.serve import format_seconds
from sizing.render.tables import csv_text, heading, table
from sizing.serve import CapacityPlan, CapacityRow

CAPACITY_HEADERS = [
    "tp x pp",
    "weights",
    "KV",
    "replicas",
    "GPUs",
    "$/M output tokens",
    "concurrency per replica",
    "requests/s per replica",
    "TTFT",
    "TPOT",
]


def capacity_rows(plan: CapacityPlan, limit: int | None = None) -> list[list[str]]:
    return [_row(r) for r in plan.feasible[:limit]]


def _row(r: CapacityRow) -> list[str]:
    p = r.point
    return [
        f"{r.tp} x {r.pp}",
        r.weight_dtype,
        r.kv_dtype,
        str(r.replicas),
        str(r.gpus),
        f"${r.usd_per_million_output_tokens:,.4g}",
        str(p.concurrency),
        f"{p.requests_per_second:,.3g}",
        format_seconds(p.ttft_seconds),
        format_seconds(p.tpot_seconds),
    ]


def capacity_heading(plan: CapacityPlan) -> str:
    slos = ", ".join(
        f"{name} <= {format_seconds(v)}"
        for name, v in (("TTFT", plan.slo_ttft_seconds), ("TPOT", plan.slo_tpot_seconds))
        if v is not None
    )
    return (
        f"Capacity for {plan.model or 'model'} on {plan.gpu}: {plan.rate:g} requests/s of {plan.prompt} in / "
        f"{plan.output} out" + (f", {slos}" if slos else "")
    )


def answer_line(plan: CapacityPlan) -> str:
    best = plan.best
    if best is None:
        return "no layout of the search meets the SLOs (see the rejected layouts in --format json)"
    return (
        f"answer: {best.replicas} replica(s) x (tp {best.tp}, pp {best.pp}), {best.weight_dtype} weights, "
        f"{best.kv_dtype} KV = {best.gpus} GPUs, ${best.usd_per_million_output_tokens:,.4g}/M output tokens "
        f"at ${plan.price_per_gpu_hour:g}/GPU-h"
    )


def render_capacity(plan: CapacityPlan, fmt: str = "table", limit: int = 12) -> str:
    if fmt == "json":
        return json.dumps(plan.to_dict(), indent=2, allow_nan=False)
    if fmt == "csv":
        return csv_text(CAPACITY_HEADERS, capacity_rows(plan))
    return "\n".join(
        [
            heading(capacity_heading(plan), fmt),
            table(CAPACITY_HEADERS, capacity_rows(plan, limit), fmt),
            "",
            answer_line(plan),
            "note: continuous batching with chunked prefill (sizing/serve/batching.py), each replica at its goodput "
            "under the SLOs; pp is 1 (pipeline parallelism is not modelled); matmuls in bf16",
        ]
    )
