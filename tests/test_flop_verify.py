"""FLOP formulas against the reference model, counted by FlopCounterMode and fvcore."""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from reference_model.counting.causal import blocked_causal_attention, count_attention_flops, masked_attention
from reference_model.counting.limits import DEFAULT_SEQ_LEN, full_size_seq_len, meta_seq_len_limit
from reference_model.model.small import small_config
from reference_model.verify.flops import check_flops, verify_flops
from sizing.formulas import flops as F
from sizing.formulas.flops import attended_pairs
from sizing.inputs.presets import PRESETS
from sizing.validate import SizingError

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FAMILIES = [
    "gpt2",
    "opt-125m",
    "pythia-160m",
    "llama2-7b",
    "llama2-70b",
    "mistral-7b",
    "mixtral-8x7b",
    "qwen2-7b",
    "gemma-2b",
    "gemma-7b",
    "phi-2",
    "falcon-7b",
    "bloom-560m",
]


def _describe(check):
    rows = check.forward + check.training + check.recompute + check.recompute_selective
    bad = [(r.component, r.expected, r.torch, r.fvcore) for r in rows if any(r.differences())]
    return f"{check.name}: differences {bad}, uncounted {check.uncounted_matmuls}"


@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_small_both_counters_exact(name):
    """Forward with both counters, forward+backward and a checkpointed re-run with torch's:
    exact equality per component (the backward of layer 0's projections included)."""
    check = check_flops(small_config(PRESETS[name].config), name, seq_len=16, counters="both", recompute=True)
    assert check.counters == ("torch", "fvcore")
    assert check.ok, _describe(check)
    assert check.flop_counter_mode_total == check.component_total
    assert {r.component for r in check.recompute} == {r.component for r in check.forward} - {"lm_head"}
    assert {r.component for r in check.recompute_selective} == {"attn.scores", "attn.av"}


# Full depth on meta costs ~1 ms per dispatched op on 2 cores: the deep and MoE presets take
# 10-45 s each and run with `-m slow`; gpt2 and llama2-7b keep the full-depth count in the default run.
@pytest.mark.parametrize(
    "name,seq_len",
    [
        ("gpt2", 1024),
        ("llama2-7b", 4096),
        pytest.param("mixtral-8x7b", 4096, marks=pytest.mark.slow),
        pytest.param("gemma-2b", 8192, marks=pytest.mark.slow),
        pytest.param("falcon-7b", 2048, marks=pytest.mark.slow),
        pytest.param("bloom-176b", 2048, marks=pytest.mark.slow),
        pytest.param("llama3.1-405b", 2048, marks=pytest.mark.slow),
    ],
)
def test_full_size_presets_on_meta(name, seq_len):
    check = check_flops(PRESETS[name].config, name, seq_len=seq_len, device="meta", counters="torch", batch=1)
    assert check.ok, _describe(check)
    forward = sum(r.torch for r in check.forward)
    assert forward == F.flop_breakdown(PRESETS[name].config, seq_len).forward


def test_uncounted_sdpa_kernel_fails():
    """On CPU, scaled_dot_product_attention runs a kernel FlopCounterMode has no formula for: it
    counts 0. The harness must fail on it, not pass with a smaller number."""
    check = check_flops(small_config(PRESETS["gpt2"].config), "sdpa", seq_len=8, counters="torch", attn_impl="sdpa")
    assert any("attention" in op for op in check.uncounted_matmuls["torch"]), check.uncounted_matmuls
    assert not check.ok


def test_planted_matmul_outside_components_fails(monkeypatch):
    import reference_model.model.gpt as model

    original = model.Block.forward

    def extra_matmul(self, x, step):
        out = original(self, x, step)
        return out @ torch.eye(out.shape[-1], device=out.device)  # work no formula knows about

    monkeypatch.setattr(model.Block, "forward", extra_matmul)
    check = check_flops(small_config(PRESETS["llama2-7b"].config), "planted", seq_len=8, counters="both")
    assert not check.ok
    assert any(r.component == "(unattributed)" or r.component == "(outside components)" for r in check.forward)


def test_wrong_formula_fails(monkeypatch):
    monkeypatch.setattr(F, "lm_head_flops", lambda cfg, T: 2 * cfg.d_model * cfg.vocab_size * T * 2)
    check = check_flops(small_config(PRESETS["gpt2"].config), "wrong", seq_len=8, counters="torch")
    assert not check.ok


@pytest.mark.parametrize("T,window", [(1, None), (17, None), (32, None), (32, 5), (40, 40), (33, 8)])
def test_causal_kernel_counts_causal_pairs(T, window):
    """A causal attention that computes only the visible keys (query tiles of 1) costs exactly
    2·2·h·d_h·pairs with pairs = T(T+1)/2 (or sum min(i, W)): the `causal` convention."""
    h, d = 2, 8
    gen = torch.Generator().manual_seed(T)
    q, k, v = (torch.randn(1, h, T, d, generator=gen) for _ in range(3))
    flops, out = count_attention_flops(blocked_causal_attention, q, k, v, block=1, window=window)
    assert flops == 2 * 2 * h * d * attended_pairs(T, "causal", window)
    assert torch.allclose(out, masked_attention(q, k, v, window), atol=1e-5)
    dense, _ = count_attention_flops(masked_attention, q, k, v, window)
    assert dense == 2 * 2 * h * d * attended_pairs(T, "full")  # what FlopCounterMode sees for the model
    tiled, out_tiled = count_attention_flops(blocked_causal_attention, q, k, v, block=4, window=window)
    assert flops <= tiled  # tiles add the masked part of each diagonal tile
    if window is None:
        assert tiled <= dense
    assert torch.allclose(out_tiled, out, atol=1e-5)


class _LargestCpuTensor(TorchDispatchMode):
    """Records the largest CPU tensor any op (factories included) produces."""

    largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.device.type == "cpu":
                self.largest = max(self.largest, t.numel())
        return out


def test_full_size_check_on_meta_allocates_nothing_of_size_t():
    """Issue 11: the meta run drew its T token ids on the CPU (8.T bytes: 8 GB at T = 1e9)."""
    T = 2**20
    cfg = PRESETS["llama2-7b"].config.with_overrides({"n_layers": "1"})
    with _LargestCpuTensor() as probe:
        check = check_flops(cfg, "llama2-7b", T, device="meta", counters="torch", batch=1)
    assert check.ok, _describe(check)
    assert probe.largest < T


def test_full_size_seq_len_defaults_and_bounds():
    gpt2, llama = PRESETS["gpt2"].config, PRESETS["llama2-7b"].config
    assert full_size_seq_len("gpt2", gpt2) == PRESETS["gpt2"].context == 1024
    assert full_size_seq_len("llama2-7b", llama) == 4096
    assert full_size_seq_len("my config", llama) == DEFAULT_SEQ_LEN
    short = gpt2.with_overrides({"max_positions": "512"})
    assert full_size_seq_len("gpt2 (max_positions=512)", short) == 512  # the default is capped at the table
    assert full_size_seq_len("gpt2", gpt2, 1024) == 1024
    with pytest.raises(SizingError, match=r"max_positions 1,024"):  # issue 11: T = 1e30 was quietly 1024
        full_size_seq_len("gpt2", gpt2, 1025)
    with pytest.raises(SizingError, match="seq_len"):
        full_size_seq_len("gpt2", gpt2, 10**30)
    with pytest.raises(SizingError, match="seq_len"):
        full_size_seq_len("gpt2", gpt2, 1e3)  # an integer, never a float
    # the meta device sizes tensors in int64 bytes: 4 bytes x h x T^2 for the score matrix
    limit = meta_seq_len_limit(llama)
    assert 4 * 32 * limit**2 <= 2**63 - 1 < 4 * 32 * (limit + 1) ** 2
    assert full_size_seq_len("llama2-7b", llama, limit) == limit
    with pytest.raises(SizingError, match=r"--seq-len .* at most 268,435,455"):
        full_size_seq_len("llama2-7b", llama, 10**9, option="--seq-len")
    with pytest.raises(SizingError):
        verify_flops("gpt2", gpt2, seq_len=2048)
