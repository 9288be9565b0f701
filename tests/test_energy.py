"""Energy and CO2 (sizing.training.energy) against the Llama 2 model card (Touvron et al. 2023, Table 2;
tests/fixtures/reference-figures.json has the GPU-hours): GPU-hours x 400 W (350 W for 34B)
x PUE 1 x 0.4235 kgCO2eq/kWh. Tolerance 0.01 t: the card's rows imply intensities 0.42345 to
0.42350, so one intensity meets each row to within one unit of its last digit, not all exactly."""

import json

import pytest
from click.testing import CliRunner

from sizing import estimate
from sizing.cli import main
from sizing.training.energy import DEFAULT_KG_CO2_PER_KWH, co2_tonnes, energy_kwh, run_energy
from sizing.validate import SizingError

# (model, GPU-hours, W per GPU, tCO2eq) from the Llama 2 card
LLAMA2_CARD = [
    ("7B", 184_320, 400, 31.22),
    ("13B", 368_640, 400, 62.44),
    ("34B", 1_038_336, 350, 153.90),
    ("70B", 1_720_320, 400, 291.42),
]


@pytest.mark.parametrize(("model", "hours", "watts", "published"), LLAMA2_CARD)
def test_llama2_card_rows(model, hours, watts, published):
    e = run_energy(hours, "a100-80gb", watts=None if watts == 400 else watts)
    assert e.watts == watts  # 400 W is the A100-80GB's TDP, the default
    assert e.kwh == hours * watts / 1000  # 7B: 73,728 kWh
    assert abs(e.tco2eq - published) <= 0.01, (model, e.tco2eq)


def test_llama2_card_total_is_539():
    total = sum(run_energy(h, "a100-80gb", watts=w).tco2eq for _, h, w, _ in LLAMA2_CARD)
    assert round(total, 2) == 539.00  # the card's total: 539 tCO2eq, 3,311,616 GPU-hours
    assert sum(h for _, h, _, _ in LLAMA2_CARD) == 3_311_616


def test_formulas_and_inputs():
    assert energy_kwh(1000, 700, 1.1) == pytest.approx(770.0)  # 1,000 H100-hours at 700 W, PUE 1.1
    assert co2_tonnes(770.0, 0.5) == pytest.approx(0.385)
    assert DEFAULT_KG_CO2_PER_KWH == 0.4235
    assert run_energy(10, "tpu-v5p") is None  # no TDP published: give the power
    assert run_energy(10, "tpu-v5p", watts=500).kwh == 5.0
    for bad in ({"pue": 0.9}, {"watts": float("nan")}, {"kg_co2_per_kwh": -1}):
        with pytest.raises(SizingError):
            run_energy(10, "h100", **bad)


def test_estimate_carries_energy_in_json_and_table():
    est = estimate("llama2-7b", gpu="h100", tokens="2T", memory=False, pue=1.2, grid_kg_co2_per_kwh=0.3)
    t = est.to_dict()["training"]
    assert t["power_watts_per_gpu"] == 700 and t["pue"] == 1.2
    assert t["energy_kwh"] == pytest.approx(t["gpu_hours"] * 0.7 * 1.2)
    assert t["tco2eq"] == pytest.approx(t["energy_kwh"] * 0.3 / 1000)
    out = CliRunner().invoke(main, ["estimate", "--preset", "llama2-7b", "--gpu", "a100", "--no-memory"])
    assert "energy (GPU-hours x W x PUE)" in out.output and "tCO2eq (0.4235 kg/kWh, Llama 2 card)" in out.output
    data = json.loads(
        CliRunner()
        .invoke(main, ["estimate", "--preset", "llama2-7b", "--power", "300", "--format", "json", "--no-memory"])
        .output
    )
    assert data["training"]["power_watts_per_gpu"] == 300 and data["training"]["power_source"] == "given"
    bad = CliRunner().invoke(main, ["estimate", "--preset", "llama2-7b", "--pue", "0.5"])
    assert bad.exit_code == 2 and "--pue (0.5)" in bad.output


def test_the_published_runs_table_carries_the_card_rows():
    from sizing.report.published_runs import llama_rows

    rows = {r["model"]: r for r in llama_rows()}
    for model, card in (("Llama-2-7B", 31.22), ("Llama-2-13B", 62.44), ("Llama-2-70B", 291.42)):
        assert abs(float(rows[model]["tCO2eq (0.4235 kg/kWh)"]) - card) <= 0.01 + 1e-9  # one unit of the last digit
    assert rows["Llama-2-7B"]["MWh (TDP, PUE 1)"] == "73.7"  # 184,320 h x 400 W
