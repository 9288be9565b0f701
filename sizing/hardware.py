"""Accelerators: peak dense (no 2:4 sparsity) matmul rates per dtype and memory.

Figures are those of ../shared/reference-figures.json ("hardware"), which cites a source
for each; tests check this table against that file. HBM capacities are sold in binary
units (nvidia-smi shows 81,920 MiB for an A100 80GB), so `memory_gib` is GiB.
"""

from __future__ import annotations

from dataclasses import dataclass

from .names import lookup
from .validate import UnknownName, show
from .vocabulary import COMPUTE_DTYPES

DTYPES = COMPUTE_DTYPES  # the dtypes a GPU can have a peak rate for


@dataclass(frozen=True)
class GPU:
    key: str
    name: str
    peak_tflops: dict  # dtype -> dense TFLOP/s
    memory_gib: float
    bandwidth_tbs: float
    source: str
    device_names: tuple = ()  # substrings of torch.cuda.get_device_name() that mean this GPU

    def peak_flops_per_second(self, dtype: str) -> float:
        """Dense peak FLOP/s in `dtype`; UnknownName (a SizingError and a KeyError) for a
        dtype this GPU has no rate for."""
        if dtype not in DTYPES:
            raise UnknownName(f"dtype ({show(dtype)}) must be one of: {', '.join(DTYPES)}")
        if dtype not in self.peak_tflops:
            raise UnknownName(f"gpu {self.key} has no {dtype} peak; available: {', '.join(self.peak_tflops)}")
        return self.peak_tflops[dtype] * 1e12

    @property
    def default_dtype(self) -> str:
        return "bf16" if "bf16" in self.peak_tflops else next(iter(self.peak_tflops))

    @property
    def memory_bytes(self) -> int:
        return int(self.memory_gib * 2**30)


def _gpu(key, name, memory_gib, bandwidth_tbs, source, device_names=(), **rates):
    peak = {dtype: rates[dtype] for dtype in DTYPES if rates.get(dtype) is not None}
    return GPU(key, name, peak, memory_gib, bandwidth_tbs, source, tuple(device_names))


_NV_A100 = "NVIDIA A100 datasheet (via glennklockwood.com/garden/processors/A100)"
GPUS: dict[str, GPU] = {
    g.key: g
    for g in [
        _gpu(
            "v100",
            "V100 SXM2 32GB",
            32,
            0.9,
            "cli99/llm-analysis gpu_configs/v100-sxm-32gb.json",
            ("V100-SXM",),
            fp16=125,
            fp32=15.7,
        ),
        _gpu(
            "v100-pcie",
            "V100 PCIe 32GB",
            32,
            0.9,
            "cli99/llm-analysis gpu_configs/v100-pcie-32gb.json",
            ("V100-PCIE",),
            fp16=112,
            fp32=14.0,
        ),
        _gpu(
            "a100-40gb",
            "A100 SXM4 40GB",
            40,
            1.555,
            _NV_A100,
            ("A100-SXM4-40GB", "A100-PCIE-40GB"),
            bf16=312,
            fp16=312,
            tf32=156,
            fp32=19.5,
        ),
        _gpu(
            "a100-80gb",
            "A100 SXM4 80GB",
            80,
            2.039,
            _NV_A100,
            ("A100-SXM4-80GB",),
            bf16=312,
            fp16=312,
            tf32=156,
            fp32=19.5,
        ),
        _gpu(
            "a100-pcie-80gb",
            "A100 PCIe 80GB",
            80,
            1.935,
            _NV_A100,
            ("A100 80GB PCIe", "A100-PCIE-80GB"),
            bf16=312,
            fp16=312,
            tf32=156,
            fp32=19.5,
        ),
        _gpu(
            "h100-sxm",
            "H100 SXM5 80GB",
            80,
            3.35,
            "NVIDIA H100 datasheet (dense = half the sparse headline)",
            ("H100 80GB HBM3", "H100 SXM"),
            bf16=989.4,
            fp16=989.4,
            fp8=1978.9,
            tf32=494.7,
            fp32=66.9,
        ),
        _gpu(
            "h100-pcie",
            "H100 PCIe 80GB",
            80,
            2.0,
            "cli99/llm-analysis gpu_configs (fp16 756, 2000 GB/s)",
            ("H100 PCIe",),
            bf16=756,
            fp16=756,
            fp8=1513,
            tf32=378,
            fp32=51,
        ),
        _gpu(
            "h200",
            "H200 SXM 141GB",
            141,
            4.8,
            "NVIDIA H200 (same GH100 compute as H100 SXM; 141 GB HBM3e)",
            ("H200",),
            bf16=989.4,
            fp16=989.4,
            fp8=1978.9,
            tf32=494.7,
            fp32=66.9,
        ),
        _gpu(
            "b200",
            "B200 (HGX, 1000 W)",
            180,
            8.0,
            "glennklockwood.com/garden/processors/B200 (HGX B200 dense)",
            ("B200",),
            bf16=2250,
            fp16=2250,
            fp8=4500,
            tf32=1100,
            fp32=80,
        ),
        _gpu(
            "mi300x",
            "AMD MI300X",
            192,
            5.3,
            "AMD MI300X (dense BF16 1307.4, FP8 2614.9)",
            ("MI300X",),
            bf16=1307.4,
            fp16=1307.4,
            fp8=2614.9,
            tf32=653.7,
            fp32=163.4,
        ),
        _gpu("tpu-v4", "TPU v4", 32, 1.2, "cloud.google.com/tpu/docs/v4", (), bf16=275),
        _gpu("tpu-v5e", "TPU v5e", 16, 0.819, "cloud.google.com/tpu/docs/v5e", (), bf16=197),
        _gpu("tpu-v5p", "TPU v5p", 95, 2.765, "cloud.google.com/tpu/docs/v5p", (), bf16=459),
        _gpu(
            "l40s",
            "L40S 48GB",
            48,
            0.864,
            "NVIDIA L40S datasheet table",
            ("L40S",),
            bf16=362.05,
            fp16=362.05,
            fp8=733,
            tf32=183,
            fp32=91.6,
        ),
        _gpu(
            "rtx4090",
            "RTX 4090 24GB",
            24,
            1.008,
            "waredb.com nvidia-geforce-rtx-4090 (dense tensor rates)",
            ("RTX 4090",),
            bf16=165.2,
            fp16=165.2,
            fp8=330.3,
            tf32=82.6,
            fp32=82.6,
        ),
    ]
}
GPU_ALIASES = {"a100": "a100-80gb", "h100": "h100-sxm", "v100-sxm": "v100", "4090": "rtx4090"}


def get_gpu(name: str) -> GPU:
    """The table entry for a name or alias ('A100', 'h100_sxm'); UnknownName (a SizingError
    and a KeyError) naming the closest GPUs otherwise."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-") if isinstance(name, str) else name
    return lookup(key, GPUS, GPU_ALIASES, "gpu", f"valid: {', '.join(GPUS)}", cutoff=0.5)


def gpu_for_device_name(device_name: str) -> GPU | None:
    """The table entry for torch.cuda.get_device_name(), e.g. 'NVIDIA H200' -> h200."""
    for gpu in GPUS.values():
        if any(pattern.lower() in device_name.lower() for pattern in gpu.device_names):
            return gpu
    return None
