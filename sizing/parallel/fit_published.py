"""The stack overheads fitted to the published runs, and their leave-one-source-out errors: what
tools/fit_step_overheads.py writes into sizing/data/step_time.json ("stack_overhead") and
sizing/data/step_time_cv.json, and what tests/test_step_time_cv.py recomputes to check they are
fresh."""

from __future__ import annotations

from collections import Counter

from sizing.parallel.band import gpu_class
from sizing.parallel.calibration import POOLED, cross_validate, fit_stacks, overhead_for, summarise
from sizing.parallel.published_steps import published_runs
from sizing.parallel.stepdata import stack


def publication(source: str) -> str:
    """The publication a source belongs to (the llm-foundry README's campaigns are one)."""
    return "llm-foundry" if source.startswith("llm-foundry") else source


def observations():
    return [run.observation() for run in published_runs()]


def fitted_overheads(obs=None) -> dict:
    """The "stack_overhead" entry of sizing/data/step_time.json: every fitted value with what it
    was fitted on."""
    obs = observations() if obs is None else obs
    fitted = fit_stacks(obs)
    out = {}
    for key, value in fitted.items():
        if key == POOLED:
            rows = obs
        elif key.startswith("family:"):
            rows = [o for o in obs if f"family:{stack(o.stack).family}" == key]
        else:
            rows = [o for o in obs if o.stack == key]
        sources = Counter(o.source for o in rows)
        out[key] = {
            "overhead": value,
            "runs": len(rows),
            "sources": dict(sorted(sources.items())),
        }
    return out


def cv_rows(obs=None) -> list[dict]:
    """One row per published run: its in-sample error (all sources fitted), its leave-one-source-out
    error and its leave-one-publication-out error."""
    obs = observations() if obs is None else obs
    fitted = fit_stacks(obs)
    by_source = cross_validate(obs)
    by_publication = cross_validate(obs, unit=lambda o: publication(o.source))
    return [
        {
            "name": o.name,
            "source": o.source,
            "stack": o.stack,
            "family": stack(o.stack).family,
            "gpu_class": gpu_class(o.gpu),
            "moe": o.moe,
            "measured_seconds": round(o.measured_seconds, 6),
            "error": round(o.error(overhead_for(fitted, o.stack)), 6),
            "cv_error": round(by_source[o.name], 6),
            "cv_publication_error": round(by_publication[o.name], 6),
        }
        for o in obs
    ]


def cv_summary(rows: list[dict], key: str = "cv_error") -> dict:
    """Per source and overall: rows, median |error|, worst, share predicted too fast."""
    sources = sorted({r["source"] for r in rows})
    out = {s: summarise([r[key] for r in rows if r["source"] == s]).to_dict() for s in sources}
    out["all"] = summarise([r[key] for r in rows]).to_dict()
    return out


def cv_summary_by_kind(rows: list[dict]) -> dict:
    """Dense and mixture-of-experts runs apart: rows, median |CV error|, worst, share too fast."""
    kinds = {"dense": False, "mixture of experts": True}
    return {
        label: summarise([r["cv_error"] for r in rows if r["moe"] == moe]).to_dict() for label, moe in kinds.items()
    }
