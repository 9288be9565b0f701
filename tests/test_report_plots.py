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
