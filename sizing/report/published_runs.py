"""`reports/published-runs.md`: our predictions beside published training compute and
GPU-hours, each row with its source and the relative difference."""

from __future__ import annotations

from sizing.formulas import kaplan_6n_per_token, model_training_flops, palm_flops_per_token
from sizing.formulas import params as P
from sizing.inputs import get_gpu, get_preset, published_value
from sizing.inputs import published as pub
from sizing.report import cells as fmt
from sizing.training import SECONDS_PER_HOUR, gpu_hours, implied_mfu, training_flops
from sizing.vocabulary import DEFAULT_MFU


def _six_nd(n_params: int, tokens: int) -> int:
    """Kaplan's 6ND for a run: 6N per token times D tokens."""
    return training_flops(kaplan_6n_per_token(n_params), tokens)


def _peak(gpu_key: str) -> float:
    gpu = get_gpu(gpu_key)
    return gpu.peak_flops_per_second(gpu.default_dtype)


def gpt3_rows() -> list[dict]:
    rows = []
    for run in pub.GPT3_TABLE_D1:
        preset = get_preset(run["preset"])
        n = P.total_params(preset.config)
        six_nd = _six_nd(n, run["tokens"])
        exact = model_training_flops(preset.config, 2048, run["tokens"])
        rows.append(
            {
                "model": run["model"],
                "preset": preset.name,
                "N (ours)": fmt.count(n),
                "N (D.1)": f"{run['params_millions']:,}M",
                "compute (D.1)": f"{fmt.flops_total(run['flops'])} ({run['pf_days']:g} PF-days)",
                "6ND (our N)": fmt.flops_total(six_nd),
                "difference": fmt.diff(six_nd, run["flops"]),
                "exact fwd+bwd, T=2048, full": fmt.flops_total(exact),
                "exact vs D.1": fmt.diff(exact, run["flops"]),
                "source": run["source"],
            }
        )
    return rows


def llama_rows(runs: list[dict] | None = None) -> list[dict]:
    rows = []
    for run in pub.LLAMA_GPU_HOURS if runs is None else runs:
        preset = get_preset(run["preset"])
        cfg, T, D = preset.config, preset.context, run["tokens"]
        peak = _peak(run["gpu"])
        exact = model_training_flops(cfg, T, D)
        six_nd = _six_nd(P.active_params(cfg), D)
        predicted = gpu_hours(exact, peak, DEFAULT_MFU)
        rows.append(
            {
                "model": run["model"],
                "preset": preset.name,
                "tokens": fmt.si(D),
                "T": fmt.count(T),
                "GPU": run["gpu"],
                "GPU-hours (published)": fmt.hours(run["gpu_hours"]),
                "exact FLOPs": fmt.flops_total(exact),
                "implied MFU (exact)": fmt.pct(implied_mfu(exact, run["gpu_hours"], peak)),
                "6ND": fmt.flops_total(six_nd),
                "implied MFU (6N)": fmt.pct(implied_mfu(six_nd, run["gpu_hours"], peak)),
                f"GPU-hours at MFU {DEFAULT_MFU:g} (exact)": fmt.hours(predicted),
                "difference": fmt.diff(predicted, run["gpu_hours"]),
                **_energy_cells(run),
                "source": run["source"],
            }
        )
    return rows


def _energy_cells(run: dict) -> dict:
    """Energy and CO2 of the published GPU-hours at the GPU's TDP, PUE 1 and the grid intensity
    the Llama 2 card implies (sizing.training.energy): the card's own method, so its rows come back."""
    from sizing.training import run_energy

    e = run_energy(run["gpu_hours"], run["gpu"])
    return {"MWh (TDP, PUE 1)": f"{e.kwh / 1000:,.1f}", f"tCO2eq ({e.kg_co2_per_kwh:g} kg/kWh)": f"{e.tco2eq:,.2f}"}


def published_flops_rows(runs: list[dict]) -> list[dict]:
    """Runs that publish their training FLOPs (Llama-3.1-405B): ours beside theirs."""
    rows = []
    for run in runs:
        if run.get("flops") is None:
            continue
        preset = get_preset(run["preset"])
        cfg, T, D = preset.config, preset.context, run["tokens"]
        for label, flops in (
            (f"exact fwd+bwd at T={fmt.count(T)}, full", model_training_flops(cfg, T, D)),
            ("6ND", _six_nd(P.active_params(cfg), D)),
        ):
            rows.append(
                {
                    "run": run["model"],
                    "quantity": f"training FLOPs, {label} ({fmt.si(D)} tokens)",
                    "predicted": fmt.flops_total(flops),
                    "published": fmt.flops_total(run["flops"]),
                    "difference": fmt.diff(flops, run["flops"]),
                    "source": run["source"],
                }
            )
    return rows


def cite(rows: list[dict], sources: dict[str, int]) -> list[dict]:
    """Each row's `source` as a footnote: a marker [^n] after the row's first cell, the same n
    for the same source across the page (sources: text -> n, filled in page order)."""
    out = []
    for row in rows:
        row = dict(row)
        n = sources.setdefault(row.pop("source"), len(sources) + 1)
        first = next(iter(row))
        row[first] = f"{row[first]} [^{n}]"
        out.append(row)
    return out


def footnotes(sources: dict[str, int]) -> str:
    return "\n".join(f"[^{n}]: {text}" for text, n in sorted(sources.items(), key=lambda kv: kv[1]))


def other_rows() -> list[dict]:
    """The runs that are not Llama's: each one's own comparison (its section below)."""
    runs = {r["model"]: r for r in pub.OTHER_RUNS}
    rows: list[dict] = []

    def add(run, quantity, predicted, published, difference, shown=None):
        rows.append(
            {
                "run": run["model"],
                "quantity": quantity,
                "predicted": shown[0] if shown else predicted,
                "published": shown[1] if shown else published,
                "difference": difference,
                "source": run["source"],
            }
        )

    _chinchilla_rows(add, runs["Chinchilla-70B"])
    _palm_rows(add, runs["PaLM-540B"])
    # OPT-175B: our preset; GPU-hours -> implied MFU vs the reported 147 TFLOP/s per GPU.
    run = runs["OPT-175B"]
    preset = get_preset(run["preset"])
    _params_row(add, run, P.total_params(preset.config), 175e9, "published (rounded)")
    _mfu_rows(add, run, preset.config, preset.context, P.active_params(preset.config))
    # BLOOM-176B: our preset (embedding LayerNorm included); count vs the model card, then the implied MFU.
    run = runs["BLOOM-176B"]
    preset = get_preset(run["preset"])
    _params_row(
        add, run, P.total_params(preset.config), preset.published_params, "published (HF bigscience/bloom model card)"
    )
    _mfu_rows(add, run, preset.config, preset.context, P.active_params(preset.config))
    return rows


def _chinchilla_rows(add, run) -> None:
    """Chinchilla: compute only; N as the paper states it."""
    six_nd = _six_nd(run["params"], run["tokens"])
    add(
        run,
        f"training FLOPs, 6ND with N = {fmt.si(run['params'])} ({run['params_note']})",
        fmt.flops_total(six_nd),
        fmt.flops_total(run["flops"]),
        fmt.diff(six_nd, run["flops"]),
    )


def _palm_rows(add, run) -> None:
    """PaLM: not a preset; 6ND with the paper's N, plus PaLM's own attention term, and the MFU
    each implies from the chip-hours."""
    shape = pub.PALM_540B_SHAPE
    L, H, Q, T = shape["n_layers"], shape["n_heads"], shape["head_dim"], shape["seq_len"]
    six_nd = _six_nd(run["params"], run["tokens"])
    palm = training_flops(palm_flops_per_token(run["params"], L, H, Q, T), run["tokens"])
    add(
        run,
        f"training FLOPs, 6ND with N = {fmt.si(run['params'])} ({run['params_note']})",
        fmt.flops_total(six_nd),
        fmt.flops_total(run["flops"]),
        fmt.diff(six_nd, run["flops"]),
    )
    add(
        run,
        f"training FLOPs, (6N + 12·L·H·Q·T)·D (PaLM App. B; L={L}, H={H}, Q={Q}, T={fmt.count(T)})",
        fmt.flops_total(palm),
        fmt.flops_total(run["flops"]),
        fmt.diff(palm, run["flops"]),
    )
    peak = _peak(run["gpu"])
    for label, flops in (("(6N + 12·L·H·Q·T)·D", palm), ("6ND", six_nd)):
        mfu = implied_mfu(flops, run["gpu_hours"], peak)
        add(
            run,
            f"MFU implied by {fmt.hours(run['gpu_hours'])} TPU v4 chip-hours at {peak / 1e12:g} TFLOP/s, {label}",
            mfu,
            run["reported_mfu"],
            fmt.diff(mfu, run["reported_mfu"]),
            shown=(fmt.pct(mfu), f"{fmt.pct(run['reported_mfu'])} (reported MFU)"),
        )


def _params_row(add, run, ours, published, what, label="parameters"):
    add(
        run,
        f"{label} vs {what}",
        ours,
        published,
        fmt.diff(ours, published),
        shown=(fmt.count(ours), fmt.count(int(published)) if published == int(published) else fmt.si(published)),
    )


def _mfu_rows(add, run, cfg, seq_len, n_params):
    peak = _peak(run["gpu"])
    reported = run["reported_tflops_per_gpu"] * 1e12 / peak
    exact = model_training_flops(cfg, seq_len, run["tokens"])
    six_nd = _six_nd(n_params, run["tokens"])
    for label, flops in ((f"exact fwd+bwd at T={fmt.count(seq_len)}, full", exact), ("6ND", six_nd)):
        mfu = implied_mfu(flops, run["gpu_hours"], peak)
        add(
            run,
            f"MFU implied by {fmt.hours(run['gpu_hours'])} A100-80GB GPU-hours ({fmt.si(run['tokens'])} tokens), "
            f"{label}",
            mfu,
            reported,
            fmt.diff(mfu, reported),
            shown=(fmt.pct(mfu), f"{fmt.pct(reported)} ({run['reported_tflops_per_gpu']} TFLOP/s of {peak / 1e12:g})"),
        )


def _moe_flops_per_token(cfg, T) -> dict[str, int | float]:
    """Training FLOPs per token of an MoE run by convention: our exact count (full, causal), 6N active."""
    return {
        f"exact fwd+bwd at T={fmt.count(T)}, full": model_training_flops(cfg, T, 1),
        f"exact fwd+bwd at T={fmt.count(T)}, causal": model_training_flops(cfg, T, 1, "causal"),
        "6N (active)": kaplan_6n_per_token(P.active_params(cfg)),
    }


def moe_rows() -> list[dict]:
    """DeepSeek-V3 and GPT-OSS: parameters vs the published figures; with published tokens,
    GPU-hours at DEFAULT_MFU vs the published hours and the MFU those hours imply, by convention."""
    rows = []
    for run in pub.MOE_RUNS:
        preset = get_preset(run["preset"])
        cfg, T, peak, published = preset.config, preset.context, _peak(run["gpu"]), preset.published

        def add(quantity, predicted, expected, shown, run=run):
            rows.append(
                {
                    "run": run["model"],
                    "quantity": quantity,
                    "predicted": shown[0],
                    "published": shown[1],
                    "difference": fmt.diff(predicted, expected),
                    "source": run["source"],
                }
            )

        total, active = P.total_params(cfg), P.active_params(cfg)
        if published.active_counts == "active_without_embedding":
            active -= P.token_embedding_params(cfg)
        for what, ours, text in (("total", total, published.total), ("active", active, published.active)):
            label = f"{what} parameters" + (
                " without the embedding" if what == "active" and active != P.active_params(cfg) else ""
            )
            add(f"{label} vs {preset.name}'s published figure", ours, published_value(text), (fmt.count(ours), text))
        if not run["tokens"]:
            continue
        for label, per_token in _moe_flops_per_token(cfg, T).items():
            flops = per_token * run["tokens"]
            hours = gpu_hours(flops, peak, DEFAULT_MFU)
            mfu = implied_mfu(flops, run["gpu_hours"], peak)
            add(
                f"pre-training GPU-hours ({run['gpu']}, {fmt.si(run['tokens'])} tokens) at MFU {DEFAULT_MFU:g}, "
                f"{label}; the published hours imply MFU {fmt.pct(mfu)}",
                hours,
                run["gpu_hours"],
                (fmt.hours(hours), fmt.hours(run["gpu_hours"])),
            )
    return rows


def moe_tokens_note() -> str:
    """Runs without published tokens: the tokens their hours buy at DEFAULT_MFU, by convention."""
    parts = []
    for run in (r for r in pub.MOE_RUNS if not r["tokens"]):
        preset = get_preset(run["preset"])
        peak = _peak(run["gpu"])
        bought = [
            f"{fmt.si(run['gpu_hours'] * SECONDS_PER_HOUR * peak * DEFAULT_MFU / f)} ({label})"
            for label, f in _moe_flops_per_token(preset.config, preset.context).items()
        ]
        parts.append(
            f"{run['model']} publishes {fmt.hours(run['gpu_hours'])} {run['gpu']} GPU-hours but no token count, "
            f"so no MFU can be implied; at MFU {DEFAULT_MFU:g} those hours buy " + ", ".join(bought) + " tokens."
        )
    return " ".join(parts)


def render_published_runs() -> str:
    peak = _peak(pub.A100_80GB)
    h100 = _peak(pub.H100_80GB)
    sources: dict[str, int] = {}
    return fmt.document(
        fmt.GENERATED_NOTE,
        "# Predicted vs published training runs",
        "Every row cites its source in a footnote (the marker after its first cell; the list is at the end); "
        "*difference* is predicted / published − 1 (for an MFU: implied / reported − 1). "
        "*Exact* FLOPs are this tool's matmul count, forward + backward, full attention (T keys per query), no "
        "recomputation — the model FLOPs of PaLM's MFU. *6ND* is Kaplan's approximation with the run's parameters. "
        "Published figures are copied in `sizing/inputs/published.py` (checked against "
        "tests/fixtures/reference-figures.json by tests/test_report.py).",
        "## GPT-3 (Table D.1): total training compute, 300B tokens",
        "Table D.1 computes 6ND with its rounded N; we use our exact N, then our exact count at the training "
        "context T = 2048.",
        fmt.markdown_table(cite(gpt3_rows(), sources)),
        "## LLaMA-1 and Llama-2: GPU-hours as the MFU each implies",
        f"Implied MFU = FLOPs / (published GPU-hours × 3600 s × {peak / 1e12:g} TFLOP/s, A100-80GB dense bf16). "
        f"The last columns turn our exact FLOPs back into GPU-hours at the reports' MFU of {DEFAULT_MFU:g}. "
        "Llama-2-34B (unreleased, no exact parameter count) is left out. MWh and tCO2eq are the published "
        "GPU-hours at the GPU's TDP, PUE 1 and the grid intensity the Llama-2 card implies (docs/energy.md): "
        "the card publishes 31.22, 62.44 and 291.42 tCO2eq for Llama-2-7B, 13B and 70B.",
        fmt.markdown_table(cite(llama_rows(), sources)),
        "## Llama-3 and Llama-3.1: H100 GPU-hours as the MFU each implies",
        f"The same on H100-80GB ({h100 / 1e12:g} TFLOP/s dense bf16), at the 8,192-token pre-training context; "
        "the model cards' hours cover the whole training, Llama-3.1's long-context stage included, so the implied "
        "MFU is an average over everything the cluster did. Llama-3.1-8B and 70B have Llama-3's architecture.",
        fmt.markdown_table(cite(llama_rows(pub.LLAMA3_GPU_HOURS), sources)),
        "Llama-3.1-405B also publishes its training compute:",
        fmt.markdown_table(cite(published_flops_rows(pub.LLAMA3_GPU_HOURS), sources)),
        "## Chinchilla, PaLM, OPT-175B and BLOOM-176B",
        "PaLM and Chinchilla are not presets: their rows use the parameter count the paper states, labelled. "
        "Implied MFUs below the reported ones mean the published hours include restarts, evaluation and idle time.",
        fmt.markdown_table(cite(other_rows(), sources)),
        "## DeepSeek-V3 and GPT-OSS (mixtures of experts)",
        "Model FLOPs count the routed experts a token visits (top-k), the shared ones and the router. "
        + " ".join(run["notes"] for run in pub.MOE_RUNS),
        fmt.markdown_table(cite(moe_rows(), sources)),
        moe_tokens_note(),
        *_step_time_section(sources),
        "## Sources",
        footnotes(sources),
    )


def _step_time_section(sources: dict[str, int]) -> list[str]:
    """The per-operation step model against every published run: cross-validated error per source
    and overall, then each run with its error, its leave-one-source-out error and its band."""
    from sizing.parallel import cv_report
    from sizing.report.step_runs import cv_kind_rows, cv_summary_rows, run_rows

    cv = cv_report()
    return [
        "## Step time: the per-operation model against published training runs",
        "Each run's step as its source measured it (converted with the source's own convention) against the "
        "model's prediction with the fitted stack overheads (*error*), and predicted with the overheads fitted "
        "without its source (*CV error*, leave-one-source-out). The *band* is what a prediction of its kind "
        "(same stack, GPU class and dense/MoE) prints: the 10th-90th percentile of the cross-validated errors of "
        "those runs (sizing.parallel.band). docs/step-time.md derives each term.",
        fmt.markdown_table(cv_summary_rows(cv["summary"], cv["summary_by_publication"])),
        "Dense and mixture-of-experts runs apart:",
        fmt.markdown_table(cv_kind_rows(cv.get("summary_by_kind", {}))),
        "Every run, its error, its cross-validated error and the band a prediction of its kind prints:",
        fmt.markdown_table(cite(run_rows(), sources)),
    ]
