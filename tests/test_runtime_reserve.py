"""The runtime reserve (sizing.memory.runtime) in every `sizing memory` fit decision."""

import json

from click.testing import CliRunner

from sizing.cli import main
from sizing.memory import inference_memory, training_memory
from sizing.memory.runtime import (
    CUDA_CONTEXT_BYTES,
    NCCL_COMMUNICATOR_BYTES,
    default_runtime_reserve,
    given_runtime_reserve,
)

GIB = 2**30


def _json(*args):
    out = CliRunner().invoke(main, ["memory", *args, "--format", "json"])
    assert out.exit_code in (0, 3), out.output
    return json.loads(out.output)


def test_the_default_parts():
    assert CUDA_CONTEXT_BYTES == GIB // 2  # ~300-700 MB (pytorch#107667, #37250)
    assert NCCL_COMMUNICATOR_BYTES == 2 * 32 * 4 * 2**20 == 256 * 2**20  # NCCL_BUFFSIZE 4 MiB x 32 x 2
    assert default_runtime_reserve(0).total_bytes == GIB // 2
    assert default_runtime_reserve(1).total_bytes == GIB // 2 + GIB // 4


def test_cli_takes_the_reserve_off_the_gpu_and_prints_it():
    args = ("--preset", "llama2-70b", "--inference", "--context", "4096", "--batch", "8", "--weight-dtype", "int4")
    one = _json(*args, "--gpu", "h100")
    # 0.5 GiB of CUDA context on one GPU: H100 81,559 MiB less 512 MiB
    assert one["runtime_reserve_bytes"] == GIB // 2
    assert one["headroom_bytes"] == 81_559 * 2**20 - GIB // 2 - one["peak_bytes"]
    assert one["max_batch"] == 36  # 37 without the reserve (the API's default)
    api = inference_memory("llama2-70b", 4096, 8, "int4", gpu="h100")
    assert api.max_batch == 37 and api.runtime_reserve_bytes == 0
    sharded = _json("--preset", "llama2-7b", "--gpu", "h100", "--zero", "3", "--dp", "8")
    assert sharded["runtime_reserve_bytes"] == GIB // 2 + GIB // 4  # + one NCCL communicator
    text = CliRunner().invoke(main, ["memory", "--preset", "llama2-7b", "--gpu", "h100", "--zero", "3", "--dp", "8"])
    assert "runtime reserve                      CUDA context + NCCL buffers (not tensors)" in text.output
    assert "nvidia-smi shows about the total + this" in text.output


def test_a_given_reserve_can_turn_a_fit_into_a_no():
    # llama2-7b, ZeRO-3 over 8 H100s at micro-batch 2: 70,432,546,820 bytes per GPU (docs/memory.md)
    fits = _json("--preset", "llama2-7b", "--gpu", "h100", "--zero", "3", "--dp", "8", "-b", "2")
    assert fits["fits"] and fits["per_gpu"]["total_bytes"] == 70_432_546_820
    room = 81_559 * 2**20 - 70_432_546_820  # 15,088,262,140 bytes = 14.05 GiB
    args = ["memory", "--preset", "llama2-7b", "--gpu", "h100", "--zero", "3", "--dp", "8", "-b", "2"]
    tight = _json(*args[1:], "--runtime-reserve", "14.1")  # over by 0.05 GiB: within the allocator's band
    assert room < round(14.1 * GIB) and not tight["fits"] and tight["verdict"] == "tight"
    assert CliRunner().invoke(main, args + ["--runtime-reserve", "14.1"]).exit_code == 0
    # the band is 9.2/80 of 81,559 MiB = 9,834,893,148 bytes (9.16 GiB): 14.05 + 9.16 + 0.1 GiB is a clear no
    assert tight["verdict_band_bytes"] == round(9.2 / 80 * 81_559 * 2**20) == 9_834_893_148
    out = CliRunner().invoke(main, args + ["--runtime-reserve", "23.31"])
    assert room + 9_834_893_148 < round(23.31 * GIB) and out.exit_code == 3
    assert _json("--preset", "llama2-7b", "--gpu", "h100", "--runtime-reserve", "0")["runtime_reserve_bytes"] == 0
    bad = CliRunner().invoke(main, ["memory", "--preset", "llama2-7b", "--runtime-reserve", "-1"])
    assert bad.exit_code == 2 and "--runtime-reserve" in bad.output
    api = training_memory(
        "llama2-7b", gpu="h100", zero=3, dp=8, micro_batch=2, runtime_reserve=given_runtime_reserve(0)
    )
    assert api.fits
