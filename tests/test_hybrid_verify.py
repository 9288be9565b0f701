"""reference_model.verify.hybrid: the plain-PyTorch Mamba-2, gated-DeltaNet and ViT builds agree with
sizing.hybrid / sizing.vision.model (params on meta, toy FLOPs under FlopCounterMode, state bytes), the
chunked scans equal their recurrences, and a wrong formula is caught."""

import pytest

torch = pytest.importorskip("torch")

from reference_model.verify.hybrid import verify_mixer, verify_tower  # noqa: E402
from sizing.hybrid.mixers import Mamba2Mixer  # noqa: E402
from sizing.hybrid.presets import hybrid_preset  # noqa: E402
from sizing.vision.hf import vlm_from_hf_config  # noqa: E402
from sizing.vision.presets import vision_preset  # noqa: E402


@pytest.mark.parametrize("name", ["nemotron-h-8b", "qwen3-next-80b-a3b"])
def test_mixers_match(name):
    result = verify_mixer(name, hybrid_preset(name).model().mixer)
    assert result.ok, result.rows
    assert all(row[3] == 0 for row in result.rows)
    by_name = {row[0]: row for row in result.rows}
    # the full-size state of one layer: Nemotron-H conv (8192 + 2·8·128) x 4 in bf16, SSM 128·64·128 in fp32
    if name == "nemotron-h-8b":
        assert by_name["state bytes conv (bf16)"][2] == (8192 + 2 * 8 * 128) * 4 * 2
        assert by_name["state bytes ssm (fp32)"][2] == 128 * 64 * 128 * 4


def test_windowed_tower_matches():
    tower = vlm_from_hf_config(vision_preset("qwen2.5-vl-7b").hf_config)[1].tower
    result = verify_tower("qwen2.5-vl-7b", tower)
    assert result.ok, result.rows
    assert result.rows[0][2] == 631_975_680


def test_a_wrong_scan_formula_is_caught(monkeypatch):
    real = Mamba2Mixer.scan_flops_per_token
    monkeypatch.setattr(Mamba2Mixer, "scan_flops_per_token", lambda self: real(self) + 2)
    result = verify_mixer("nemotron-h-8b", hybrid_preset("nemotron-h-8b").model().mixer)
    assert not result.ok


def test_verify_hybrid_flag_runs_the_checks(monkeypatch):
    from click.testing import CliRunner

    import reference_model.verify.hybrid as hv
    from sizing.cli import main

    tower = vlm_from_hf_config(vision_preset("llava-1.5-7b").hf_config)[1].tower
    monkeypatch.setattr(hv, "verify_hybrid_presets", lambda: [verify_tower("llava-1.5-7b", tower)])
    out = CliRunner().invoke(main, ["verify", "--hybrid", "--format", "json"])
    assert out.exit_code == 0, out.output
    assert '"check": "vision"' in out.output and '"ok": true' in out.output
