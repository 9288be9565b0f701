"""Hybrid SSM / linear-attention models (sizing.hybrid) against Hugging Face's own modeling code.

Ground truth: tests/fixtures/hf_counts_hybrid.json, written by tools/hf_counts_hybrid.py with
transformers 5.24.0: the parameters of each preset's model built on the meta device, and the
conv / recurrent state bytes its cache held after one forward of a small bf16 model per family.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.cli import main
from sizing.hybrid import hybrid_from_hf_config
from sizing.hybrid import model as M
from sizing.hybrid.activations import hybrid_activations_bytes
from sizing.hybrid.memory import hybrid_inference_memory, kv_cache_bytes, state_bytes
from sizing.hybrid.mixers import GatedDeltaNet, Mamba2Mixer
from sizing.hybrid.presets import HYBRID_PRESETS, hybrid_preset
from sizing.inputs.config import ConfigError

COUNTED = json.loads((Path(__file__).parent / "fixtures" / "hf_counts_hybrid.json").read_text())
GIB = 2**30


def test_fixture_names_its_transformers_version_and_covers_every_preset():
    assert COUNTED["transformers"] == "5.24.0" and "5.24.0" in COUNTED["_source"]
    assert set(COUNTED["counts"]) == {p.name for p in HYBRID_PRESETS}


@pytest.mark.parametrize("preset", HYBRID_PRESETS, ids=lambda p: p.name)
def test_total_equals_transformers_and_components_sum(preset):
    counted = COUNTED["counts"][preset.name]
    assert counted["hf_config"] == preset.hf_config  # the counts are of this preset's config
    m = preset.model()
    assert M.total_params(m) == counted["total"]
    assert sum(M.param_components(m).values()) == M.total_params(m)
    experts = M.param_components(m).get("moe.experts", 0)
    assert experts == counted["routed_expert_params"]


@pytest.mark.parametrize("preset", HYBRID_PRESETS, ids=lambda p: p.name)
def test_published_total_within_its_rounding(preset):
    # published figures are rounded to the digits the source gives ("52B", "2.7B"): half a unit
    total = M.total_params(preset.model())
    if preset.truncated:  # Bamba-9B is 9.78B: the name truncates
        assert preset.published_total <= total < preset.published_total * (1 + preset.rounding)
        return
    assert abs(total / preset.published_total - 1) <= preset.rounding


def test_published_active_counts():
    # Jamba: "12B active" (12.11B, embeddings and lm_head included); Qwen3-Next "3B activated":
    # 3.87B with the 2 x 311M embedding and lm_head, 3.25B without; the card's figure is the latter.
    jamba = hybrid_preset("jamba-v0.1").model()
    assert M.active_params(jamba) == 12_110_311_296 and round(M.active_params(jamba) / 1e9) == 12
    qn = hybrid_preset("qwen3-next-80b-a3b").model()
    embed = 2 * 151936 * 2048
    assert M.active_params(qn) == 3_874_929_408 and round((M.active_params(qn) - embed) / 1e9) == 3


def test_mamba2_layer_by_hand():
    # mamba2-2.7b layer: d 2560, H 80, P 64 (d_inner 5120), N 128, G 1, K 4
    mix = hybrid_preset("mamba2-2.7b").model().mixer
    conv = 5120 + 2 * 1 * 128  # x, B, C = 5376
    p = mix.params()
    assert p["mamba.in_proj"] == 2560 * (5120 + conv + 80)  # z, x, B, C, dt
    assert p["mamba.conv1d"] == conv * 4 + conv
    assert p["mamba.norm"] == 5120 and p["mamba.D"] == p["mamba.A_log"] == p["mamba.dt_bias"] == 80
    assert p["mamba.out_proj"] == 5120 * 2560
    assert mix.state_elements() == {"conv": conv * 4, "ssm": 80 * 64 * 128}


def test_mamba2_flops_by_hand():
    mix = Mamba2Mixer(d_model=64, n_heads=4, head_dim=32, d_state=16, n_groups=2, conv_kernel=4, chunk=8)
    proj = 2 * (64 * (128 + 192 + 4) + 128 * 64) + 2 * 192 * 4  # in/out_proj + depthwise conv
    scan = 2 * (2 * 8 * 16 + 4 * 8 * 32 + 2 * 4 * 16 * 32)  # C·Bᵀ, (C·Bᵀ)·x, Bᵀ·x, C·h
    assert mix.prefill_flops_per_token() == proj + scan
    assert mix.decode_flops_per_token() == proj + 2 * 2 * 4 * 32 * 16


def test_deltanet_by_hand():
    dn = GatedDeltaNet(d_model=64, n_k_heads=2, n_v_heads=4, d_k=16, d_v=24, conv_kernel=4, chunk=8)
    p = dn.params()
    assert p["deltanet.in_proj_qkvz"] == 64 * (2 * 32 + 2 * 96) and p["deltanet.in_proj_ba"] == 64 * 8
    assert p["deltanet.conv1d"] == (2 * 32 + 96) * 4 and p["deltanet.norm"] == 24
    assert dn.state_elements() == {"conv": 160 * 4, "ssm": 4 * 16 * 24}
    assert dn.scan_flops_per_token() == 2 * 4 * (3 * 8 * 16 + 2 * 8 * 24 + 3 * 16 * 24)


@pytest.mark.parametrize("family", sorted(COUNTED["state_bytes_bf16"]))
def test_state_bytes_equal_hf_cache(family):
    measured = COUNTED["state_bytes_bf16"][family]
    assert "error" not in measured
    # HF keeps the conv state in the model's dtype and the recurrent state in fp32
    assert measured["dtypes"] == ["conv:torch.bfloat16", "ssm:torch.float32"]
    m = hybrid_from_hf_config(measured["config"])
    assert state_bytes(m, 1, conv_dtype="bf16", ssm_dtype="fp32") == {
        "conv": measured["conv_bytes"],
        "ssm": measured["ssm_bytes"],
    }


def test_jamba_256k_kv_cache_matches_the_paper():
    # Jamba paper (arXiv:2403.19887) Table 1, 256K context, bf16: Jamba 4GB, Mixtral 32GB. Jamba's
    # 4 attention layers x 2 x 8 kv heads x 128 x 262144 x 2 bytes = 4 GiB; the same shape with
    # all 32 layers attention (Mixtral's) = 32 GiB.
    m = hybrid_preset("jamba-v0.1").model()
    mem = hybrid_inference_memory(m, 262144)
    assert mem.kv_cache_bytes == 4 * 2 * 8 * 128 * 262144 * 2 == 4 * GIB
    assert mem.all_attention_kv_bytes == 32 * GIB
    # the 28 Mamba layers' state: conv 8192 x 4 in bf16, SSM 8192 x 16 in fp32, whatever the context
    assert mem.conv_state_bytes == 28 * 8192 * 4 * 2 and mem.ssm_state_bytes == 28 * 8192 * 16 * 4
    assert kv_cache_bytes(m, 2 * 262144) == 2 * mem.kv_cache_bytes
    assert hybrid_inference_memory(m, 1024).ssm_state_bytes == mem.ssm_state_bytes


def test_falcon_h1_runs_attention_and_mamba_in_every_layer():
    m = hybrid_preset("falcon-h1-7b").model()
    assert m.count(mixer="attention") == m.count(mixer="mamba") == m.count() == 44
    # no gated norm (mamba_rms_norm false): in_proj, conv1d, dt_bias, A_log, D, out_proj only
    assert "mamba.norm" not in m.mixer.params()
    assert kv_cache_bytes(m, 1000) == 1000 * 44 * 2 * 2 * 128 * 2


def test_nemotron_pattern_counts():
    m = hybrid_preset("nemotron-h-8b").model()
    assert (m.count(mixer="mamba"), m.count(mixer="attention"), m.count(mlp="dense")) == (24, 4, 24)


@pytest.mark.parametrize(
    ("config", "field"),
    [
        (dict(hybrid_preset("nemotron-h-8b").hf_config, hybrid_override_pattern="M-E*", moe_latent_size=64), "latent"),
        (dict(hybrid_preset("nemotron-h-8b").hf_config, hybrid_override_pattern="M-X*"), "hybrid_override_pattern"),
        (dict(hybrid_preset("bamba-9b").hf_config, attn_layer_indices=[99]), "attn_layer_indices"),
        (dict(hybrid_preset("qwen3-next-80b-a3b").hf_config, layer_types=["x"]), "layer_types"),
        ({"model_type": "zamba2"}, "model_type"),
        (dict(hybrid_preset("jamba-v0.1").hf_config, num_hidden_layers=10**12), "num_hidden_layers"),
        (dict(hybrid_preset("jamba-v0.1").hf_config, num_hidden_layers=True), "num_hidden_layers"),
        (dict(hybrid_preset("falcon-h1-7b").hf_config, mamba_d_ssm=1000), "mamba_d_ssm"),
    ],
)
def test_refused_with_the_field_named(config, field):
    with pytest.raises(ConfigError, match=field):
        hybrid_from_hf_config(config)


def test_cli_json_and_errors(tmp_path):
    out = CliRunner().invoke(main, ["hybrid", "--preset", "jamba-v0.1", "--context", "262144", "--format", "json"])
    assert out.exit_code == 0, out.output
    s = json.loads(out.output)
    assert s["total_params"] == 51_570_323_328 and s["memory_bytes"]["kv_cache"] == 4 * GIB
    bad = CliRunner().invoke(main, ["hybrid", "--preset", "nope"])
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and "--preset" in bad.output
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "nemotron_h", "hybrid_override_pattern": "MX"}))
    bad = CliRunner().invoke(main, ["hybrid", "--config", str(path)])
    assert bad.exit_code == 2 and "hybrid_override_pattern" in bad.output and "Traceback" not in bad.output


def test_every_hybrid_type_is_pointed_to_from_the_block_stack_converter():
    from sizing.hybrid import HYBRID_CONVERTERS
    from sizing.inputs.hf.families import REFUSED_MODEL_TYPES, SIZED_BY_COMMAND

    hybrid = {t for t, c in SIZED_BY_COMMAND.items() if c.startswith("sizing hybrid")}
    assert hybrid == set(HYBRID_CONVERTERS) and not hybrid & set(REFUSED_MODEL_TYPES)


def test_block_stack_commands_size_a_hybrid_whole():
    """`memory` (training) takes a hybrid preset directly: exact model states, and the activations of
    each layer kind (sizing.hybrid.activations)."""
    out = CliRunner().invoke(main, ["memory", "--preset", "jamba-v0.1", "--seq-len", "4096", "--format", "json"])
    assert out.exit_code == 3, out.output  # 51.6B parameters x 16 bytes do not fit one H100
    memory = json.loads(out.output)["memory"]
    assert memory["model_states_bytes"] == 16 * 51_570_323_328
    assert memory["activations_bytes"] == hybrid_activations_bytes(hybrid_preset("jamba-v0.1").model(), 4096)
    needs = CliRunner().invoke(main, ["memory", "--preset", "jamba-v0.1"])  # the preset states no context
    assert needs.exit_code == 2 and "--seq-len is needed" in needs.output and needs.output.count("\n") == 1


def test_max_batch_and_context_follow_from_attention_layers_only():
    from sizing.hybrid.memory import max_batch, max_context, per_sequence_bytes

    m = hybrid_preset("jamba-v0.1").model()
    weights = 2 * 51_570_323_328
    state = 28 * 8192 * 4 * 2 + 28 * 8192 * 16 * 4  # conv bf16 + SSM fp32, one sequence
    per_seq = 4 * GIB + state
    assert per_sequence_bytes(m, 262144) == per_seq
    capacity = 140 * GIB
    assert max_batch(m, 262144, capacity) == (capacity - weights) // per_seq == 10  # 43.9 GiB free / 4.02 GiB
    # the longest context at batch 1: KV 4·2·8·128·2 = 16,384 bytes per token after weights and state
    assert max_context(m, 1, capacity) == (capacity - weights - state) // 16384
    assert max_batch(m, 262144, weights) == 0 and max_context(m, 1, weights) == 0
    mamba = hybrid_preset("mamba2-2.7b").model()
    assert max_context(mamba, 1, 80 * GIB) is None  # no attention layer: no KV cache grows


def test_cli_gpu_fit():
    out = CliRunner().invoke(
        main, ["hybrid", "--preset", "jamba-v0.1", "--context", "262144", "--gpu", "h200", "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    fit = json.loads(out.output)["fit"]
    assert fit["max_batch_at_context"] > fit["all_attention_max_batch_at_context"] >= 0
    bad = CliRunner().invoke(main, ["hybrid", "--preset", "jamba-v0.1", "--gpu", "nope"])
    assert bad.exit_code == 2 and bad.output.startswith("Error:") and bad.output.count("\n") == 1


def test_presets_listing_names_the_other_commands():
    out = CliRunner().invoke(main, ["presets"]).output
    assert "`sizing hybrid`): mamba2-2.7b, jamba-v0.1" in out and "`sizing vision`): llava-1.5-7b" in out
    listed = json.loads(CliRunner().invoke(main, ["presets", "--format", "json"]).output)
    assert "jamba-v0.1" not in {p["name"] for p in listed}  # the JSON lists block-stack presets only


@given(
    groups=st.integers(1, 4),
    heads_per_group=st.integers(1, 3),
    head_dim=st.integers(1, 16),
    state=st.integers(1, 16),
    kernel=st.integers(1, 5),
    bias=st.booleans(),
    pattern=st.text(alphabet="M*-", min_size=1, max_size=12),
)
@settings(max_examples=40, deadline=None)
def test_nemotron_properties(groups, heads_per_group, head_dim, state, kernel, bias, pattern):
    cfg = dict(
        hybrid_preset("nemotron-h-8b").hf_config,
        hidden_size=32,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        intermediate_size=48,
        num_hidden_layers=len(pattern),
        hybrid_override_pattern=pattern,
        mamba_num_heads=groups * heads_per_group,
        mamba_head_dim=head_dim,
        ssm_state_size=state,
        n_groups=groups,
        conv_kernel=kernel,
        mamba_proj_bias=bias,
        vocab_size=64,
    )
    m = hybrid_from_hf_config(cfg)
    comps = M.param_components(m)
    assert sum(comps.values()) == M.total_params(m)
    n_m, n_a = pattern.count("M"), pattern.count("*")
    H = groups * heads_per_group
    conv = H * head_dim + 2 * groups * state
    assert comps.get("mamba.conv1d", 0) == n_m * conv * (kernel + 1)
    assert state_bytes(m, 3) == {"conv": 3 * n_m * conv * kernel * 2, "ssm": 3 * n_m * H * head_dim * state * 4}
    # KV grows with the context in the attention layers only; the state does not
    assert kv_cache_bytes(m, 10) == 10 * n_a * 2 * 2 * 8 * 2


def test_nemotron_flops_by_hand():
    m = hybrid_preset("nemotron-h-8b").model()
    d, V, f = 4096, 131072, 21504
    attn = d * 4096 + 2 * d * 1024 + 4096 * d  # q, k, v (8 kv heads x 128), o
    weights = 2 * (4 * attn + 24 * 2 * d * f + d * V)  # 4 attention layers, 24 relu² MLPs, lm_head
    assert M.weight_flops_per_token(m) == weights
    C = 8192
    scores = 2 * 4 * 32 * C * (128 + 128)  # QK^T and AV of one query over C keys, 4 layers
    assert M.decode_flops_per_token(m, C) == weights + 24 * m.mixer.decode_flops_per_token() + scores
    assert M.prefill_flops(m, C) == C * (weights + 24 * m.mixer.prefill_flops_per_token()) + C * scores
    assert M.training_flops(m, C) == 3 * M.prefill_flops(m, C)


def test_memory_inference_of_a_hybrid_is_its_state_and_attention_kv():
    """`sizing memory --inference` on Jamba gives `sizing hybrid`'s answer: the KV cache of its 4
    attention layers, 2 (K, V) x 8 kv heads x 128 x 2 bytes x 262,144 positions each = 4 GiB,
    against 32 GiB for the same shape with all 32 layers attention."""
    from click.testing import CliRunner

    from sizing.cli import main

    args = ["--preset", "jamba-v0.1", "--context", "262144", "--format", "json"]
    memory = CliRunner().invoke(main, ["memory", "--inference", *args])
    hybrid = CliRunner().invoke(main, ["hybrid", *args])
    assert memory.exit_code == 0 and memory.output == hybrid.output
    kv = json.loads(memory.output)["memory_bytes"]
    assert kv["kv_cache"] == 4 * 2 * 8 * 128 * 2 * 262_144
    assert kv["all_attention_kv_cache"] == 32 * 2 * 8 * 128 * 2 * 262_144


def test_training_memory_of_a_mamba2_model_counts_each_layers_saved_tensors():
    """Mamba2-2.7B, one sequence of T = 4096, bf16 (a = 2), d = 2560, d_inner 5120, 80 heads, 1 group of
    N = 128, V = 50,288: every layer keeps its pre-norm (fp32 input and normalised copy, rstd, gain,
    bf16 output) and what mamba_split_conv1d_scan_combined saves (zxbcdt, out_x, the gated norm's rstd);
    outside the layers the ids, the final norm, lm_head's input, the fp32 log-probs and the targets."""
    T, d, V = 4096, 2560, 50288
    norm = 2 * T * d * 4 + T * 4 + d * 4 + T * d * 2  # 104,884,224
    mamba = T * (5120 + (5120 + 2 * 128) + 80) * 2 + T * 5120 * 2 + T * 4  # zxbcdt + out_x + rstd: 128,598,016
    outside = T * 8 + (2 * T * d * 4 + T * 4 + d * 4) + T * d * 2 + T * V * 4 + T * 8 + 4  # 928,868,356
    expected = 64 * (norm + mamba) + outside
    assert expected == 15_871_731_716
    out = CliRunner().invoke(main, ["memory", "--preset", "mamba2-2.7b", "-T", "4096", "--format", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["memory"]["activations_bytes"] == expected
