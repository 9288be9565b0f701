"""The load part of reports/serving.md: p50 and p99 TTFT and TPOT against the request rate for
one replica (the load model, sizing/serve/load.py), as a plot and a table, with the saturation
rate; and the capacity answer when the user pins bf16 (the precision is theirs)."""

from __future__ import annotations

from sizing.inputs import get_gpu, get_preset
from sizing.render import answer_line, format_seconds
from sizing.report import cells as fmt
from sizing.report.plots import Plot, _render
from sizing.serve import ContinuousBatching, ServeSettings, ServingLoad, default_efficiencies, fixed_mix, latency_at

LOAD_MODEL, LOAD_GPU, LOAD_TP, LOAD_PROMPT, LOAD_OUTPUT, LOAD_BUDGET = "llama3-8b", "h100-sxm", 1, 1000, 200, 8192
RATE_SHARES = (0.1, 0.25, 0.4, 0.55, 0.7, 0.8, 0.9, 0.95)  # of the saturation rate


def _load() -> ServingLoad:
    c, b = default_efficiencies(LOAD_GPU)
    s = ServeSettings(1, LOAD_PROMPT, LOAD_OUTPUT, LOAD_TP, LOAD_TP, "bf16", "bf16", "bf16", "causal", c, b)
    cb = ContinuousBatching(get_preset(LOAD_MODEL).config, get_gpu(LOAD_GPU), s, LOAD_BUDGET)
    return ServingLoad(cb, fixed_mix(LOAD_PROMPT, LOAD_OUTPUT))


def latency_vs_rate_data() -> dict:
    from sizing.serve import saturation_rate

    load = _load()
    sat = saturation_rate(load)
    points = [latency_at(load, share * sat) for share in RATE_SHARES]
    return {
        "saturation_rate": sat,
        "rate": [p.rate for p in points],
        "busy": [p.state.utilization for p in points],
        **{
            f"{m}_{q}_ms": [getattr(p, m)[q] * 1e3 for p in points]
            for m in ("ttft", "tpot", "e2e")
            for q in (0.5, 0.99)
        },
    }


def latency_vs_rate_plot(data: dict) -> Plot:
    title = f"{LOAD_MODEL} on one {LOAD_GPU}: latency percentiles vs request rate (Poisson arrivals)"
    labels = {"x": "requests/s", "y": "milliseconds"}

    def draw(ax):
        styles = (("ttft_0.5_ms", "TTFT p50", "C0", "--"), ("ttft_0.99_ms", "TTFT p99", "C0", "-"))
        styles += (("tpot_0.5_ms", "TPOT p50", "C1", "--"), ("tpot_0.99_ms", "TPOT p99", "C1", "-"))
        for key, label, color, line in styles:
            ax.plot(data["rate"], data[key], marker="o", markersize=3, color=color, linestyle=line, label=label)
        ax.axvline(data["saturation_rate"], color="grey", linestyle=":", linewidth=1, label="saturation")
        ax.set_yscale("log")
        ax.legend(fontsize=7)

    return Plot(
        "plots/serving-latency-vs-rate.png",
        title,
        _render(title, labels, data, draw),
        f"bf16, prompt {LOAD_PROMPT}, output {LOAD_OUTPUT}, token budget {LOAD_BUDGET:,} (chunked prefill), H100's "
        "calibrated efficiencies; the load model of sizing/serve/load.py, which tests/test_serve_load_des.py checks "
        "against a step-level simulation of the same scheduler.",
    )


def latency_vs_rate_section(data: dict) -> str:
    rows = [
        {
            "requests/s": f"{rate:.3g}",
            "share of saturation": f"{share:.0%}",
            "prefilling": f"{busy:.0%}",
            **{
                f"{name} {p}": format_seconds(data[f"{key}_{q}_ms"][i] / 1e3)
                for name, key in (("TTFT", "ttft"), ("TPOT", "tpot"), ("latency", "e2e"))
                for p, q in (("p50", 0.5), ("p99", 0.99))
            },
        }
        for i, (rate, share, busy) in enumerate(zip(data["rate"], RATE_SHARES, data["busy"], strict=True))
    ]
    return "\n\n".join(
        [
            f"One {LOAD_MODEL} replica on an {LOAD_GPU} (tp {LOAD_TP}, bf16), {LOAD_PROMPT} tokens in and "
            f"{LOAD_OUTPUT} out, Poisson arrivals, continuous batching with a token budget of {LOAD_BUDGET:,}: the "
            f"steady state ends at {data['saturation_rate']:.3g} requests/s. The tails grow long before the mean: "
            "prompts that arrive together are prefilled together, and every decode waits for their iterations.",
            fmt.markdown_table(rows),
        ]
    )


def pinned_precision_line(plan) -> str:
    return (
        "The same question with the precision pinned (`--weight-dtype bf16 --kv-dtype bf16`) is answered, not "
        f"refused: **{answer_line(plan)}**."
    )
