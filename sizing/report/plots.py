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
import math
from dataclasses import dataclass

from sizing.estimate import estimate
from sizing.formulas import params as P
from sizing.inputs import GIB, PRESETS, get_gpu
from sizing.report import memory_summary as report_memory
from sizing.report.sheet import attention_share
from sizing.vocabulary import ATTENTION_CONVENTIONS, DEFAULT_MFU

SIZE_INCHES = (7.0, 4.5)
DPI = 100
SHARE_MODELS = ("gpt2", "llama2-7b", "mistral-7b", "llama2-70b", "llama3.1-405b")
SHARE_CONTEXTS = tuple(2**k for k in range(9, 18))  # 512 .. 131,072
MEMORY_MODEL, MEMORY_CONTEXT, MICRO_BATCHES = "llama2-7b", 4096, (1, 2, 4, 8, 16)
HOURS_GPUS = ("a100-80gb", "h100-sxm")
LABEL_CHAR, LABEL_HEIGHT = 0.042, 0.13  # gpu-hours.png's label box in log10 units (5 pt text at 100 dpi)


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
        ax.legend(fontsize=7, ncol=2, loc="upper left")

    png = _render(title, labels, data, draw)
    return Plot(
        "plots/attention-share.png",
        title,
        png,
        "Solid: full attention (T keys per query); dashed: causal (Mistral's window caps its keys at 4,096). "
        "Past a model's training context the curves show what the formulas give.",
    )


# (label, ZeRO stage, data-parallel GPUs, recompute): from the per-GPU default to what fits
MEMORY_SETTINGS = (
    ("no ZeRO, no recompute (sizing estimate's)", 0, 1, "none"),
    ("no ZeRO, recompute full", 0, 1, "full"),
    ("ZeRO-1 over 8 GPUs, recompute full", 1, 8, "full"),
    ("ZeRO-3 over 8 GPUs, no recompute", 3, 8, "none"),
    ("ZeRO-3 over 8 GPUs, recompute full", 3, 8, "full"),
)


def memory_settings_data() -> dict:
    """Per-GPU training bytes of MEMORY_MODEL at each micro-batch, for each MEMORY_SETTINGS."""
    from sizing.memory import training_memory

    series = {}
    for label, zero, dp, recompute in MEMORY_SETTINGS:
        series[label] = [
            training_memory(
                MEMORY_MODEL, MEMORY_CONTEXT, b, zero=zero, dp=dp, recompute=recompute, gpu=report_memory.MEMORY_GPU
            ).per_gpu_bytes
            for b in MICRO_BATCHES
        ]
    return {"x": list(MICRO_BATCHES), "series": series}


def _memory_plot() -> Plot:
    title = f"Training memory per GPU vs micro-batch ({MEMORY_MODEL}, T = {MEMORY_CONTEXT:,})"
    data = memory_settings_data()
    labels = {"x": "micro-batch (sequences per GPU)", "y": "GiB per GPU"}
    capacity = get_gpu(report_memory.MEMORY_GPU).memory_bytes

    def draw(ax):
        for i, (label, values) in enumerate(data["series"].items()):
            gib = [v / GIB for v in values]
            ax.plot(data["x"], gib, color=f"C{i}", linewidth=1, label=label)
            for x, v, g in zip(data["x"], values, gib, strict=True):  # filled: fits; hollow: does not
                ax.plot(x, g, marker="o", markersize=5, color=f"C{i}", fillstyle="full" if v <= capacity else "none")
        ax.axhline(capacity / GIB, color="black", linewidth=1, linestyle=":", label=f"{report_memory.MEMORY_GPU}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(data["x"], [str(b) for b in data["x"]])
        ax.set_yscale("log")
        ticks = [2**k for k in range(4, 10)]  # 16 .. 512 GiB
        ax.set_yticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.legend(fontsize=7, loc="upper left")

    return Plot(
        "plots/training-memory.png",
        title,
        _render(title, labels, data, draw),
        "bf16-mixed AdamW, flash attention, from sizing.memory; filled markers fit one "
        f"{report_memory.MEMORY_GPU} ({capacity / GIB:,.1f} GiB), hollow ones do not. Without ZeRO even one "
        "sequence does not fit; sharding the model states over 8 GPUs and recomputing activations does, up to "
        "micro-batch 16.",
    )


def _overlaps(box, boxes) -> bool:
    x0, x1, y0, y1 = box
    return any(x0 < bx1 and bx0 < x1 and y0 < by1 and by0 < y1 for bx0, bx1, by0, by1 in boxes)


def _label_positions(
    points: dict[str, tuple[float, float]],
    char_width: float,
    height: float,
    markers: tuple[tuple[float, float], ...] = (),
    bounds: tuple[float, float] | None = None,
) -> dict:
    """A label position (x, y) for each point, beside it and moved up or down (the nearest free
    place first, up before down) until it overlaps no label placed before and no marker, within
    `bounds` (the axes' y range): greedy, in order of x, in log10 units, so clustered models stay
    readable."""
    lo, hi = (-math.inf, math.inf) if bounds is None else (math.log10(bounds[0]), math.log10(bounds[1]))
    marker_boxes = [(math.log10(x) - 0.02, math.log10(x) + 0.02, math.log10(y) - 0.06, math.log10(y) + 0.06)
                    for x, y in markers]  # fmt: skip
    placed: list[tuple[float, float, float, float]] = []
    out = {}
    for name, (x, y) in sorted(points.items(), key=lambda kv: (kv[1][0], kv[1][1])):
        lx, width = math.log10(x) + 0.03, char_width * len(name)
        for step in [0] + [s for k in range(1, 40) for s in (k, -k)]:
            ly = math.log10(y) + step * height / 2
            box = (lx, lx + width, ly - height / 2, ly + height / 2)
            if lo <= box[2] and box[3] <= hi and not _overlaps(box, placed) and not _overlaps(box, marker_boxes):
                break
        placed.append(box)
        out[name] = (10**lx, 10**ly)
    return out


def _gpu_hours_plot() -> Plot:
    data = gpu_hours_data()
    title = f"GPU-hours vs parameters (published tokens, MFU {DEFAULT_MFU:g})"
    labels = {"x": "active parameters", "y": "GPU-hours (exact FLOPs, full attention)"}
    markers = ("o", "^")

    def draw(ax):
        for i, gpu in enumerate(HOURS_GPUS):
            xs = [p["params"] for p in data.values()]
            ax.scatter(xs, [p[gpu] for p in data.values()], s=14, color=f"C{i}", marker=markers[i], label=gpu, zorder=3)
        # one label per model, at the middle of the segment joining its GPUs' points
        mids = {}
        for name, p in data.items():
            ax.plot([p["params"]] * 2, [p[g] for g in HOURS_GPUS], color="grey", linewidth=0.6, zorder=2)
            mids[name] = (p["params"], math.sqrt(p[HOURS_GPUS[0]] * p[HOURS_GPUS[-1]]))
        every = [(p["params"], p[g]) for p in data.values() for g in HOURS_GPUS]
        ys = [y for _, y in every]
        bounds = (10 ** math.floor(math.log10(min(ys))), 10 ** (math.ceil(math.log10(max(ys))) + 0.3))
        ax.set_ylim(*bounds)
        placed = _label_positions(mids, LABEL_CHAR, LABEL_HEIGHT, markers=tuple(every), bounds=bounds)
        for name, (lx, ly) in placed.items():
            x, y = mids[name]
            moved = abs(math.log10(ly / y)) > 1e-9
            arrow = {"arrowstyle": "-", "color": "grey", "linewidth": 0.4} if moved else None
            ax.annotate(name, (x, y), xytext=(lx, ly), fontsize=5, va="center", arrowprops=arrow)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(right=3 * max(p["params"] for p in data.values()))  # room for the last label
        ax.legend(fontsize=7, loc="upper left")

    return Plot(
        "plots/gpu-hours.png",
        title,
        _render(title, labels, data, draw),
        "Each preset with published training tokens at its training context, bf16 dense peak; a grey segment "
        "joins a model's A100 and H100 points and carries its label (moved up or down, with a leader, where models "
        "cluster; no label covers another or a point).",
    )


# The axes' place in the figure (fractions of it): what tight_layout found for these titles,
# labels and tick labels, fixed so that a plot is drawn once, not twice (tight_layout draws the
# whole figure to measure it). A plot with wider tick labels passes its own left margin. Each
# legend names its corner too: loc="best" searches every position against every drawn point.
MARGINS = {"left": 0.105, "right": 0.975, "bottom": 0.135, "top": 0.924}


def _render(title: str, labels: dict, data: dict, draw, margins: dict | None = None) -> bytes:
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
        fig.subplots_adjust(**{**MARGINS, **(margins or {})})
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
