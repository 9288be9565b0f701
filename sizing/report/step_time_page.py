"""`reports/step-time.md`: the per-operation step model's cross-validated error per source, its
fitted stack overheads and the constants per GPU; every published run with its error and band
is in reports/published-runs.md (sizing.report.step_runs)."""

from __future__ import annotations

from sizing.parallel import cv_report, fitted_overhead_table, gpu_constants
from sizing.report import cells as fmt
from sizing.report.step_runs import cv_kind_rows, cv_summary_rows

PAGE = "step-time.md"


def _constants_rows() -> list[dict]:
    rows = []
    for key in ("a100-80gb", "h100-sxm"):
        c = gpu_constants(key)
        kernels = ", ".join(f"{name} {k.forward:g}/{k.backward:g}" for name, k in c.attention)
        rows.append(
            {
                "GPU": key,
                "SMs": str(c.sms),
                "GEMM tiles (rows x cols: efficiency)": ", ".join(f"{t[0]}x{t[1]}: {t[2]:g}" for t in c.tiles),
                "GEMM share / K0": ", ".join(f"{d} {f.share:g} / {f.k_overhead:g}" for d, f in c.gemm),
                "GEMM fixed cost": f"{c.gemm_kernel_s * 1e6:g} us",
                "attention fwd/bwd share": kernels + f" (best: {c.best_attention})",
                "exp/s": f"{c.exp_per_second:.3g}",
                "HBM share": f"{c.hbm_fraction:g}",
                "NVLink / network bus share": f"{c.nvlink_fraction:g} / {c.network_fraction:g}",
            }
        )
    return rows


def _overhead_rows() -> list[dict]:
    fitted = fitted_overhead_table()
    return [
        {
            "stack (or family, pooled)": key,
            "overhead on kernel time": f"{v['overhead']:+.3f}",
            "fitted on": f"{v['runs']} runs from {len(v['sources'])} sources: "
            + ", ".join(f"{s} {n}" for s, n in v["sources"].items()),
        }
        for key, v in fitted.items()
    ]


def render_step_time() -> str:
    cv = cv_report()
    overall = cv["summary"]["all"]
    summary = (
        f"{overall['rows']} published runs. Leave-one-source-out (each source's runs predicted with the stack "
        f"overheads fitted without that source): median |error| {fmt.pct(overall['median_abs'])}, worst "
        f"{100 * overall['worst']:+.1f}%, {fmt.pct(overall['too_fast'])} of runs predicted too fast."
    )
    return fmt.document(
        fmt.GENERATED_NOTE,
        "# Step time: how far the per-operation model is from published runs",
        "The per-operation step model of `sizing parallel` (docs/step-time.md): GEMMs by shape, attention by "
        "kernel and sequence, memory-bound work, exposed communication, the pipeline, and one fitted overhead "
        "per software stack. Every run with its error and band: reports/published-runs.md.",
        summary,
        "## Cross-validated error per source",
        fmt.markdown_table(cv_summary_rows(cv["summary"], cv["summary_by_publication"])),
        "## Dense and mixture-of-experts runs apart",
        fmt.markdown_table(cv_kind_rows(cv.get("summary_by_kind", {}))),
        "## The fitted stack overheads (sizing/data/step_time.json, tools/fit_step_overheads.py)",
        fmt.markdown_table(_overhead_rows()),
        "## Constants per GPU (sizing/data/step_time.json, each with its source there and in docs/step-time.md)",
        fmt.markdown_table(_constants_rows()),
    )
