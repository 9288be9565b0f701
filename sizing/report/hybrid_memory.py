"""reports/hybrid-memory.md and its plot: inference memory against context for the hybrid presets,
each beside the all-attention model of the same shape (every layer attention, what a calculator
that puts a KV cache on every layer sizes). Weights bf16, KV cache bf16, SSM state fp32, batch 1.
matplotlib is imported only when the plot is drawn (plots._render)."""

from __future__ import annotations

from sizing.hybrid import hybrid_inference_memory, hybrid_preset
from sizing.inputs import GIB
from sizing.report import cells as fmt
from sizing.report.plots import Plot, _render

PAGE = "hybrid-memory.md"
PLOT = "plots/hybrid-memory-vs-context.png"
MODELS = ("jamba-v0.1", "nemotron-h-8b", "qwen3-next-80b-a3b")
CONTEXTS = tuple(2**k for k in range(12, 19))  # 4K .. 256K


def hybrid_memory_data() -> dict:
    series = {}
    for name in MODELS:
        m = hybrid_preset(name).model()
        mems = [hybrid_inference_memory(m, C) for C in CONTEXTS]
        series[name] = {
            "hybrid": [x.total_bytes / GIB for x in mems],
            "all_attention": [x.all_attention_total_bytes / GIB for x in mems],
        }
    return {"x": list(CONTEXTS), "series": series}


def hybrid_memory_plot(data: dict | None = None) -> Plot:
    data = hybrid_memory_data() if data is None else data
    title = "Inference memory vs context: hybrid vs all-attention (batch 1, bf16)"
    labels = {"x": "context (tokens)", "y": "GiB (weights + KV cache + state)"}

    def draw(ax):
        for i, (name, s) in enumerate(data["series"].items()):
            ax.plot(data["x"], s["hybrid"], color=f"C{i}", marker="o", markersize=3, label=f"{name}")
            ax.plot(data["x"], s["all_attention"], color=f"C{i}", linestyle="--", label=f"{name}, all attention")
        ax.set_xscale("log", base=2)
        ax.legend(fontsize=6, loc="lower center")

    return Plot(
        PLOT,
        title,
        _render(title, labels, data, draw),
        "Solid: the hybrid (KV cache of its attention layers + a state constant in context); dashed: the same "
        "shape with every layer attention.",
    )


def render_hybrid_memory(plot: Plot) -> str:
    rows = []
    for name in MODELS:
        m = hybrid_preset(name).model()
        mem = hybrid_inference_memory(m, CONTEXTS[-1])
        rows.append(
            {
                "model": name,
                "layers (attention / state)": f"{m.count()} ({m.count(mixer='attention')} / {m.count(mixer='mamba')})",
                "weights GiB": fmt.gib(mem.weights_bytes),
                "KV cache GiB": fmt.gib(mem.kv_cache_bytes),
                "state GiB": fmt.gib(mem.conv_state_bytes + mem.ssm_state_bytes),
                "all-attention KV GiB": fmt.gib(mem.all_attention_kv_bytes),
            }
        )
    body = (
        f"At {CONTEXTS[-1]:,} tokens, batch 1, bf16 weights and KV "
        "cache, fp32 recurrent state (`sizing hybrid`, docs/hybrid.md):\n\n"
        f"{fmt.markdown_table(rows)}\n\n![{plot.title}]({plot.path})\n\n{plot.note}\n"
    )
    return fmt.document(fmt.GENERATED_NOTE, "# Hybrid models: memory against context", body)
