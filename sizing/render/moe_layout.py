"""`sizing serve-layout`: serving layouts (TP, EP + DP attention, TP x PP) side by side."""

from __future__ import annotations

import json

from sizing.inputs import format_gib
from sizing.render.tables import csv_text, heading, table
from sizing.serve import LayoutStep

_LABELS = {"ep-dp": "EP + DP-attention", "tp": "TP"}


def layout_rows(steps: list[LayoutStep]) -> list[list]:
    return [
        [
            _LABELS[s.layout] if s.layout != "tp-pp" else f"TP 8 x PP {s.gpus // 8}",
            s.gpus,
            f"{s.batch:,}",
            format_gib(s.weights_bytes_per_gpu),
            format_gib(s.kv_bytes_per_gpu),
            f"{s.experts_read_per_gpu:.1f}",
            f"{s.seconds * 1e3:.1f} ms",
            f"{s.comm_seconds * 1e3:.1f} ms",
            f"{s.tokens_per_second_per_gpu:,.0f}",
        ]
        for s in steps
    ]


def render_layouts(steps: list[LayoutStep], why: str, fmt: str, title: str) -> str:
    if fmt == "json":
        return json.dumps({"layouts": [s.to_dict() for s in steps], "why": why}, indent=2, allow_nan=False)
    headers = ["layout", "GPUs", "batch", "weights/GPU", "KV/GPU", "experts/GPU/layer", "TPOT", "comm", "tok/s/GPU"]
    if fmt == "csv":
        rows = [step.to_dict() for step in steps]
        return csv_text(list(rows[0]) if rows else ["layout"], [list(r.values()) for r in rows])
    return "\n".join([heading(title, fmt), table(headers, layout_rows(steps), fmt), why])
