"""DeepSeek-V3's multi-token-prediction module (sizing.formulas.mtp): parameters pinned, FLOPs by hand."""

import pytest

from sizing.formulas import mtp
from sizing.formulas import params as P
from sizing.inputs.presets import get_preset
from sizing.validate import SizingError

CFG = get_preset("deepseek-v3").config
d, V = 7168, 129280


def test_deepseek_v3_with_mtp_exact():
    # The MoE block (sizing.formulas.params.layer_params, the largest block): 11,507,286,016; the module adds
    # enorm, hnorm and the head norm (3·d) and eh_proj (2d·d); the checkpoint stores copies of the
    # embedding and head (2·V·d) inside it.
    block = P.layer_params(CFG)
    assert block == 11_507_286_016
    assert mtp.mtp_params(CFG) == block + 3 * d + 2 * d * d == 11_610_067_968
    with_copies = mtp.mtp_params(CFG, copies=True)
    assert with_copies == 11_610_067_968 + 2 * V * d == 13_463_426_048
    assert P.total_params(CFG) == 671_026_404_352
    assert P.total_params(CFG) + with_copies == 684_489_830_400
    # DeepSeek-V3 README: "685B ... 671B of the Main Model weights and 14B of the MTP Module";
    # 684.49B is within 0.1% of 685B (the README's 671 + 14 rounds each part up separately).
    assert abs((P.total_params(CFG) + with_copies) / 685e9 - 1) < 1e-3


def test_mtp_flops_by_hand():
    skipped = (256 - 8) * P.expert_params(CFG)
    weights = 2 * d * d + (P.layer_params(CFG) - skipped) + V * d
    keys = 4096
    attn = 2 * 128 * keys * (192 + 128)  # MLA: q/k 128 + 64 = 192 wide, v 128, 128 heads
    assert mtp.mtp_draft_flops_per_token(CFG, keys) == 2 * weights + attn
    T = 4096
    pairs = T * (T + 1) // 2
    expected = 3 * (2 * weights * T + 2 * 128 * pairs * (192 + 128))
    assert mtp.mtp_training_flops(CFG, T, depth=1, attention="causal") == expected
    assert mtp.mtp_training_flops(CFG, T, depth=2, attention="causal") == 2 * expected


@pytest.mark.parametrize(
    ("args", "field"), [((0,), "seq_len"), ((8, -1), "mtp depth"), ((8, 1, "sliding"), "attention")]
)
def test_bad_input_names_the_field(args, field):
    with pytest.raises(SizingError, match=field):
        mtp.mtp_training_flops(CFG, *args)


def _estimate_json(*args: str) -> dict:
    import json

    from click.testing import CliRunner

    from sizing.cli import main

    out = CliRunner().invoke(main, ["estimate", *args, "--format", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_estimate_prints_the_mtp_modules_the_config_states():
    """DeepSeek-V3 (num_nextn_predict_layers 1): the module by component, sized apart from the 671B."""
    result = _estimate_json("--preset", "deepseek-v3")
    m = result["mtp"]
    assert result["params"]["total"] == 671_026_404_352  # the MTP module is in no total
    assert m["depth"] == 1 and m["params_shared"] == 11_610_067_968 and m["params_checkpoint"] == 13_463_426_048
    assert m["checkpoint_total"] == 684_489_830_400
    assert sum(m["module_components"].values()) == m["params_checkpoint"]
    expected = mtp.mtp_training_flops(CFG, 4096, 1, "full")  # the estimate's T and attention convention
    assert m["training_flops_per_token"] == expected // 4096 and m["forward_flops_per_token"] == expected // 3 // 4096


def test_mtp_depth_overrides_the_config():
    """--mtp-depth D: D modules (DeepSeek-V3 trains with D = 1; the option sizes others); 0: none."""
    two = _estimate_json("--preset", "deepseek-v3", "--mtp-depth", "2")["mtp"]
    assert two["params_checkpoint"] == 2 * 13_463_426_048
    assert two["training_flops_per_token"] == mtp.mtp_training_flops(CFG, 4096, 2, "full") // 4096
    assert "mtp" not in _estimate_json("--preset", "deepseek-v3", "--mtp-depth", "0")
    assert "mtp" not in _estimate_json("--preset", "llama2-7b")
    # GLM-4.5-Air (num_nextn_predict_layers 1): its MoE block 2,341,492,736 + 3 norms of d + eh_proj 2d·d, d = 4096
    glm = _estimate_json("--preset", "glm-4.5-air")["mtp"]
    assert glm["depth"] == 1 and glm["params_shared"] == 2_341_492_736 + 3 * 4096 + 2 * 4096 * 4096 == 2_375_059_456
