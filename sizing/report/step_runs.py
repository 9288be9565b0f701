"""The per-operation step model against published runs, as tables for reports/published-runs.md
and reports/step-time.md: the cross-validated error per source and overall, and every run with
its error, its leave-one-source-out error and the band a prediction of its kind carries."""

from __future__ import annotations

from sizing.parallel import error_rows
from sizing.report import cells as fmt

CONVENTIONS = {
    "narayanan-hfu": "TFLOP/s by 96Bslh²(1+s/6h+V/16lh): counts the recompute forward",
    "time": "iteration time as published",
    "model": "MFU with model FLOPs (no recompute): the step it implies",
    "tokens": "tokens/s per GPU as logged (or GPU-hours per token)",
    "megatron-mfu": "MFU with Megatron-LM's FLOP count (2025): the step it implies",
    "megatron-2024-tflops": "TFLOP/s by Megatron-LM's FLOP count (July 2024: attention counted full)",
}


def _pct(x: float | None) -> str:
    return "" if x is None else f"{100 * x:+.1f}%"


def cv_summary_rows(summary: dict, by_publication: dict) -> list[dict]:
    """One row per source and one for all: rows, in-sample-free (cross-validated) median |error|,
    worst, share predicted too fast, and the same leaving out the whole publication."""
    out = []
    for source, s in summary.items():
        p = by_publication.get(source, s)
        out.append(
            {
                "source": source,
                "runs": str(s["rows"]),
                "CV median abs. error": fmt.pct(s["median_abs"]),
                "CV worst": _pct(s["worst"]),
                "predicted too fast": fmt.pct(s["too_fast"]),
                "leaving its publication out: median / worst": f"{fmt.pct(p['median_abs'])} / {_pct(p['worst'])}",
            }
        )
    return out


def cv_kind_rows(by_kind: dict) -> list[dict]:
    """Dense and mixture-of-experts runs apart: runs, cross-validated median |error|, worst, too fast."""
    return [
        {
            "kind": kind,
            "runs": str(s["rows"]),
            "CV median abs. error": fmt.pct(s["median_abs"]),
            "CV worst": _pct(s["worst"]),
            "predicted too fast": fmt.pct(s["too_fast"]),
        }
        for kind, s in by_kind.items()
    ]


def run_rows(rows: list[dict] | None = None) -> list[dict]:
    """Every published run: measured and predicted step, error, CV error, band, convention, source."""
    out = []
    for r in error_rows() if rows is None else rows:
        band = r["band"]
        measured = f"{r['measured_step_seconds']:.3g} s"
        if "published_mfu" in r:
            measured += f" (MFU {fmt.pct(r['published_mfu'])})"
        predicted = f"{r['predicted_step_seconds']:.3g} s"
        if "published_days" in r:
            measured += f" ({r['published_days']:g} d)"
            predicted += f" ({r['predicted_days']:.1f} d)"
        lo, hi = band["low_seconds"], band["high_seconds"]
        coverage = f"±{fmt.pct(band['typical_error'])}, {band['runs']} runs" if band["covered"] else "no neighbours"
        out.append(
            {
                "run": r["name"],
                "GPU": r["gpu"],
                "layout": r["layout"],
                "recompute": r["recompute"],
                "stack": r["stack"],
                "measured": measured,
                "predicted": predicted,
                "error": _pct(r["error"]),
                "CV error": _pct(r["cv_error"]),
                "band": f"{lo:.3g}-{hi:.3g} s ({coverage})",
                "convention": CONVENTIONS[r["convention"]],
                "source": r["source"],
            }
        )
    return out
