"""Accelerators: peak dense (no 2:4 sparsity) matmul rates per dtype, memory and bandwidths.

Peaks, capacities and HBM bandwidths are those of tests/fixtures/reference-figures.json
("hardware", a copy of the project's seed file), which cites a source for each; the tests check
this table against it. `memory_gib` is the capacity a GPU is sold by, read as GiB (nvidia-smi
shows 81,920 MiB for an A100 80GB). Where the memory the device itself reports is known and
differs (an H100 80GB shows 81,559 MiB, an H200 143,771 MiB), `device_memory_mib` holds it and
`memory_bytes`, which every "will it fit" answer uses, is that figure.

Interconnect bandwidths are per GPU and per direction, in GB/s (10^9 bytes/s), the figure a
collective's bus bandwidth is measured against (NCCL's busbw):
- `nvlink_gbs`: the scale-up link inside a node (NVLink / Infinity Fabric / PCIe where a card has
  no NVLink); the datasheets quote the bidirectional total, twice this.
- `network_gbs`: the scale-out link between nodes in the vendor's reference node (one NIC per
  GPU: 200 Gb/s HDR InfiniBand on DGX A100, 400 Gb/s NDR on DGX H100/H200/B200).
Both are nominal: achieved bus bandwidth is lower, which callers express as an efficiency.
"""

from __future__ import annotations

from dataclasses import dataclass

from .names import lookup
from .units import GIB
from .validate import UnknownName, show
from .vocabulary import COMPUTE_DTYPES

DTYPES = COMPUTE_DTYPES  # the dtypes a GPU can have a peak rate for


@dataclass(frozen=True)
class GPU:
    key: str
    name: str
    peak_tflops: dict  # dtype -> dense TFLOP/s
    memory_gib: float
    bandwidth_tbs: float  # HBM, TB/s (10^12 bytes/s)
    source: str
    device_names: tuple = ()  # substrings of torch.cuda.get_device_name() that mean this GPU
    nvlink_gbs: float | None = None  # scale-up, per direction, GB/s (None: not modelled)
    network_gbs: float | None = None  # scale-out, per GPU per direction, GB/s (None: not modelled)
    interconnect_source: str = ""
    device_memory_mib: int | None = None  # what nvidia-smi / torch report, where known

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
        """The memory a model must fit in: the device-reported figure where known, else the
        sold capacity as GiB."""
        if self.device_memory_mib is not None:
            return self.device_memory_mib * 2**20
        return int(self.memory_gib * GIB)

    @property
    def hbm_bytes_per_second(self) -> float:
        return self.bandwidth_tbs * 1e12


def _gpu(key, name, memory_gib, bandwidth_tbs, source, device_names=(), link=None, mib=None, **rates):
    """One row; `link` = (nvlink_gbs, network_gbs, source) per direction, `mib` the device-reported memory."""
    peak = {dtype: rates[dtype] for dtype in DTYPES if rates.get(dtype) is not None}
    nvlink, network, link_source = link if link is not None else (None, None, "")
    return GPU(
        key, name, peak, memory_gib, bandwidth_tbs, source, tuple(device_names), nvlink, network, link_source, mib
    )


# Interconnects, per direction (half the datasheets' bidirectional totals). NVLink generations:
# 2 (V100) 300 GB/s total, 3 (A100) 600, 4 (H100/H200) 900, H800 400 (export variant), 5 (B200) 1,800.
_NVL2 = (150, 12.5, "NVIDIA V100 datasheet: NVLink 300 GB/s; DGX-1: 100 Gb/s EDR per GPU")
_NVL3 = (300, 25, "NVIDIA A100 datasheet: NVLink 600 GB/s; DGX A100: 200 Gb/s HDR InfiniBand per GPU")
_NVL4 = (450, 50, "NVIDIA H100 datasheet: NVLink 900 GB/s; DGX H100: 400 Gb/s NDR InfiniBand per GPU")
_NVL4_H200 = (450, 50, "NVIDIA H200 datasheet: NVLink 900 GB/s; HGX H200: 400 Gb/s NDR InfiniBand per GPU")
_NVL_H800 = (
    200,
    50,
    "NVIDIA H800 (export variant): NVLink 400 GB/s; 400 Gb/s InfiniBand per GPU as in the DeepSeek-V3 "
    "report (arXiv:2412.19437 sec. 3.1: IB 50 GB/s, NVLink 160 GB/s achievable)",
)
_NVL5 = (900, 50, "NVIDIA B200 datasheet: NVLink 5 1.8 TB/s; DGX B200: 400 Gb/s ConnectX-7 per GPU")
_PCIE4 = (32, 25, "PCIe 4.0 x16: 32 GB/s per direction (no NVLink assumed); 200 Gb/s network per GPU assumed")
_PCIE5 = (64, 50, "PCIe 5.0 x16: 64 GB/s per direction (no NVLink assumed); 400 Gb/s network per GPU assumed")
_MI300X = (448, 50, "AMD MI300X: 7 Infinity Fabric links, 896 GB/s peer total; 400 Gb/s network per GPU assumed")


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
            link=_NVL2,
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
            link=(16, 12.5, "PCIe 3.0 x16: 16 GB/s per direction; 100 Gb/s network per GPU assumed"),
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
            link=_NVL3,
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
            link=_NVL3,
            mib=81920,  # nvidia-smi
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
            link=_PCIE4,
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
            link=_NVL4,
            mib=81559,  # nvidia-smi
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
            link=_PCIE5,
            bf16=756,
            fp16=756,
            fp8=1513,
            tf32=378,
            fp32=51,
        ),
        _gpu(
            "h800",
            "H800 SXM5 80GB",
            80,
            3.35,
            "NVIDIA H800: the H100 SXM5 die and HBM3 with NVLink cut to 400 GB/s (DeepSeek-V3 trained on it, "
            "arXiv:2412.19437); dense rates as H100 SXM",
            ("H800",),
            link=_NVL_H800,
            bf16=989.4,
            fp16=989.4,
            fp8=1978.9,
            tf32=494.7,
            fp32=66.9,
        ),
        _gpu(
            "h200",
            "H200 SXM 141GB",
            141,
            4.8,
            "NVIDIA H200 (same GH100 compute as H100 SXM; 141 GB HBM3e)",
            ("H200",),
            link=_NVL4_H200,
            mib=143771,  # nvidia-smi
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
            link=_NVL5,
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
            link=_MI300X,
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
            link=_PCIE4,
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
            link=_PCIE4,
            bf16=165.2,
            fp16=165.2,
            fp8=330.3,
            tf32=82.6,
            fp32=82.6,
        ),
        # The GPUs people fine-tune on at home and in the lab. GeForce tensor rates are the dense
        # ones with FP32 accumulate (half the FP16-accumulate headline), as for the 4090 above.
        _gpu(
            "rtx3090",
            "RTX 3090 24GB",
            24,
            0.936,
            "NVIDIA Ampere GA102 GPU architecture whitepaper, appendix A (RTX 3090: FP16/BF16 tensor with "
            "FP32 accumulate 71 dense, TF32 35.6, 936 GB/s GDDR6X)",
            ("RTX 3090",),
            link=_PCIE4,
            bf16=71,
            fp16=71,
            tf32=35.6,
            fp32=35.6,
        ),
        _gpu(
            "rtx5090",
            "RTX 5090 32GB",
            32,
            1.792,
            "NVIDIA RTX Blackwell GPU architecture whitepaper, appendix A (RTX 5090: FP16/BF16 tensor with "
            "FP32 accumulate 209.5 dense, FP8 419, TF32 104.8, 1,792 GB/s GDDR7)",
            ("RTX 5090",),
            link=_PCIE5,
            bf16=209.5,
            fp16=209.5,
            fp8=419,
            tf32=104.8,
            fp32=104.8,
        ),
        _gpu(
            "rtx-a6000",
            "RTX A6000 48GB",
            48,
            0.768,
            "NVIDIA Ampere GA102 GPU architecture whitepaper, appendix A (RTX A6000: FP16/BF16 tensor with "
            "FP32 accumulate 154.8 dense, TF32 77.4, FP32 38.7, 768 GB/s GDDR6)",
            ("RTX A6000",),
            link=_PCIE4,
            bf16=154.8,
            fp16=154.8,
            tf32=77.4,
            fp32=38.7,
        ),
    ]
}
# The spellings people type (vendor names, memory sizes, form factors): each maps to one row.
GPU_ALIASES = {
    "a100": "a100-80gb",
    "a100-80g": "a100-80gb",
    "a100-sxm": "a100-80gb",
    "a100-sxm4": "a100-80gb",
    "a100-sxm4-80gb": "a100-80gb",
    "a100-40g": "a100-40gb",
    "a100-sxm4-40gb": "a100-40gb",
    "a100-pcie": "a100-pcie-80gb",
    "h100": "h100-sxm",
    "h100-80gb": "h100-sxm",
    "h100-80g": "h100-sxm",
    "h100-sxm5": "h100-sxm",
    "h100-sxm5-80gb": "h100-sxm",
    "h100-hbm3": "h100-sxm",
    "h100-pcie-80gb": "h100-pcie",
    "h800-sxm": "h800",
    "h800-80gb": "h800",
    "h200-141gb": "h200",
    "h200-sxm": "h200",
    "b200-180gb": "b200",
    "b200-192gb": "b200",
    "mi300": "mi300x",
    "mi300x-192gb": "mi300x",
    "v100-sxm": "v100",
    "v100-sxm2": "v100",
    "v100-32gb": "v100",
    "l40s-48gb": "l40s",
    "4090": "rtx4090",
    "rtx-4090": "rtx4090",
    "3090": "rtx3090",
    "rtx-3090": "rtx3090",
    "5090": "rtx5090",
    "rtx-5090": "rtx5090",
    "a6000": "rtx-a6000",
    "rtxa6000": "rtx-a6000",
}


def get_gpu(name: str) -> GPU:
    """The table entry for a name or alias ('A100', 'h100_sxm'); UnknownName (a SizingError
    and a KeyError) naming the closest GPUs otherwise."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-") if isinstance(name, str) else name
    if isinstance(key, str):
        key = key.removeprefix("nvidia-").removeprefix("amd-")
    return lookup(key, GPUS, GPU_ALIASES, "gpu", f"valid: {', '.join(GPUS)}", cutoff=0.5, typed=name)


def gpu_for_device_name(device_name: str) -> GPU | None:
    """The table entry for torch.cuda.get_device_name(), e.g. 'NVIDIA H200' -> h200."""
    for gpu in GPUS.values():
        if any(pattern.lower() in device_name.lower() for pattern in gpu.device_names):
            return gpu
    return None


# Dense peaks of the integer and 4-bit formats W8A8 / W4A4 serving runs at (TOPS or TFLOP/s),
# apart from `peak_tflops` so the training dtypes stay as they are. Dense = half the sparse
# figure the datasheets headline.
LOW_PRECISION_TFLOPS: dict[str, dict[str, float]] = {
    "h100-sxm": {"int8": 1978.9},  # NVIDIA H100 datasheet: INT8 3,958 TOPS with sparsity
    "h200": {"int8": 1978.9},  # NVIDIA H200 datasheet: INT8 3,958 TOPS with sparsity
    "b200": {"int8": 4500, "fp4": 9000},  # NVIDIA HGX B200 datasheet: per GPU INT8 9 POPS, FP4 18 PFLOPS sparse
    "mi300x": {"int8": 2614.9},  # AMD MI300X datasheet: INT8 2,614.9 TOPS dense
}


def low_precision_peak_flops_per_second(gpu: GPU, dtype: str) -> float:
    """Dense int8 / fp4 peak of `gpu` (ops/s); UnknownName where the table has none."""
    rates = LOW_PRECISION_TFLOPS.get(gpu.key, {})
    if dtype not in rates:
        have = ", ".join(rates) or "none"
        raise UnknownName(f"gpu {gpu.key} has no {show(dtype)} peak in the table; available: {have}")
    return rates[dtype] * 1e12
