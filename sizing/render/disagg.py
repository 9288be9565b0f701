"""Render disaggregated serving (sizing.serve.disagg) beside the co-located capacity plan:
`sizing serve --rate R --disaggregated`."""

from __future__ import annotations

import json

from sizing.render.capacity import render_capacity
from sizing.render.tables import csv_text, table
from sizing.serve import CapacityPlan, DisaggPlan

HEADERS = ["pool", "tp", "weights", "KV", "instances", "GPUs", "max req/s per instance"]


def disagg_rows(split: DisaggPlan) -> list[list[str]]:
    return [
        [p.role, str(p.tp), p.weight_dtype, p.kv_dtype, str(p.instances), str(p.gpus), f"{p.max_rate:,.3g}"]
        for p in (split.prefill, split.decode)
        if p is not None
    ]


def comparison_line(plan: CapacityPlan, split: DisaggPlan) -> str:
    best = plan.best
    if split.gpus is None:
        reasons = "; ".join(f"{p.role} tp {p.tp}: {p.why_not}" for p in split.rejected[:3])
        return "disaggregated: no pair of pools meets the SLOs" + (f" ({reasons})" if reasons else "")
    ratio = f"P:D = {split.prefill.gpus}:{split.decode.gpus} GPUs"
    head = f"disaggregated: {split.gpus} GPUs ({ratio}, KV over {split.link})"
    if best is None:
        return f"{head}; co-located: no layout meets the SLOs"
    co_per_gpu = best.limit.max_rate / best.tp
    verdict = (
        "fewer GPUs disaggregated"
        if split.gpus < best.gpus
        else "the same GPUs"
        if split.gpus == best.gpus
        else "fewer GPUs co-located"
    )
    return (
        f"{head} against {best.gpus} co-located: {verdict}; per GPU {split.requests_per_second_per_gpu:.3g} "
        f"requests/s within the SLOs disaggregated, {co_per_gpu:.3g} co-located (tp {best.tp}, "
        f"{best.weight_dtype} weights)"
    )


def render_disaggregated(plan: CapacityPlan, split: DisaggPlan, fmt: str = "table") -> str:
    if fmt == "json":
        return json.dumps({**plan.to_dict(), "disaggregated": split.to_dict()}, indent=2, allow_nan=False)
    if fmt == "csv":
        return csv_text(HEADERS, disagg_rows(split))
    return "\n".join(
        [
            render_capacity(plan, fmt),
            "",
            table(HEADERS, disagg_rows(split), fmt),
            comparison_line(plan, split),
            "note: disaggregated: each prompt's KV cache crosses the link after its prefill (every rank its shard, "
            "not overlapped), and the first token reaches the user from the decode pool; decode instances run no "
            "prefill (DistServe, Splitwise)",
        ]
    )
