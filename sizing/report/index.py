"""`reports/README.md`: the index, one summary row per preset, and the plots."""

from __future__ import annotations

from sizing.estimate import estimate
from sizing.formulas import model_flops_per_token
from sizing.inputs import GIB, PRESETS
from sizing.report import cells as fmt
from sizing.report import memory_summary as report_memory
from sizing.report.plots import SHARE_MODELS, Plot
from sizing.report.sheet import attention_share
from sizing.vocabulary import DEFAULT_MFU

SUMMARY_GPUS = (("a100-80gb", "A100-80GB"), ("h100-sxm", "H100-SXM"))
SHARE_TABLE_CONTEXTS = (2048, 8192, 32768, 131072)


def summary_rows() -> list[dict]:
    """One row per preset."""
    rows = []
    for preset in PRESETS.values():
        est = estimate(preset, mfu=DEFAULT_MFU, memory=False)
        fl, p = est.flops, est.params
        training = model_flops_per_token(fl)
        row = {
            "preset": f"[{preset.name}](presets/{preset.name}.md)",
            "params": fmt.count(p.total),
            "active": fmt.count(p.active) if p.active != p.total else "",
            "T": fmt.count(fl.seq_len),
            "training FLOPs/token (full)": fmt.si(training),
            "6N/token": fmt.si(est.kaplan_6n_per_token),
            "6N vs exact": fmt.diff(est.kaplan_6n_per_token, training),
            "tokens": fmt.si(preset.training_tokens) if preset.training_tokens else "",
        }
        for key, label in SUMMARY_GPUS:
            hours = (
                estimate(preset, gpu=key, mfu=DEFAULT_MFU, memory=False).training.gpu_hours
                if preset.training_tokens
                else None
            )
            row[f"{label} GPU-hours"] = fmt.hours(hours) if hours is not None else ""
        inf = report_memory.inference_bytes(preset.config, preset.context)
        row["inference GiB (weights + KV = total)"] = (
            f"{inf['weights_bytes'] / GIB:,.2f} + {inf['kv_cache_bytes'] / GIB:,.2f} = {inf['total_bytes'] / GIB:,.2f}"
        )
        rows.append(row)
    return rows


def _share_table() -> str:
    rows = []
    for name in SHARE_MODELS:
        cfg = PRESETS[name].config
        row = {"model": name}
        for T in SHARE_TABLE_CONTEXTS:
            row[f"T={fmt.count(T)} full"] = fmt.pct(attention_share(cfg, T, "full"))
            row[f"T={fmt.count(T)} causal"] = fmt.pct(attention_share(cfg, T, "causal"))
        rows.append(row)
    return fmt.markdown_table(rows)


def render_index(plots: list[Plot], has_verification: bool, has_gpu_profile: bool = False) -> str:
    rows = summary_rows()
    files = [
        "- [conventions.md](conventions.md): how we count, beside 6N, PaLM, Megatron, Chinchilla and Kaplan, "
        "with a worked example",
        "- [published-runs.md](published-runs.md): predicted vs published compute, GPU-hours and MFU, each row "
        "with its source",
        "- [serving.md](serving.md): `sizing serve` on the roofline (TTFT, tokens/s, $/M tokens), published "
        "serving figures beside the bound, the roofline and tokens/s plots, the GPU measurement",
        "- [parallel-layouts.md](parallel-layouts.md): published 3D/4D layouts (Llama 3.1 405B, GPT-3 175B, "
        "BLOOM, OPT) with predicted per-GPU memory, step time and MFU; will Llama-2-70B train on 8 x H100?",
        "- [step-time.md](step-time.md): the per-operation step-time model against published runs (Megatron-LM, "
        "Korthikanti, MT-NLG, BLOOM, Llama 3), row by row with the error and the source",
        "- [compute-optimal.md](compute-optimal.md): the scaling laws of `sizing plan` with their coefficients, "
        "Hoffmann et al.'s Table 3 reproduced, optima by budget, iso-FLOP curves",
    ]
    if has_verification:
        files.append(
            "- [verification.md](verification.md): formulas checked against the PyTorch reference model "
            "(produced by `sizing report --with-verification`, needs torch)"
        )
    if has_gpu_profile:
        files.append(
            "- [gpu-profile.md](gpu-profile.md): the reference model's training step timed on a GPU "
            "against the predictions (produced by `sizing profile --plan-report`, needs torch)"
        )
    files.append("- `presets/<name>.md`: one sheet per preset (linked from the table below)")
    memory_note = (
        "Inference memory: bf16 weights + KV cache, batch 1, at the preset's training context (sizing.memory)."
    )
    plot_parts = []
    for plot in plots:
        plot_parts.append(f"### {plot.title}")
        plot_parts.append(f"![{plot.title}]({plot.path})\n\n{plot.note}")
    return fmt.document(
        fmt.GENERATED_NOTE,
        "# Reports",
        "What `sizing` knows about every preset and how far it can be trusted. Everything here is generated "
        "by `sizing report` from a clean checkout; `sizing report --check` (run by tests/test_report.py in CI) "
        "fails when a file is stale.",
        "\n".join(files),
        "## Number formats",
        "Exact counts as integers with commas; FLOPs per token and summary counts with SI prefixes "
        "(K = 1e3, M = 1e6, B = 1e9, T = 1e12, never 1024); whole-run FLOPs in scientific notation; bytes in GiB "
        "(2³⁰); relative differences as signed percentages (predicted / published − 1).",
        "## Every preset",
        f"Training FLOPs per token = forward + backward matmul FLOPs at the preset's training context T, **full "
        f"attention** (T keys per query), no recomputation; 6N = 6 × active parameters. GPU-hours use the "
        f"published training tokens, the exact FLOPs and the dense bf16 peak at MFU {DEFAULT_MFU:g}. {memory_note}",
        fmt.markdown_table(rows),
        "## Plots",
        *plot_parts,
        "Attention share of training FLOPs at a few context lengths (the data of the first plot):",
        _share_table(),
    )
