"""The report plots' papercuts: gpu-hours.png labels every model once with no two labels
overlapping; training-memory.png shows settings that fit as well as the one that does not."""

import math

from sizing.inputs.hardware import get_gpu
from sizing.memory import training_memory
from sizing.report import memory_summary
from sizing.report.plots import (
    HOURS_GPUS,
    MEMORY_CONTEXT,
    MEMORY_MODEL,
    MEMORY_SETTINGS,
    MICRO_BATCHES,
    _label_positions,
    gpu_hours_data,
    memory_settings_data,
)

CHAR, HEIGHT = 0.042, 0.13  # the plot's label box, in log10 units


def test_gpu_hours_labels_do_not_overlap_even_in_clusters():
    data = gpu_hours_data()
    assert {"gpt3-125m", "opt-125m", "pythia-160m", "gpt3-175b", "opt-175b", "bloom-176b"} <= set(data)
    assert all(set(HOURS_GPUS) <= set(p) for p in data.values())  # both GPUs' points for every model
    mids = {n: (p["params"], math.sqrt(p[HOURS_GPUS[0]] * p[HOURS_GPUS[1]])) for n, p in data.items()}
    placed = _label_positions(mids, CHAR, HEIGHT)
    assert set(placed) == set(data)  # one label per model
    boxes = [(math.log10(x), math.log10(y), CHAR * len(n)) for n, (x, y) in placed.items()]
    for i, (x1, y1, w1) in enumerate(boxes):
        for x2, y2, w2 in boxes[i + 1 :]:
            assert not (abs(y1 - y2) < HEIGHT - 1e-9 and x1 < x2 + w2 and x2 < x1 + w1)


def test_label_placement_moves_a_clustered_label_up():
    placed = _label_positions({"a": (1e9, 1e4), "b": (1.01e9, 1.01e4)}, CHAR, HEIGHT)
    assert placed["a"] == (10 ** (9 + 0.03), 1e4)
    assert math.log10(placed["b"][1]) >= 4 + HEIGHT


def test_training_memory_plot_shows_what_fits():
    data = memory_settings_data()
    capacity = get_gpu(memory_summary.MEMORY_GPU).memory_bytes
    default = data["series"][MEMORY_SETTINGS[0][0]]
    assert all(v > capacity for v in default)  # what `sizing estimate` assumes: never fits llama2-7b
    for i, b in enumerate(MICRO_BATCHES):  # at every micro-batch some setting fits
        assert any(values[i] <= capacity for values in data["series"].values()), b
    label, zero, dp, recompute = MEMORY_SETTINGS[-1]
    expected = training_memory(MEMORY_MODEL, MEMORY_CONTEXT, 16, zero=zero, dp=dp, recompute=recompute)
    assert data["series"][label][-1] == expected.per_gpu_bytes


def test_gpu_hours_labels_stay_inside_and_off_the_points():
    data = gpu_hours_data()
    mids = {n: (p["params"], math.sqrt(p[HOURS_GPUS[0]] * p[HOURS_GPUS[1]])) for n, p in data.items()}
    every = tuple((p["params"], p[g]) for p in data.values() for g in HOURS_GPUS)
    ys = [y for _, y in every]
    bounds = (10 ** math.floor(math.log10(min(ys))), 10 ** (math.ceil(math.log10(max(ys))) + 0.3))
    placed = _label_positions(mids, CHAR, HEIGHT, markers=every, bounds=bounds)
    for name, (x, y) in placed.items():
        lx, ly, width = math.log10(x), math.log10(y), CHAR * len(name)
        assert math.log10(bounds[0]) <= ly - HEIGHT / 2 and ly + HEIGHT / 2 <= math.log10(bounds[1]), name
        for mx, my in every:  # no label box covers a marker
            inside_x = lx - 0.02 < math.log10(mx) < lx + width + 0.02
            assert not (inside_x and abs(math.log10(my) - ly) < HEIGHT / 2 + 0.06 - 1e-9), (name, mx, my)


def _drawn(module, plot, monkeypatch):
    """The axes a report plot draws, instead of its PNG: (legend labels, lines, x tick labels)."""
    from matplotlib.figure import Figure

    seen = {}

    def render(title, labels, data, draw, margins=None):
        ax = Figure().add_subplot()
        draw(ax)
        seen["ax"] = ax
        return b""

    monkeypatch.setattr(module, "_render", render)
    plot()
    ax = seen["ax"]
    return ax.get_legend_handles_labels()[1], ax.get_lines(), [t.get_text() for t in ax.get_xticklabels()]


def test_every_reference_line_is_in_the_legend(monkeypatch):
    """parallel-memory.png's GPU memory ticks, serving-tokens-per-second.png's largest-batch lines
    and the TPOT bound of serving-throughput-vs-latency.png are named in their legends."""
    from sizing.report import parallel_layouts, serve_plots, serving_capacity

    published = [(run.name, parallel_layouts.published_plan(run)[0]) for run in parallel_layouts.PUBLISHED_LAYOUTS]
    legend, lines, _ = _drawn(parallel_layouts, lambda: parallel_layouts._memory_plot(published[:2], []), monkeypatch)
    assert "GPU memory" in legend
    legend, lines, ticks = _drawn(serve_plots, serve_plots._tokens_plot, monkeypatch)
    dotted = [line.get_label() for line in lines if line.get_linestyle() == ":"]
    assert dotted and all(not label.startswith("_") and label in legend for label in dotted)
    assert ticks[:3] == ["1", "2", "4"]  # batches written as numbers
    legend, _, ticks = _drawn(serving_capacity, serving_capacity.throughput_latency_plot, monkeypatch)
    assert "TPOT bound 50 ms" in legend and {"10", "20", "50", "100"} <= set(ticks)  # milliseconds, not 10^k
