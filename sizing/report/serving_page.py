"""`reports/serving.md`: sizing serve for a few presets, the published measurements beside the
roofline bound, the roofline and tokens/s plots, and the GPU measurement (or "not yet
measured")."""

from __future__ import annotations

import json
from pathlib import Path

from sizing.report import cells as fmt
from sizing.report.plots import Plot
from sizing.report.serving_capacity import CAPACITY_GPU, CAPACITY_MODEL, RATE, calibration_section, capacity_section
from sizing.report.serving_checks import all_rows_summary, checkpoint_section, engine_log_section
from sizing.serve import (
    MEASURED_FILE,
    MEASURED_HEADERS,
    PUBLISHED_SERVING,
    SERVE_BENCH,
    bound_for,
    measured_rows,
    serve,
)

GPU = "h100-sxm"
PROMPT, OUTPUT = 1024, 256
BATCHES = (1, 8, 64, 256)
# (preset, tp): a dense 7B on one GPU, a GQA 70B over 4, an MoE over 2
SERVE_PRESETS = (("llama2-7b", 1), ("llama2-70b", 4), ("mixtral-8x7b", 2))


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.2f} ms"


def preset_rows() -> list[dict]:
    rows = []
    for name, tp in SERVE_PRESETS:
        for b in BATCHES:
            est = serve(name, PROMPT, OUTPUT, b, GPU, tp=tp)
            bound = serve(name, PROMPT, OUTPUT, b, GPU, tp=tp, compute_efficiency=1.0, bandwidth_efficiency=1.0)
            rows.append(
                {
                    "model": name,
                    "tp": str(tp),
                    "batch": str(b),
                    "TTFT": _ms(est.ttft_seconds),
                    "time per output token": _ms(est.tpot_seconds),
                    "decode bound": est.decode_bound,
                    "tokens/s per GPU": f"{est.decode_tokens_per_second_per_gpu:,.0f}",
                    "tokens/s per GPU, bound": f"{bound.decode_tokens_per_second_per_gpu:,.0f}",
                    "$/M output": f"{est.usd_per_million_output_tokens:,.3f}",
                    "$/M input": f"{est.usd_per_million_input_tokens:,.4f}",
                    "fits": "yes" if est.fits else f"no (max {est.max_batch or 0})",
                }
            )
    return rows


def published_rows() -> list[dict]:
    rows = []
    for r in PUBLISHED_SERVING:
        bound = bound_for(r)
        rows.append(
            {
                "model": r.preset,
                "GPU": r.gpu,
                "dtype": r.dtype,
                "batch": str(r.batch),
                "tp": str(r.tp),
                "prompt / output": f"{r.prompt} / {r.output}",
                "metric": r.metric,
                "published": f"{r.value:,}",
                "roofline bound": f"{bound:,.1f}" if bound < 100 else f"{bound:,.0f}",
                "published / bound": f"{r.value / bound:.2f}",
            }
        )
    return rows


def measured_section(existing_dir: Path | None) -> str:
    path = None if existing_dir is None else Path(existing_dir) / MEASURED_FILE
    plan = SERVE_BENCH
    what = (
        f"`benchmarks/gpu_profile.sh` times `generate()` of the reference model in the shape of the planned run "
        f"`{plan.run}` (Llama-3.2-1B: GQA, tied, vocab 128,256), {plan.dtype}, eager, prompt {plan.prompt}, "
        f"{plan.output} output tokens, batch {', '.join(map(str, plan.batches))} "
        f"(`reference_model/profile/serve_bench.py`), and commits its JSON as `reports/{MEASURED_FILE}`."
    )
    if path is None or not path.is_file():
        return f"{what}\n\n**Not yet measured**: no GPU session has run it. Nothing below is a measurement."
    measured = json.loads(path.read_text())
    if measured.get("functional_test_only") or not measured.get("gpu"):
        return f"{what}\n\n**Not yet measured**: `{MEASURED_FILE}` holds a functional test (CPU or toy size)."
    env = measured.get("environment", {})
    ok = [p for p in measured["points"] if "error" not in p]
    failed = [f"batch {p['batch']}: {p['error']}" for p in measured["points"] if "error" in p]
    table = fmt.markdown_table(
        [dict(zip(MEASURED_HEADERS, row, strict=True)) for row in measured_rows({**measured, "points": ok})]
    )
    return "\n\n".join(
        [
            what,
            f"Measured on {env.get('device_name', measured['gpu'])} (torch {env.get('torch', '?')}). "
            "Bound: `sizing serve` at efficiencies 1; estimate: at the default efficiencies. A ratio of "
            "measured tokens/s to the bound below 1 is the share of the roofline the eager reference model reached.",
            table,
            *failed,
        ]
    )


def render_serving(plots: list[Plot], existing_dir: Path | None = None, load_section: str = "") -> str:
    plot_parts = []
    for plot in plots:
        plot_parts += [f"### {plot.title}", f"![{plot.title}]({plot.path})\n\n{plot.note}"]
    return fmt.document(
        fmt.GENERATED_NOTE,
        "# Serving on the roofline",
        "What `sizing serve` predicts ([docs/serving.md](../docs/serving.md)): time to first token, time per "
        "output token, tokens/s and $ per million tokens from the exact FLOPs and bytes of a prefill and of each "
        "decode step, at the default efficiencies (calibrated per GPU type against the published rows below; $2 per "
        "GPU-hour) and, as the bound, at efficiencies 1 and no engine overhead.",
        f"## Three presets on an {GPU}",
        f"bf16 weights, KV cache and matmuls; prompt {PROMPT}, output {OUTPUT}; static batch; prefill counted "
        "causal. Tokens/s are decode tokens per second per GPU.",
        fmt.markdown_table(preset_rows()),
        "## Published measurements beside the bound",
        "Each published figure beside `sizing serve` at the datasheet dense peak and bandwidth (efficiencies "
        "1), no engine overhead and each cached KV byte read once, for the same model, GPU, dtype, batch, "
        "TP and lengths (output tokens/s per GPU, prefill included, or first-token latency at batch 1). A "
        "published throughput above its bound (or a latency below it) would mean a formula is wrong; "
        "tests/test_serve_published.py checks that none is. Source: " + PUBLISHED_SERVING[0].source + ".",
        fmt.markdown_table(published_rows()),
        "## Calibration of the default efficiencies",
        calibration_section(),
        all_rows_summary(),
        "## Engine memory against start-up logs",
        engine_log_section(),
        "## Quantized checkpoints against their files",
        checkpoint_section(),
        f"## Capacity: {CAPACITY_MODEL} at {RATE} requests/s on {CAPACITY_GPU}",
        capacity_section(),
        "## Latency under load",
        load_section,
        "## Plots",
        *plot_parts,
        "## Measured on a GPU",
        measured_section(existing_dir),
    )
