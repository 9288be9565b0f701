"""Megatron-Core's --recompute-modules (sizing.memory.stack_activations, sizing.parallel.memory_stack):
what each module drops from one layer's saved tensors, byte for byte, on DeepSeek-V3 (d 7168, MLA
q_lora 1536, kv_lora 512, d_rope 64, 128 heads of d_v 128, top-8 of experts f_e 2048, one shared
expert f_s 2048, dense d_ff 18432) at b 1, T 4096, bf16 (a = 2)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs import Workload, get_preset
from sizing.memory import stack_activation_terms, sum_terms
from sizing.parallel.memory_stack import conventions
from sizing.validate import SizingError

T, D, A = 4096, 7168, 2
MEGATRON = {"kernels": "fused", "loss": "fused"}
RECIPE = ("mla_up_proj", "layernorm", "moe", "mlp")  # NeMo deepseek_v3.py pretrain_recipe


def _cfg():
    return get_preset("deepseek-v3").config


def _layer(moe: bool, modules=None, recompute="selective", **kw) -> dict[str, int]:
    terms = stack_activation_terms(_cfg(), T, 1, "flash", recompute, A, moe, modules=modules, **MEGATRON, **kw)
    return {t.key: t.bytes for t in terms if t.per_layer}


def test_default_module_list_is_megatrons_selective():
    """core_attn alone (Megatron's default recompute_modules) is the attention-core recompute."""
    for moe in (True, False):
        assert _layer(moe, ("core_attn",)) == _layer(moe)


def test_recipe_modules_keep_the_norm_inputs_latents_and_attention_output():
    rstd = T * 4  # fp32 rstd per token
    expected = {
        "attn_norm.input": T * D * A,  # 58,720,256
        "attn_norm.rstd": rstd,
        "attn.q_a_norm.input": T * 1536 * A,  # the q latent
        "attn.q_a_norm.rstd": rstd,
        "attn.kv_a_norm.input": T * 512 * A,  # the kv latent
        "attn.kv_a_norm.rstd": rstd,
        "attn.k_rope": T * 64 * A,
        "attn.logsumexp": 128 * T * 4,  # core_attn not listed: flash attention's own saves
        "attn.out": T * 128 * 128 * A,
        "mlp_norm.input": T * D * A,  # the MoE re-runs from the norm, the norm from its input
        "mlp_norm.rstd": rstd,
    }
    assert _layer(True, RECIPE) == expected
    assert sum(expected.values()) == 271_122_432  # 2·58,720,256 + 4·16,384 + 12,582,912 + ... (0.25 GiB)
    assert _layer(False, RECIPE) == expected  # "mlp" does for the dense layers what "moe" does


def test_checkpointed_moe_keeps_its_bf16_input_under_fp8():
    """moe without layernorm: the norm output is the checkpoint's input, bf16 even under fp8."""
    kept = _layer(True, ("moe",), fp8_recipe="blockwise")
    assert kept["mlp_norm.output"] == T * D * A
    assert not [k for k in kept if k.startswith("moe.")]
    assert "attn.q" in kept and "attn_norm.output" in kept  # neither mla_up_proj nor layernorm listed


def test_moe_act_and_shared_experts():
    full = _layer(True, ("core_attn",))
    act = _layer(True, ("core_attn", "moe_act"))
    routed = T * 8  # b·T·k
    assert full["moe.experts.hidden"] == 2 * routed * 2048 * A + routed * 2048 * A
    assert act["moe.experts.hidden"] == 2 * routed * 2048 * A  # the activation's input only
    assert act["moe.experts.output"] == full["moe.experts.output"] == routed * D * A
    shared = _layer(True, ("core_attn", "shared_experts"))
    assert full["moe.shared.hidden"] == 3 * T * 2048 * A and "moe.shared.hidden" not in shared
    assert sum(full.values()) - sum(shared.values()) == 3 * T * 2048 * A


def test_modules_only_act_under_selective():
    none = stack_activation_terms(_cfg(), T, 1, "flash", "none", A, True, **MEGATRON)
    assert sum_terms(stack_activation_terms(_cfg(), T, 1, "flash", "none", A, True, modules=RECIPE, **MEGATRON)) == (
        sum_terms(none)
    )


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"recompute_modules": ("moe", "attn")}, "recompute_modules ('attn') must be one of"),
        ({"recompute_modules": ("moe", "moe")}, "names a module twice"),
        ({"recompute_modules": ()}, "non-empty tuple"),
        ({"recompute_modules": ("moe",), "recompute": "full"}, "needs recompute selective"),
        ({"recompute_modules": ("moe",), "selective": "op"}, "not selective op"),
    ],
)
def test_workload_refuses_bad_modules(fields, message):
    fields.setdefault("recompute", "selective")
    with pytest.raises(SizingError, match=re.escape(message)):
        Workload(4096, **fields)


def test_modules_need_a_megatron_style_stack():
    assert conventions("megatron-core", "bf16", "tensorwise", None, None, recompute_modules=RECIPE).modules == RECIPE
    for stack in ("torchtitan-eager", "fsdp", "hai-llm", None):
        with pytest.raises(SizingError, match="recompute_modules is Megatron-Core's option: it needs stack"):
            conventions(stack, "bf16", "tensorwise", None, None, recompute_modules=RECIPE)


def test_cli_names_the_bad_module():
    args = "parallel --preset deepseek-v3 --gpu h100 --dp 64 --pp 16 --ep 64 --stack megatron-core --zero 1"
    result = CliRunner().invoke(main, [*args.split(), "--recompute", "selective", "--recompute-modules", "moe,foo"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith("Error: recompute_modules ('foo') must be one of")
