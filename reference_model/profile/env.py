"""Where a profile ran: the device, driver and library versions, and the peak rate its MFU
is measured against (sizing's GPU table, or --peak-tflops)."""

from __future__ import annotations

import platform
import subprocess
from typing import Any

import torch

from sizing.inputs import GPU, gpu_for_device_name


def driver_version() -> str | None:
    """The NVIDIA driver version from nvidia-smi (or pynvml); None when neither answers."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().splitlines()[0].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:  # pynvml ships with some torch installs
        import pynvml

        pynvml.nvmlInit()
        version = pynvml.nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:
        return None


def environment(device: torch.device) -> dict[str, Any]:
    env: dict[str, Any] = {
        "device": device.type,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env.update(
            device_name=torch.cuda.get_device_name(device),
            compute_capability=f"{props.major}.{props.minor}",
            device_memory_bytes=props.total_memory,
            cuda=torch.version.cuda,
            cudnn=torch.backends.cudnn.version(),
            driver=driver_version(),
        )
    else:
        env.update(device_name=platform.processor() or platform.machine() or "cpu", cpu_threads=torch.get_num_threads())
    return env


def peak_rate(env: dict, dtype: str, peak_tflops: float | None) -> tuple[GPU | None, float | None, str]:
    """(sizing's GPU entry, the dense peak FLOP/s for `dtype`, where the peak came from)."""
    cuda = env["device"] == "cuda"
    gpu = gpu_for_device_name(env["device_name"]) if cuda else None
    if peak_tflops is not None:
        return gpu, peak_tflops * 1e12, "--peak-tflops"
    if not cuda:
        return None, None, "CPU: no peak rate (give --peak-tflops for an MFU)"
    if gpu is None:
        return None, None, f"'{env['device_name']}' is not in sizing's GPU table: give --peak-tflops"
    if dtype not in gpu.peak_tflops:
        return gpu, None, f"{gpu.key} has no {dtype} peak in sizing's table: give --peak-tflops"
    return gpu, gpu.peak_flops_per_second(dtype), f"sizing GPU table: {gpu.key}, dense {dtype}"
