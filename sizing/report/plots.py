"""The report's plots: matplotlib's Agg canvas, fixed size, dpi, style and PNG metadata, so
that one matplotlib version renders byte-identical files.

Each PNG carries two text chunks: `Description` (a SHA-256 of the plotted data, titles and
labels) and `Source` (the matplotlib version). `sizing report --check` compares PNGs byte
for byte; when the committed file was rendered by another matplotlib version (whose pixels
may legitimately differ), it compares the data digest instead. See sizing/report/build.py.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass

from .. import params as P
from ..estimate import estimate
from ..hardware import get_gpu
from ..presets import PRESETS
from ..units import GIB
from ..vocabulary import ATTENTION_CONVENTIONS, DEFAULT_MFU
from . import memory_summary as report_memory
from .sheet import attention_share

SIZE_INCHES = (7.0, 4.5)
DPI = 100
SHARE_MODELS = ("gpt2", "llama2-7b", "mistral-7b", "llama2-70b", "llama3.1-405b")
SHARE_CONTEXTS = tuple(2**k for k in range(9, 18))  # 512 .. 131,072
MEMORY_MODEL, MEMORY_CONTEXT, MICRO_BATCHES = "llama2-7b", 4096, (1, 2, 4, 8, 16)
HOURS_GPUS = ("a100-80gb", "h100-sxm")


@dataclass(frozen=True)
class Plot:
    path: str  # relative to the report folder
    title: str
    png: bytes
    note: str = ""


def attention_share_data() -> dict:
    series = {}
    for name in SHARE_MODELS:
        cfg = PRESETS[name].config
        for attention in ATTENTION_CONVENTIONS:
            series[f"{name} {attention}"] = [attention_share(cfg, T, attention) for T in SHARE_CONTEXTS]
    return {"x": list(SHARE_CONTEXTS), "series": series}


def gpu_hours_data() -> dict:
    points = {}
    for preset in PRESETS.values():
        if preset.training_tokens:
            hours = {
                gpu: estimate(preset, gpu=gpu, mfu=DEFAULT_MFU, memory=False).training.gpu_hours for gpu in HOURS_GPUS
            }
            points[preset.name] = {"params": P.active_params(preset.config), **hours}
    return points


def render_plots() -> list[Plot]:
    return [_attention_share_plot(), _memory_plot(), _gpu_hours_plot()]


def _attention_share_plot() -> Plot:
    data = attention_share_data()
    title = "Attention (QKᵀ + AV) share of training FLOPs"
    labels = {"x": "context length T (tokens)", "y": "share of forward + backward FLOPs (%)"}

    def draw(ax):
        colors = {}
        for label, values in data["series"].items():
            name, attention = label.rsplit(" ", 1)
            color = colors.setdefault(name, f"C{len(colors)}")
            ax.plot(
                data["x"],
                [100 * v for v in values],
                color=color,
                linestyle="-" if attention == "full" else "--",
                marker="o",
                markersize=3,
                label=f"{name} ({attention})",
            )
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 100)
        ax.legend(fontsize=7, ncol=2)

    png = _render(title, labels, data, draw)
    return Plot(
        "plots/attention-share.png",
        title,
        png,
        "Solid: full attention (T keys per query); dashed: causal (Mistral's window caps its keys at 4,096). "
        "Past a model's training context the curves show what the formulas give.",
    )


def _memory_plot() -> Plot:
    title = f"Training memory by kind vs micro-batch ({MEMORY_MODEL}, T = {MEMORY_CONTEXT:,})"
    path = "plots/training-memory.png"
    series = report_memory.training_by_kind(PRESETS[MEMORY_MODEL].config, MEMORY_CONTEXT, list(MICRO_BATCHES))
    data = {"x": list(MICRO_BATCHES), "series": series}
    labels = {"x": "micro-batch (sequences)", "y": "GiB"}

    def draw(ax):
        bottom = [0.0] * len(MICRO_BATCHES)
        positions = list(range(len(MICRO_BATCHES)))
        for kind, values in series.items():
            gib = [v / GIB for v in values]
            ax.bar(positions, gib, bottom=bottom, label=kind)
            bottom = [b + g for b, g in zip(bottom, gib, strict=True)]
        ax.set_xticks(positions, [str(b) for b in MICRO_BATCHES])
        capacity = get_gpu(report_memory.MEMORY_GPU).memory_bytes / GIB
        ax.axhline(
            capacity, color="black", linewidth=1, linestyle=":", label=f"{report_memory.MEMORY_GPU} ({capacity:g} GiB)"
        )
        ax.legend(fontsize=7)

    settings = report_memory.summary(PRESETS[MEMORY_MODEL].config, MEMORY_CONTEXT).get("training", {})
    shown = ", ".join(
        f"{k} {settings[k]}" for k in ("precision", "optimizer", "zero_stage", "recompute") if k in settings
    )
    return Plot(
        path,
        title,
        _render(title, labels, data, draw),
        "Per GPU, stacked by kind, from sizing.memory" + (f" ({shown})." if shown else "."),
    )


def _gpu_hours_plot() -> Plot:
    data = gpu_hours_data()
    title = f"GPU-hours vs parameters (published tokens, MFU {DEFAULT_MFU:g})"
    labels = {"x": "active parameters", "y": "GPU-hours (exact FLOPs, full attention)"}

    def draw(ax):
        for i, gpu in enumerate(HOURS_GPUS):
            xs = [p["params"] for p in data.values()]
            ax.scatter(xs, [p[gpu] for p in data.values()], s=14, color=f"C{i}", label=gpu)
        for name, p in data.items():
            ax.annotate(name, (p["params"], p[HOURS_GPUS[0]]), fontsize=5, xytext=(3, 2), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.legend(fontsize=7)

    return Plot(
        "plots/gpu-hours.png",
        title,
        _render(title, labels, data, draw),
        "Each preset with published training tokens at its training context, bf16 dense peak.",
    )


def _render(title: str, labels: dict, data: dict, draw) -> bytes:
    import matplotlib
    import matplotlib.style
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    digest = hashlib.sha256(
        json.dumps({"title": title, "labels": labels, "data": data}, sort_keys=True).encode()
    ).hexdigest()
    with matplotlib.style.context("default"):
        fig = Figure(figsize=SIZE_INCHES, dpi=DPI)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        draw(ax)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(labels["x"])
        ax.set_ylabel(labels["y"])
        ax.grid(True, which="major", alpha=0.3)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(
            buffer,
            format="png",
            dpi=DPI,
            metadata={
                "Software": None,
                "Description": f"data sha256 {digest}",
                "Source": f"sizing report; matplotlib {matplotlib.__version__}",
            },
        )
    return buffer.getvalue()
