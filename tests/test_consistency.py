"""One figure per quantity across commands: the GPU memory a fit uses (less one runtime reserve,
sizing.memory.runtime), one ridge point (named ideal or at the serve efficiencies), and names
that take no numeric range in `sizing sweep`."""

import json

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.memory.runtime import layout_runtime_reserve
from sizing.plan.sweeps import parse_values
from sizing.serve import serve
from sizing.serve.calibration import default_efficiencies
from sizing.validate import SizingError

GIB = 2**30
H100 = 81_559 * 2**20  # the device-reported memory (nvidia-smi), 79.65 GiB


def _json(*args):
    return json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).output)


def test_memory_and_parallel_use_the_same_h100_and_the_same_reserve_rule():
    mem = _json("memory", "--preset", "llama2-7b", "--gpu", "h100", "--zero", "3", "--dp", "8")
    par = _json("parallel", "--preset", "llama2-7b", "--gpu", "h100", "--dp", "8", "--fsdp", "full")
    assert mem["gpu_memory_bytes"] == par["gpu_memory_bytes"] == H100
    # one rank of dp 8: CUDA context 0.5 GiB + one NCCL communicator 0.25 GiB
    assert mem["runtime_reserve_bytes"] == par["runtime_reserve_bytes"] == GIB // 2 + GIB // 4
    assert par["headroom_bytes"] == H100 - par["runtime_reserve_bytes"] - par["per_gpu_bytes"]


def test_a_layout_counts_one_communicator_per_parallel_dimension():
    assert layout_runtime_reserve(1, 1, 1, 1, 1).total_bytes == GIB // 2
    assert layout_runtime_reserve(2, 8, 2, 4, 1).total_bytes == GIB // 2 + 4 * GIB // 4  # dp, tp, pp, cp


def test_one_ridge_point_with_its_label():
    est = serve("llama2-7b", 4096, 256, gpu="h100")
    ideal = 989.4e12 / 3.35e12  # 295.3 FLOPs/byte: the H100's bf16 peak over its HBM bandwidth
    assert default_efficiencies("h100") == (0.50, 0.90)  # the H100's calibrated serving pair (serve/calibration.py)
    assert est.ridge_intensity == pytest.approx(ideal * 0.50 / 0.90)  # 164.1 at those efficiencies
    out = CliRunner().invoke(
        main, ["serve", "--preset", "llama2-7b", "--gpu", "h100", "--batch", "1", "--prompt", "4096", "--output", "256"]
    )
    assert "ridge 164.1 FLOPs/byte at the efficiencies (ideal 295.3)" in out.output


def test_sweep_refuses_ranges_for_names():
    assert parse_values("n_layers", "24:32:8") == [24, 32]
    for field in ("gpu", "dtype", "attention", "recompute"):
        with pytest.raises(SizingError, match="takes names, not a start:stop:step range"):
            parse_values(field, "1:3")
    out = CliRunner().invoke(main, ["sweep", "-p", "llama2-7b", "--gpu", "1:3"])
    assert out.exit_code == 2 and "takes names" in out.output
