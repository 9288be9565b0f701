"""sizing.memory against the bytes the reference model holds on CPU (reference_model/probes/memory.py).

Activations: the formula must be within 2% of what saved_tensors_hooks counts (each storage
once); in fp32 every byte is accounted for, and in bf16 the only remainder is the CPU
LayerNorm keeping its statistics in bf16, which the probe names. KV cache, weights,
gradients and optimizer state: exact.
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("reference_model.model.gpt")  # the reference model (issue 4) lands separately

from reference_model.model.gpt import build  # noqa: E402
from reference_model.model.small import small_config  # noqa: E402
from reference_model.probes.memory import (  # noqa: E402
    TOLERANCE,
    check_activations,
    check_kv_cache,
    check_model_states,
)
from reference_model.verify.memory import verify_memory  # noqa: E402
from sizing import ModelConfig, get_preset  # noqa: E402
from sizing.memory import kv_cache_bytes  # noqa: E402

T, B = 32, 2
# Presets at toy size, each for the switches it brings.
PRESET_CASES = {
    "gpt2": "LayerNorm, learned positions, GELU, biases, tied head",
    "llama2-7b": "RMSNorm, RoPE, SwiGLU, MHA",
    "llama2-70b": "GQA",
    "falcon-7b": "MQA, parallel block with one shared norm",
    "mistral-7b": "GQA + sliding window shorter than T",
    "mixtral-8x7b": "MoE top-2",
    "pythia-160m": "partial rotary, parallel block with two norms",
    "gemma-7b": "head_dim != d_model / h, GeGLU",
    "opt-125m": "ReLU",
    "bloom-560m": "LayerNorm on the embeddings, ALiBi (no position table)",
}
POST_NORM = ModelConfig(
    vocab_size=96, d_model=64, n_layers=2, n_heads=4, d_ff=256, max_positions=64, norm_placement="post"
)
CONFIGS = {name: small_config(get_preset(name).config, T) for name in PRESET_CASES} | {"post-norm": POST_NORM}


@pytest.mark.parametrize(
    "impl, recompute",
    [
        ("math", "none"),
        ("sdpa", "none"),
        ("math", "selective"),
        ("sdpa", "selective"),
        ("sdpa", "full"),
        ("math", "full"),
    ],
)
@pytest.mark.parametrize("name", list(CONFIGS))
def test_activations_fp32_within_2_percent_and_fully_explained(name, impl, recompute):
    check = check_activations(CONFIGS[name], impl, recompute, T, B)
    assert check.ok, (check.relative_error, check.worst_layer_error)
    assert abs(check.relative_error) <= TOLERANCE
    assert check.unexplained == 0, check.notes()
    assert len(set(check.measured.per_layer)) == 1  # every block saves the same
    if not check.extras:
        assert check.measured.total == check.formula_total  # sizing's formula as it stands, byte for byte


@pytest.mark.parametrize("name", ["gpt2", "llama2-7b", "mixtral-8x7b", "bloom-560m"])
@pytest.mark.parametrize("impl", ["math", "sdpa"])
def test_activations_bf16(name, impl):
    check = check_activations(CONFIGS[name], impl, "none", T, B, dtype="bf16")
    assert check.ok and check.unexplained == 0, check.notes()
    if CONFIGS[name].norm == "layernorm":  # CPU LayerNorm keeps mean/rstd in bf16: the named remainder
        assert check.cpu and check.measured.total < check.expected_total


def test_cpu_sdpa_is_a_fused_kernel_that_saves_no_t_by_t_tensor():
    """Why the reference sdpa path can stand for sizing's `flash`: on CPU it saves q, k, v,
    out and the logsumexp; math saves the (b, h, T, T) probabilities."""
    cfg = CONFIGS["llama2-7b"]
    sdpa = check_activations(cfg, "sdpa", "none", T, B).measured.items
    math = check_activations(cfg, "math", "none", T, B).measured.items
    assert not [s for s in sdpa if s.shape[-2:] == (T, T)]
    assert [s for s in math if s.shape == (B, cfg.n_heads, T, T)]
    assert [s for s in sdpa if s.shape == (B, cfg.n_heads, T) and s.dtype == "float32"]  # logsumexp


def test_selective_recompute_drops_the_t_by_t_tensors():
    """Korthikanti et al.'s selective recomputation: the checkpointed attention core keeps q, k, v
    (before the GQA repeat), so math attention saves no (b, h, T, T) tensor and equals flash."""
    cfg = CONFIGS["llama2-70b"]
    math = check_activations(cfg, "math", "selective", T, B)
    assert not [s for s in math.measured.items if s.shape[-2:] == (T, T)]
    assert math.measured.per_layer == check_activations(cfg, "sdpa", "selective", T, B).measured.per_layer
    assert math.measured.per_layer[0] < check_activations(cfg, "math", "none", T, B).measured.per_layer[0]


def test_full_recompute_keeps_only_block_inputs():
    check = check_activations(CONFIGS["llama2-7b"], "sdpa", "full", T, B)
    assert check.measured.per_layer == [B * T * 64 * 4] * 2  # b.T.d.a, fp32


@pytest.mark.parametrize(
    "name, kind", [("llama2-7b", "MHA"), ("llama2-70b", "GQA"), ("falcon-7b", "MQA"), ("mistral-7b", "sliding window")]
)
def test_kv_cache_from_generate_is_exact(name, kind):
    cfg = CONFIGS[name]
    check = check_kv_cache(cfg, prompt=8, new_tokens=24, batch=B)
    assert check.measured == check.formula
    assert check.formula == 2 * cfg.n_layers * cfg.kv_heads * cfg.d_head * 4 * min(32, cfg.sliding_window or 32) * B
    if kind == "sliding window":
        assert cfg.sliding_window == 16 and check.formula == kv_cache_bytes(cfg, 16, B, "fp32")


@pytest.mark.parametrize("dtype, optimizer", [("fp32", "adamw"), ("bf16", "adamw"), ("fp32", "sgd")])
@pytest.mark.parametrize("name", ["gpt2", "llama2-70b", "mixtral-8x7b"])
def test_weights_gradients_optimizer_state_exact(name, dtype, optimizer):
    check = check_model_states(CONFIGS[name], dtype, optimizer)
    assert check.ok, check.rows
    weights, grads, state = (measured for _, _, measured in check.rows)
    n = sum(p.numel() for p in build_params(CONFIGS[name]))
    assert weights == grads == n * (4 if dtype == "fp32" else 2)
    assert state == (2 if optimizer == "adamw" else 1) * weights  # m and v (momentum) in the weights' dtype
    if optimizer == "adamw":
        assert check.step_bytes == 4 * check.param_tensors  # torch's per-tensor step counters, named apart


def build_params(cfg):
    return list(build(cfg, "meta").parameters())


def test_small_config_keeps_the_switches():
    for name in PRESET_CASES:
        big, small = get_preset(name).config, CONFIGS[name]
        assert (big.kv_heads == big.n_heads) == (small.kv_heads == small.n_heads)
        assert (big.kv_heads == 1) == (small.kv_heads == 1)
        same = ("mlp", "norm", "position", "parallel_block", "shared_block_norm", "tied_embeddings", "qkv_bias")
        assert all(getattr(big, f) == getattr(small, f) for f in same)
        assert (big.sliding_window is None) == (small.sliding_window is None)
        assert bool(big.n_experts) == bool(small.n_experts)
    assert CONFIGS["gemma-7b"].q_width != CONFIGS["gemma-7b"].d_model


def test_verify_memory_check():
    result = verify_memory("mistral-7b", get_preset("mistral-7b").config)
    assert result.ok, result.rows
    quantities = [row[0] for row in result.rows]
    assert "activations math" in quantities and "activations sdpa + recompute full" in quantities
    assert any(q.startswith("KV cache") for q in quantities) and "adamw state" in quantities
    assert any("window mask" in note for note in result.notes)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_allocated_bytes_match_the_formula():
    from reference_model.probes.memory import check_cuda_memory

    check = check_cuda_memory(small_config(get_preset("llama2-7b").config, 256), seq_len=256, batch=4)
    assert check.ok, (check.formula_forward, check.measured_forward)


@pytest.mark.parametrize("impl", ["math", "sdpa"])
def test_activations_at_another_length_and_batch(impl):
    cfg = small_config(get_preset("llama2-70b").config, 96)  # T x T terms grow 9x, batch 3
    check = check_activations(cfg, impl, "none", 96, 3)
    assert check.ok and check.unexplained == 0, check.notes()
