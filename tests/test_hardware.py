"""The GPU table carries the dense peaks and memory of tests/fixtures/reference-figures.json."""

import pytest

from sizing.inputs.hardware import GPUS, get_gpu, gpu_for_device_name
from sizing.validate import SizingError

# reference-figures.json name -> our key (the 40GB A100 and the PCIe 80GB share the SXM rates)
REFERENCE_NAMES = {
    "V100 SXM2 16/32GB": "v100",
    "V100 PCIe 32GB": "v100-pcie",
    "A100 SXM4 80GB": "a100-80gb",
    "A100 PCIe 80GB": "a100-pcie-80gb",
    "H100 SXM5 80GB": "h100-sxm",
    "H100 PCIe 80GB": "h100-pcie",
    "H200 SXM 141GB": "h200",
    "B200 (HGX/DGX, 1000 W)": "b200",
    "AMD MI300X": "mi300x",
    "TPU v4": "tpu-v4",
    "TPU v5e": "tpu-v5e",
    "TPU v5p": "tpu-v5p",
    "L40S 48GB": "l40s",
    "RTX 4090 24GB": "rtx4090",
}


def test_peaks_match_reference_figures(reference_figures):
    seen = 0
    for entry in reference_figures["hardware"]:
        key = REFERENCE_NAMES.get(entry["name"])
        if key is None:  # H100 NVL: its figures are marked unverified there, so it is not in our table
            assert "unverified" in entry["status"]
            continue
        gpu = GPUS[key]
        for dtype in ("bf16", "fp16", "fp8", "tf32", "fp32"):
            assert gpu.peak_tflops.get(dtype) == entry[f"{dtype}_tflops"], (key, dtype)
        assert gpu.memory_gib == entry["memory_gb"] and gpu.bandwidth_tbs == entry["bandwidth_tbs"]
        seen += 1
    assert seen == len(REFERENCE_NAMES)


def test_a100_40gb_shares_the_80gb_rates():
    assert GPUS["a100-40gb"].peak_tflops == GPUS["a100-80gb"].peak_tflops
    assert GPUS["a100-40gb"].memory_gib == 40


@pytest.mark.parametrize(
    "device_name,key",
    [
        ("NVIDIA H200", "h200"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
        ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA GeForce RTX 4090", "rtx4090"),
    ],
)
def test_device_names(device_name, key):
    assert gpu_for_device_name(device_name).key == key


def test_aliases_and_errors():
    assert get_gpu("A100").key == "a100-80gb" and get_gpu("H100").key == "h100-sxm"
    with pytest.raises(KeyError, match="did you mean"):
        get_gpu("h30")
    with pytest.raises(KeyError, match="no bf16 peak"):
        get_gpu("v100").peak_flops_per_second("bf16")
    # one documented type: SizingError (a ValueError); still a KeyError for older callers
    with pytest.raises(SizingError, match="unknown gpu 'h30'"):
        get_gpu("h30")
    with pytest.raises(SizingError, match="a100-80gb has no fp8 peak"):
        get_gpu("a100").peak_flops_per_second("fp8")
    assert get_gpu("v100").default_dtype == "fp16"


def test_h800_shares_the_h100_sxm_compute_with_a_narrower_nvlink():
    h800, h100 = get_gpu("h800"), get_gpu("h100")
    assert h800.peak_tflops == h100.peak_tflops and h800.bandwidth_tbs == h100.bandwidth_tbs
    assert (h800.nvlink_gbs, h100.nvlink_gbs) == (200, 450)  # 400 vs 900 GB/s bidirectional


@pytest.mark.parametrize(
    "spelling,key",
    [
        ("h100-80gb", "h100-sxm"),
        ("H100-SXM5", "h100-sxm"),
        ("NVIDIA H100 SXM5 80GB", "h100-sxm"),
        ("a100-80g", "a100-80gb"),
        ("A100_SXM4_40GB", "a100-40gb"),
        ("h200-141gb", "h200"),
        ("nvidia-h200", "h200"),
        ("mi300", "mi300x"),
    ],
)
def test_common_spellings(spelling, key):
    assert get_gpu(spelling).key == key


def test_fit_uses_the_memory_the_device_reports():
    # nvidia-smi: H200 143,771 MiB (the session's device reports about 140 GiB), H100 80GB 81,559 MiB,
    # A100 80GB 81,920 MiB (= 80 GiB, the sold figure)
    assert get_gpu("h200").memory_bytes == 143_771 * 2**20
    assert get_gpu("h100").memory_bytes == 81_559 * 2**20
    assert get_gpu("a100").memory_bytes == 80 * 2**30
    assert get_gpu("b200").memory_bytes == 180 * 2**30  # no device figure recorded: the sold capacity


def test_every_nvidia_gpu_has_interconnect_bandwidths_with_a_source():
    for g in GPUS.values():
        if g.key.startswith("tpu"):
            assert g.nvlink_gbs is None and g.network_gbs is None  # ICI topologies are not modelled
            continue
        assert g.nvlink_gbs > 0 and g.network_gbs > 0 and g.interconnect_source, g.key
        assert g.network_gbs < g.nvlink_gbs, g.key  # scale-out is the narrower link
