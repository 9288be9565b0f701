"""sizing.memory.activations: what autograd saves for backward, term by term, and Korthikanti's closed form."""

import pytest

from sizing import get_preset
from sizing.memory import (
    activation_terms,
    activations_bytes,
    activations_bytes_per_layer,
    korthikanti_activations_bytes_per_layer,
    training_memory,
    transient_bytes,
)

LLAMA2_7B = get_preset("llama2-7b").config


def test_llama2_7b_flash_activation_terms_per_layer():
    b, T, d, h, f, a = 1, 4096, 4096, 32, 11008, 2
    norm = 4 * b * T * d + 4 * b * T + 4 * b * T * d + 4 * d + a * b * T * d  # fp32 input, rstd, normalised, gain; out
    attention = 4 * a * b * T * d + 4 * b * h * T  # q, k, v, out (= o input); fp32 logsumexp
    mlp = 4 * a * b * T * f  # SwiGLU: gate out, silu out, up out, product
    assert activations_bytes_per_layer(LLAMA2_7B, T, b, "flash", "none", a) == 2 * norm + attention + mlp


def test_math_attention_adds_the_t_by_t_tensors():
    T, b, h, a = 4096, 2, 32, 2
    math = activations_bytes_per_layer(LLAMA2_7B, T, b, "math", "none", a)
    flash = activations_bytes_per_layer(LLAMA2_7B, T, b, "flash", "none", a)
    # + bool mask T x T, fp32 softmax output, its bf16 copy for AV; - the logsumexp (MHA: q, k, v, o the same size)
    assert math - flash == T * T + b * h * T * T * (4 + a) - 4 * b * h * T


def test_sdpa_is_an_alias_of_flash():
    assert activation_terms(LLAMA2_7B, 512, 1, "sdpa") == activation_terms(LLAMA2_7B, 512, 1, "flash")
    assert training_memory("gpt2", attention_impl="sdpa").attention_impl == "flash"


def test_recomputation():
    T, b, a = 4096, 1, 2
    full = activations_bytes_per_layer(LLAMA2_7B, T, b, "math", "full", a)
    assert full == b * T * 4096 * a  # a checkpointed block keeps its input
    selective = activations_bytes_per_layer(LLAMA2_7B, T, b, "math", "selective", a)
    flash = activations_bytes_per_layer(LLAMA2_7B, T, b, "flash", "none", a)
    assert selective == flash - 4 * b * 32 * T  # no T x T, no logsumexp
    keys = {t.key for t in activation_terms(LLAMA2_7B, T, b, "math", "full", a)}
    assert "rope.cos_sin" not in keys and "loss.log_probs" in keys


def test_transient_is_the_logits_and_their_gradient_plus_one_recomputed_layer():
    T, b, a, V = 2048, 2, 2, LLAMA2_7B.padded_vocab
    logits = b * T * V * (a + 4)
    assert transient_bytes(LLAMA2_7B, T, b, "flash", "none", a) == logits
    layer = activations_bytes_per_layer(LLAMA2_7B, T, b, "flash", "none", a)
    kept = activations_bytes_per_layer(LLAMA2_7B, T, b, "flash", "full", a)
    assert transient_bytes(LLAMA2_7B, T, b, "flash", "full", a) == logits + layer - kept


def test_activations_linear_in_micro_batch_except_shared_tensors():
    one, two, three = (activations_bytes(LLAMA2_7B, 2048, b, "math") for b in (1, 2, 3))
    assert three - two == two - one  # the mask and RoPE tables are shared by the batch, the rest scales
    # per layer: the bool mask and the two RMSNorm gains in fp32; once: RoPE cos/sin, nll's total weight, norm_f's gain
    assert 2 * one - two == 32 * (2048 * 2048 + 2 * 4 * 4096) + 2 * 2048 * 128 * 2 + 4 + 4 * 4096


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"attention_impl": "xformers"}, r"attention_impl \('xformers'\) must be one of: math, flash"),
        ({"recompute": "some"}, r"recompute \('some'\) must be one of: none, selective, full"),
        ({"micro_batch": 0}, r"micro_batch \(0\) must be a positive integer"),
        ({"seq_len": -1}, r"seq_len \(-1\) must be a positive integer"),
    ],
)
def test_bad_arguments_are_value_errors(kwargs, message):
    args = {"cfg": LLAMA2_7B, "seq_len": 128, **kwargs}
    with pytest.raises(ValueError, match=message):
        activation_terms(**args)


def test_korthikanti_formula_beside_ours():
    cfg = get_preset("gpt3-175b").config
    s, b, h, a = 2048, 1, 12288, 96
    assert korthikanti_activations_bytes_per_layer(cfg, s, b) == s * b * h * (34 + 5 * a * s // h)
    assert korthikanti_activations_bytes_per_layer(cfg, s, b, "selective") == 34 * s * b * h
    assert korthikanti_activations_bytes_per_layer(cfg, s, b, "full") == 2 * s * b * h
    data = training_memory("gpt3-175b").to_dict()["korthikanti"]
    assert "sbh(34 + 5as/h)" in data["formula"] and "Korthikanti" in data["formula"]
    assert data["activations_bytes"] == 96 * s * b * h * (34 + 5 * a * s // h)


def test_mixed_dense_and_moe_blocks_are_summed_by_kind():
    """DeepSeek-V2-Lite: 1 dense block first, then 26 MoE blocks; each kind saves its own bytes."""
    from sizing.memory.activations import sum_terms

    cfg = get_preset("deepseek-v2-lite").config
    T, b = 4096, 1
    moe = activations_bytes_per_layer(cfg, T, b, moe_layer=True)
    dense = activations_bytes_per_layer(cfg, T, b, moe_layer=False)
    outside = sum_terms(activation_terms(cfg, T, b))[1]
    assert (cfg.n_dense_layers, cfg.n_moe_layers) == (1, 26) and dense != moe
    assert activations_bytes(cfg, T, b) == 26 * moe + 1 * dense + outside
