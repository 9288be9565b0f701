"""Accelerators (the entries are data, in `sizing/data/gpus.json`, and a user's own gpus.json:
sizing.inputs.data_files): peak dense (no 2:4 sparsity) matmul rates per dtype, memory and bandwidths.

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

from sizing.inputs import data_files
from sizing.inputs.names import lookup
from sizing.inputs.units import GIB
from sizing.validate import UnknownName, show
from sizing.vocabulary import COMPUTE_DTYPES

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


def _peaks(value, label: str) -> dict:
    """peak_tflops: {dtype: dense TFLOP/s}, dtypes from DTYPES, each a positive finite number."""
    peaks = data_files.check_field(label, "peak_tflops", "dict", value)
    bad = [k for k in peaks if k not in DTYPES]
    if bad:
        raise data_files.DataFileError(f"{label}: peak_tflops dtype ({bad[0]!r}) must be one of: {', '.join(DTYPES)}")
    if not peaks:
        raise data_files.DataFileError(f"{label}: peak_tflops must give at least one dtype's rate")
    return peaks


@data_files.cached_table
def _tables() -> tuple[dict[str, GPU], dict[str, str]]:
    """(GPUs by key, aliases): the built-in file, then the user's (no key reused)."""
    return data_files.table_with_user_files(GPU, "gpus", "key", {"peak_tflops": _peaks})


GPUS = data_files.LiveTable(_tables, 0)  # key -> GPU, read on first use
GPU_ALIASES = data_files.LiveTable(_tables, 1)


def get_gpu(name: str) -> GPU:
    """The table entry for a name or alias ('A100', 'h100_sxm'); UnknownName (a SizingError
    and a KeyError) naming the closest GPUs otherwise."""
    key = name.strip().lower().replace("_", "-").replace(" ", "-") if isinstance(name, str) else name
    if isinstance(key, str):
        key = key.removeprefix("nvidia-").removeprefix("amd-")
    gpus, aliases = _tables()
    return lookup(key, gpus, aliases, "gpu", f"valid: {', '.join(gpus)}", cutoff=0.5, typed=name)


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
