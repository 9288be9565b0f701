"""The hybrid memory page builder (sizing.report.hybrid_memory), run in-process on a temp dir."""

from sizing.report.hybrid_memory import CONTEXTS, hybrid_memory_data, hybrid_memory_plot, render_hybrid_memory

GIB = 2**30


def test_page_and_plot_build(tmp_path):
    data = hybrid_memory_data()
    jamba = data["series"]["jamba-v0.1"]
    # from 4K to 256K (x64) the all-attention KV grows 64x; Jamba's only in its 4 attention layers
    kv_all = [a - jamba["all_attention"][0] for a in jamba["all_attention"]]
    kv_hybrid = [h - jamba["hybrid"][0] for h in jamba["hybrid"]]
    assert CONTEXTS[-1] == 262144
    assert abs(kv_all[-1] - 32 * (1 - 1 / 64)) < 1e-9 and abs(kv_hybrid[-1] - 4 * (1 - 1 / 64)) < 1e-9
    plot = hybrid_memory_plot(data)
    assert plot.png.startswith(b"\x89PNG")
    page = render_hybrid_memory(plot)
    (tmp_path / "hybrid-memory.md").write_text(page)
    assert "jamba-v0.1" in page and plot.path in page and "32.00" in page and "4.00" in page
