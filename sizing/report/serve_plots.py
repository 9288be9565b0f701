"""The serving plots of reports/serving.md: the roofline of one GPU with the prefill and decode
points of a few presets, and decode tokens/s per GPU against the batch. matplotlib is imported
only when a plot is drawn (plots._render)."""

from __future__ import annotations

from sizing.inputs import get_gpu
from sizing.report.plots import Plot, _render
from sizing.report.serving_page import GPU, OUTPUT, PROMPT, SERVE_PRESETS
from sizing.serve import serve
from sizing.vocabulary import DEFAULT_SERVE_BANDWIDTH_EFFICIENCY, DEFAULT_SERVE_COMPUTE_EFFICIENCY

ROOFLINE_BATCHES = (1, 8, 64, 256)
SWEEP_BATCHES = tuple(2**k for k in range(0, 11))  # 1 .. 1024
_IDEAL = {"compute_efficiency": 1.0, "bandwidth_efficiency": 1.0}
# sizing serve's ridge is this one times compute / bandwidth efficiency: one ridge, two labels
_EFF = f"{DEFAULT_SERVE_COMPUTE_EFFICIENCY:g} / {DEFAULT_SERVE_BANDWIDTH_EFFICIENCY:g}"


def roofline_data() -> dict:
    gpu = get_gpu(GPU)
    peak, bw = gpu.peak_flops_per_second("bf16"), gpu.hbm_bytes_per_second
    points = {}
    for name, tp in SERVE_PRESETS:
        prefill = serve(name, PROMPT, OUTPUT, 1, GPU, tp=tp, **_IDEAL).prefill
        decode = []
        for b in ROOFLINE_BATCHES:
            step = serve(name, PROMPT, OUTPUT, b, GPU, tp=tp, **_IDEAL).last_step.roofline
            decode.append([step.arithmetic_intensity, step.flops / step.seconds])
        points[name] = {"prefill": [prefill.arithmetic_intensity, prefill.flops / prefill.seconds], "decode": decode}
    return {"peak": peak, "bandwidth": bw, "ridge": peak / bw, "points": points}


def tokens_per_second_data() -> dict:
    series = {}
    for name, tp in SERVE_PRESETS:
        bound = [serve(name, PROMPT, OUTPUT, b, GPU, tp=tp, **_IDEAL) for b in SWEEP_BATCHES]
        estimate = [serve(name, PROMPT, OUTPUT, b, GPU, tp=tp) for b in SWEEP_BATCHES]
        series[name] = {
            "bound": [e.decode_tokens_per_second_per_gpu for e in bound],
            "estimate": [e.decode_tokens_per_second_per_gpu for e in estimate],
            "max_batch": estimate[0].max_batch,
        }
    return {"x": list(SWEEP_BATCHES), "series": series}


def render_serve_plots(load_data: dict | None = None) -> list[Plot]:
    from sizing.report.serving_capacity import throughput_latency_plot
    from sizing.report.serving_load import latency_vs_rate_plot

    plots = [_roofline_plot(), _tokens_plot(), throughput_latency_plot()]
    return plots + ([latency_vs_rate_plot(load_data)] if load_data is not None else [])


def _roofline_plot() -> Plot:
    data = roofline_data()
    title = f"Roofline of the {GPU} (bf16) with prefill and decode points"
    labels = {"x": "arithmetic intensity (FLOPs per byte read)", "y": "attainable FLOP/s per GPU"}

    def draw(ax):
        peak, bw = data["peak"], data["bandwidth"]
        xs = [10 ** (k / 4) for k in range(-4, 21)]  # 0.1 .. 1e5
        ax.plot(xs, [min(peak, bw * x) for x in xs], color="black", linewidth=1.2, label="roofline")
        ax.axvline(
            data["ridge"],
            color="grey",
            linestyle=":",
            linewidth=1,
            label=f"ideal ridge {data['ridge']:.0f} (sizing serve: x {_EFF})",
        )
        for i, (name, p) in enumerate(data["points"].items()):
            color = f"C{i}"
            ax.scatter(*p["prefill"], marker="s", s=30, color=color, label=f"{name} prefill")
            dx, dy = zip(*p["decode"], strict=True)
            ax.plot(dx, dy, marker="o", markersize=4, color=color, linestyle="--", label=f"{name} decode")
            for (x, y), b in zip(p["decode"], ROOFLINE_BATCHES, strict=True):
                ax.annotate(f"b{b}", (x, y), fontsize=6, xytext=(3, -8), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.legend(fontsize=6, ncol=2, loc="lower right")

    return Plot(
        "plots/serving-roofline.png",
        title,
        _render(title, labels, data, draw),
        f"Prefill (squares, batch 1, {PROMPT} tokens) and decode steps (circles, batch "
        f"{', '.join(map(str, ROOFLINE_BATCHES))}, at the last step's context) at efficiencies 1, per GPU "
        f"(llama2-70b over tp 4, mixtral-8x7b over tp 2). Decode climbs the bandwidth slope with the batch; "
        "MHA's KV read (llama2-7b) keeps it below the ridge.",
    )


def _tokens_plot() -> Plot:
    data = tokens_per_second_data()
    title = f"Decode tokens/s per GPU vs batch ({GPU}, bf16, prompt {PROMPT}, output {OUTPUT})"
    labels = {"x": "batch (sequences)", "y": "decode tokens/s per GPU"}

    def draw(ax):
        for i, (name, s) in enumerate(data["series"].items()):
            color = f"C{i}"
            ax.plot(data["x"], s["bound"], color=color, marker="o", markersize=3, label=f"{name} bound")
            ax.plot(data["x"], s["estimate"], color=color, linestyle="--", label=f"{name} estimate")
            if s["max_batch"]:
                label = f"{name} largest batch that fits ({s['max_batch']:,})"
                ax.axvline(s["max_batch"], color=color, linestyle=":", linewidth=1, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xticks(data["x"], [str(b) for b in data["x"]])  # batches as numbers, not 2^k
        ax.minorticks_off()
        ax.set_yscale("log")
        ax.legend(fontsize=6, ncol=2, loc="upper left")

    return Plot(
        "plots/serving-tokens-per-second.png",
        title,
        _render(title, labels, data, draw),
        "Solid: the roofline bound (efficiencies 1); dashed: the estimate at the GPU's calibrated efficiencies; "
        "dotted: the largest batch whose weights, KV cache and prefill peak fit the GPU.",
    )
