"""The reference model's new switches (latent attention, shared experts, dense/MoE layer
patterns, qk-norm, sandwich and branch-post norms, sinks, chunked / local-global / NoPE layers):
FLOPs exact with both counters at toy size, the KV cache of generate() exact, and decoding
with the cache equal to running the whole sequence again (the masks and the latent cache)."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import modern_configs

from reference_model.model.gpt import KVCache, build
from reference_model.model.small import small_config
from reference_model.probes.memory import check_kv_cache
from reference_model.verify.flops import check_flops, full_size_probe
from sizing.inputs.presets import PRESETS
from sizing.memory.kv import kv_cache_bytes

pytestmark = pytest.mark.usefixtures("one_torch_thread")

# One preset per switch: MLA without / with a query rank, shared experts (gated), MoE every
# other layer with chunked and NoPE layers, sinks with 128-key windows, four norms with qk-norm,
# OLMo-2's output norms with a width-wide qk-norm.
SWITCHES = [
    "deepseek-v2-lite",
    "deepseek-v3",
    "qwen1.5-moe-a2.7b",
    "llama-4-maverick",
    "gpt-oss-20b",
    "gemma-3-27b",
    "olmo-2-7b",
]


@pytest.mark.parametrize("name", SWITCHES)
def test_flops_exact_with_both_counters(name):
    check = check_flops(small_config(PRESETS[name].config), name, seq_len=16, counters="both", recompute=True)
    rows = check.forward + check.training + check.recompute + check.recompute_selective
    assert check.ok, [(r.component, r.expected, r.torch, r.fvcore) for r in rows if any(r.differences())]
    assert check.flop_counter_mode_total == check.component_total


def test_toy_configs_keep_every_pattern():
    v3 = small_config(PRESETS["deepseek-v3"].config)
    assert (v3.n_layers, v3.n_dense_layers, v3.n_moe_layers, v3.q_lora_rank) == (4, 1, 3, 20)
    maverick = small_config(PRESETS["llama-4-maverick"].config)
    assert [maverick.is_moe_layer(i) for i in range(4)] == [False, True, False, True]
    assert [maverick.is_local_layer(i) for i in range(4)] == [True, False, True, False]
    assert [maverick.uses_rope(i) for i in range(4)] == [True, False, True, False]


def test_large_moe_full_size_run_is_one_period_at_full_width():
    probe, note = full_size_probe(PRESETS["llama-4-maverick"].config)
    assert probe.n_layers == 4 and probe.d_model == 5120 and probe.n_experts == 128 and "4 of its 48" in note
    assert full_size_probe(PRESETS["mixtral-8x7b"].config) == (PRESETS["mixtral-8x7b"].config, None)


@pytest.mark.parametrize("name", ["deepseek-v3", "deepseek-v2-lite", "gemma-2-9b", "llama-4-scout", "gpt-oss-20b"])
def test_kv_cache_from_generate_is_exact(name):
    cfg = small_config(PRESETS[name].config)
    check = check_kv_cache(cfg, prompt=8, new_tokens=24, batch=2)
    assert check.measured == check.formula == kv_cache_bytes(cfg, 32, 2, "fp32")
    if cfg.is_mla:  # the latent and the rope key, not K and V per head
        assert check.formula == cfg.n_layers * (24 + 4) * 32 * 2 * 4
    elif cfg.local_window is not None:  # local layers hold 16 of the 32 positions, global ones all
        per = 2 * cfg.kv_heads * cfg.d_head * 2 * 4
        assert check.formula == per * (cfg.n_local_layers * 16 + cfg.n_global_layers * 32)


@pytest.mark.parametrize("name", ["deepseek-v3", "llama-4-scout", "gpt-oss-20b", "gemma-3-27b", "olmo-2-7b"])
def test_decoding_with_the_cache_equals_the_whole_sequence(name):
    """Token by token through the KV cache (past the window and the chunk of 16) gives the
    logits of one forward over the whole sequence: the masks and the latent cache are right."""
    cfg = small_config(PRESETS[name].config)
    model = build(cfg, "cpu", seed=0).eval()
    idx = torch.randint(0, cfg.vocab_size, (2, 32), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        whole, _ = model(idx)
        cache = KVCache(cfg, 2, 32, "cpu", torch.float32)
        steps = [model.lm_head(model._hidden(idx[:, :6], model.make_step(6, 0, cache=cache)))]
        for t in range(6, 32):
            steps.append(model.lm_head(model._hidden(idx[:, t : t + 1], model.make_step(1, t, cache=cache))))
    torch.testing.assert_close(torch.cat(steps, dim=1), whole, rtol=1e-4, atol=1e-5)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modern_configs(max_layers=4), st.integers(1, 12))
def test_property_flops_of_random_modern_configs(cfg, seq_len):
    """FlopCounterMode, forward and forward + backward, per component, against sizing.formulas.flops."""
    check = check_flops(cfg, "random", seq_len=seq_len, counters="torch", batch=1)
    rows = check.forward + check.training
    assert check.ok, [(r.component, r.expected, r.torch) for r in rows if any(r.differences())]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modern_configs(max_layers=3))
def test_property_cached_decoding_of_random_modern_configs(cfg):
    model = build(cfg, "cpu", seed=0, dtype=torch.float64).eval()
    idx = torch.randint(0, cfg.vocab_size, (1, 12), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        whole, _ = model(idx)
        cache = KVCache(cfg, 1, 12, "cpu", torch.float64)
        steps = [model.lm_head(model._hidden(idx[:, :3], model.make_step(3, 0, cache=cache)))]
        for t in range(3, 12):
            steps.append(model.lm_head(model._hidden(idx[:, t : t + 1], model.make_step(1, t, cache=cache))))
    torch.testing.assert_close(torch.cat(steps, dim=1), whole)
    assert cache.nbytes == kv_cache_bytes(cfg, 12, 1, "fp32") * 2  # float64: twice the fp32 bytes
