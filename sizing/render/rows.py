"""Render flat rows (sizing.rows) as a table, markdown, CSV (one line per row) or JSON."""

from __future__ import annotations

import json
from typing import Any

from sizing.inputs import GIB, format_si
from sizing.render.tables import csv_text, table

MISSING = "-"


def _hours(v):
    return f"{v:,.0f}"


def _days(v):
    return f"{v:,.1f}"


def _usd(v):
    return f"${v:,.0f}"


def _gib(v):
    return f"{v / GIB:,.1f}"


def _yes(v):
    return "yes" if v else "no"


def _plain(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


FORMATTERS = {
    "params_total": format_si,
    "params_active": format_si,
    "params_non_embedding": format_si,
    "forward_flops_per_token": format_si,
    "training_flops_per_token": format_si,
    "flops_6n_per_token": format_si,
    "decode_flops_per_token": format_si,
    "tokens": format_si,
    "training_flops": lambda v: f"{v:.3e}",
    "training_flops_6n": lambda v: f"{v:.3e}",
    "gpu_hours": _hours,
    "gpu_hours_6n": _hours,
    "days": _days,
    "cost_usd": _usd,
    "inference_memory_bytes": _gib,
    "training_memory_bytes": _gib,
    "inference_fits": _yes,
    "training_fits": _yes,
}

HEADINGS = {
    "params_total": "params",
    "params_active": "active",
    "training_flops_per_token": "train FLOPs/token",
    "training_flops": "train FLOPs",
    "gpu_hours": "GPU-hours",
    "cost_usd": "cost",
    "inference_memory_bytes": "infer GiB",
    "training_memory_bytes": "train GiB/GPU",
    "inference_fits": "infer fits",
    "training_fits": "train fits",
    "training_max_micro_batch": "max micro-batch",
    "seq_len": "T",
}


def cell(column: str, value: Any) -> str:
    if value is None:
        return MISSING
    return FORMATTERS.get(column, _plain)(value)


def render_rows(
    rows: list[dict[str, Any]], fmt: str, view: list[str], notes: list[str], extra: dict[str, Any] | None = None
) -> str:
    """`view`: the columns the text and markdown tables show; CSV and JSON carry every column.
    `notes` are printed under the table (and are the JSON's `notes`)."""
    if fmt == "json":
        return json.dumps({**(extra or {}), "notes": notes, "rows": rows}, indent=2, allow_nan=False) + "\n"
    columns = list(rows[0]) if rows else view
    if fmt == "csv":
        return csv_text(columns, [[r.get(c) if r.get(c) is not None else "" for c in columns] for r in rows])
    body = table([HEADINGS.get(c, c) for c in view], [[cell(c, r.get(c)) for c in view] for r in rows], fmt)
    prefix = "- " if fmt == "markdown" else ""
    return body + "\n\n" + "\n".join(prefix + n for n in notes) + "\n"
