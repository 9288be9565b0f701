"""The serving engines' own constants, read from sizing/data/engine_memory.json where each carries
its source: the memory a GPU reports to the engine, vLLM's default profiling batch by GPU class,
the bytes its dummy sampler holds per logit, and the MXFP4 MoE kernel padding of each GPU family.

    reported memory   = the logged torch.cuda.mem_get_info total of that GPU, else the device's
                        memory less what the driver keeps (434 MiB: H100 and RTX 3090 logs)
    profiling batch   = vLLM V1's defaults: 8192 tokens and 1024 sequences on a GPU of >= 70 GiB
                        that is not an A100, else 2048 and 256 (vllm/engine/arg_utils.py)
"""

from __future__ import annotations

from functools import cache
from statistics import median

from sizing.inputs import GIB, GPU, data_files, get_gpu
from sizing.validate import require_choice

VLLM_PROFILES = ("v1", "v0")  # which vLLM profiling run: V1 (2025-) or the V0 engine (-2024)
LARGE_GPU_GIB = 70  # vLLM's threshold for its larger default batch (arg_utils.py)
MIB = 2**20


@cache
def _content() -> dict:
    return data_files.builtin("engine_memory.json")


def reported_memory_bytes(gpu: GPU | str) -> tuple[int, str]:
    """(bytes, why) of the total memory `gpu` reports to torch.cuda.mem_get_info: the logged
    figure where one is in the data file, else the device memory less the driver's share."""
    entry = get_gpu(gpu) if isinstance(gpu, str) else gpu
    reported = _content()["reported_memory"]
    for row in reported["logged"]:
        if row["gpu"] == entry.key:
            return round(row["gib"] * GIB), f"logged {row['gib']} GiB ({row['source']})"
    reserved = reported["driver_reserved_mib"]
    return entry.memory_bytes - reserved * MIB, f"device memory less the {reserved} MiB the driver keeps"


def is_large_gpu(gpu: GPU) -> bool:
    """vLLM's rule for its larger default batch: >= 70 GiB and not an A100."""
    return gpu.memory_bytes >= LARGE_GPU_GIB * GIB and not gpu.key.startswith("a100")


def vllm_default_batch(gpu: GPU | str) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) vLLM V1's server picks on `gpu` by default."""
    entry = get_gpu(gpu) if isinstance(gpu, str) else gpu
    v = _content()["vllm"]
    size = "large" if is_large_gpu(entry) else "other"
    return v["max_num_batched_tokens"][size], v["max_num_seqs"][size]


def sampler_bytes_per_logit(profile: str = "v1") -> int:
    """Bytes vLLM's dummy top-k/top-p sampler holds per logit at its peak (data file: v1 28, v0 40)."""
    return _content()["vllm"]["sampler_bytes_per_logit"][require_choice("vllm profile", profile, VLLM_PROFILES)]


def mxfp4_moe_alignment(gpu: GPU | str) -> tuple[int, int, str] | None:
    """(intermediate, hidden, backend) multiples vLLM's MXFP4 MoE kernel on `gpu` pads each rank's
    expert matrices to; None where vLLM runs no MXFP4 kernel (the checkpoint's shapes)."""
    key = (get_gpu(gpu) if isinstance(gpu, str) else gpu).key
    for backend, row in _content()["mxfp4_moe"]["backends"].items():
        if key in row["gpus"]:
            return row["intermediate"], row["hidden"], backend
    return None


@cache
def default_non_torch_bytes() -> int:
    """The median 'non_torch_memory' of the vLLM start-up logs in sizing/data/engine_logs.json."""
    rows = data_files.builtin("engine_logs.json")["rows"]
    logged = [r["logged"]["non_torch_gib"] for r in rows if r["engine"] == "vllm" and "non_torch_gib" in r["logged"]]
    return round(median(logged) * GIB)
