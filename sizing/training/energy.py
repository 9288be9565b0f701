"""Energy and CO2 of a training run, as model cards publish them beside GPU-hours.

    energy (kWh)  = GPU-hours x power per GPU (W) / 1000 x PUE
    CO2 (tCO2eq)  = energy (kWh) x grid carbon intensity (kgCO2eq/kWh) / 1000

This is the Llama 2 model card's method (Touvron et al. 2023, section 2.2.1 and Table 2): "Power
Consumption: peak power capacity per GPU device for the GPUs used adjusted for power usage
efficiency", i.e. the GPU's TDP, 400 W for the A100-80GB, times its GPU-hours. The card leaves
out CPUs, networking and cooling beyond what its power figure folds in, so the default PUE is
1.0 (its convention); give the data centre's PUE to count the building too.

Power per GPU defaults to the datasheet TDP below (the most a board draws; the average at
40% MFU is lower, so this is an upper bound on the GPUs' own draw). The grid intensity defaults
to the one the Llama 2 card implies: 539.00 tCO2eq over its 1,272,729.6 kWh (7B, 13B and 70B at
400 W: 2,273,280 GPU-hours; 34B at 350 W: 1,038,336) = 0.4235 kgCO2eq/kWh. Each row
recomputed with it lands within 0.01 t of the card (tests/test_energy.py): the card's own rows
imply 0.42345 to 0.42350, so no single intensity reproduces every row's last digit.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from sizing.inputs import get_gpu
from sizing.validate import require_number

WATTS_PER_KW = 1000
KG_PER_TONNE = 1000

DEFAULT_PUE = 1.0  # the Llama 2 card's convention: GPU power alone
DEFAULT_KG_CO2_PER_KWH = 0.4235  # implied by the Llama 2 model card's totals (see above)
DEFAULT_CARBON_SOURCE = "implied by the Llama 2 model card: 539.00 tCO2eq / 1,272,729.6 kWh"
MAX_WATTS = 100_000.0  # a per-GPU figure; a node's or a rack's is a typo

# TDP per GPU (W), from each vendor's datasheet. TPUs publish no per-chip TDP: give --power.
TDP_WATTS: dict[str, tuple[float, str]] = {
    "v100": (300, "NVIDIA V100 datasheet: SXM2 300 W"),
    "v100-pcie": (250, "NVIDIA V100 datasheet: PCIe 250 W"),
    "a100-40gb": (400, "NVIDIA A100 datasheet: SXM 400 W"),
    "a100-80gb": (400, "NVIDIA A100 datasheet: SXM 400 W (the Llama 2 card's 400 W)"),
    "a100-pcie-80gb": (300, "NVIDIA A100 datasheet: PCIe 80GB 300 W"),
    "h100-sxm": (700, "NVIDIA H100 datasheet: SXM up to 700 W"),
    "h100-pcie": (350, "NVIDIA H100 datasheet: PCIe 300-350 W"),
    "h800": (700, "NVIDIA H800 SXM: 700 W, as the H100 SXM it derives from"),
    "h200": (700, "NVIDIA H200 datasheet: SXM up to 700 W"),
    "b200": (1000, "NVIDIA HGX B200 datasheet: 1,000 W per GPU"),
    "mi300x": (750, "AMD Instinct MI300X datasheet: 750 W"),
    "l40s": (350, "NVIDIA L40S datasheet: 350 W"),
    "rtx4090": (450, "NVIDIA GeForce RTX 4090 specifications: 450 W total graphics power"),
    "rtx3090": (350, "NVIDIA GeForce RTX 3090 specifications: 350 W total graphics power"),
    "rtx5090": (575, "NVIDIA GeForce RTX 5090 specifications: 575 W total graphics power"),
    "rtx-a6000": (300, "NVIDIA RTX A6000 datasheet: 300 W"),
}


def energy_kwh(gpu_hours: float, watts: float, pue: float = DEFAULT_PUE) -> float:
    """GPU-hours x W / 1000 x PUE."""
    return gpu_hours * watts / WATTS_PER_KW * pue


def co2_tonnes(kwh: float, kg_co2_per_kwh: float = DEFAULT_KG_CO2_PER_KWH) -> float:
    """kWh x kgCO2eq/kWh / 1000."""
    return kwh * kg_co2_per_kwh / KG_PER_TONNE


@dataclass(frozen=True)
class Energy:
    gpu_hours: float
    watts: float
    watts_source: str
    pue: float
    kg_co2_per_kwh: float
    carbon_source: str
    kwh: float
    tco2eq: float

    def to_dict(self) -> dict:
        """Flat, as the training section of `sizing estimate --format json` carries it."""
        return {
            "power_watts_per_gpu": self.watts,
            "power_source": self.watts_source,
            "pue": self.pue,
            "grid_kg_co2eq_per_kwh": self.kg_co2_per_kwh,
            "grid_source": self.carbon_source,
            "energy_kwh": self.kwh,
            "tco2eq": self.tco2eq,
        }


def run_energy(
    gpu_hours: float,
    gpu: str,
    watts: float | None = None,
    pue: float = DEFAULT_PUE,
    kg_co2_per_kwh: float | None = None,
) -> Energy | None:
    """Energy and CO2 of `gpu_hours` on `gpu`; None when the GPU has no TDP here and no watts
    are given. Inputs are checked finite and in range (SizingError naming the field)."""
    if watts is not None:
        require_number("power_watts", watts, 0, MAX_WATTS)
    require_number("pue", pue, 1, 10, what="a number in [1, 10] (1.0: GPU power alone)")
    if kg_co2_per_kwh is not None:
        require_number("grid_kg_co2eq_per_kwh", kg_co2_per_kwh, 0, 10, what="kgCO2eq per kWh in [0, 10]")
    require_number("gpu_hours", gpu_hours, 0, sys.float_info.max)  # any finite count a run can have
    key = get_gpu(gpu).key
    if watts is None:
        if key not in TDP_WATTS:
            return None
        watts, watts_source = TDP_WATTS[key]
    else:
        watts_source = "given"
    kg, carbon_source = (
        (DEFAULT_KG_CO2_PER_KWH, DEFAULT_CARBON_SOURCE) if kg_co2_per_kwh is None else (kg_co2_per_kwh, "given")
    )
    kwh = energy_kwh(gpu_hours, watts, pue)
    return Energy(gpu_hours, watts, watts_source, pue, kg, carbon_source, kwh, co2_tonnes(kwh, kg))
