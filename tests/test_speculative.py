"""Speculative decoding (sizing/serve/speculative.py) and `sizing speculate`."""

import dataclasses
import json

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from sizing.cli import main
from sizing.inputs.presets import get_preset
from sizing.serve.speculative import expected_tokens_per_step, mtp_head_config, speculate
from sizing.serve.work import step_bytes
from sizing.validate import SizingError


def test_expected_tokens_formula():
    """(1 - a^(k+1)) / (1 - a) (Leviathan et al. 2023, eq. 1): a = 0.5, k = 3 -> (1 - 1/16) / (1/2) = 1.875."""
    assert expected_tokens_per_step(0.5, 3) == 1.875
    assert expected_tokens_per_step(0.8, 1) == pytest.approx(1.8)  # 1 + a for k = 1
    assert expected_tokens_per_step(1, 4) == 5  # every proposal accepted: k + 1
    assert expected_tokens_per_step(0, 4) == 1  # none: the target's own token


@given(st.floats(0, 1), st.integers(1, 16))
def test_expected_tokens_is_the_geometric_sum(alpha, k):
    assert expected_tokens_per_step(alpha, k) == pytest.approx(sum(alpha**i for i in range(k + 1)))


def test_verify_reads_the_weights_once():
    """Dense model, batch 1: the verify step of k + 1 tokens reads the weights once, so on the
    memory-bound side it costs what one decode step costs (plus k KV positions)."""
    cfg = get_preset("llama2-70b").config
    one = step_bytes(cfg, 4096, 1, new_tokens=1)
    five = step_bytes(cfg, 4100, 1, new_tokens=5)
    assert five.weight_bytes == one.weight_bytes + 4 * 8192 * 2  # + 4 token-table rows looked up
    s = speculate(cfg, 4, 0.7, get_preset("llama2-7b").config, context=4096, gpu="h200")
    assert s.verify_step_seconds == pytest.approx(s.target_step_seconds, rel=1e-3)


def test_break_even_acceptance_gives_speedup_one():
    s = speculate(get_preset("llama2-70b").config, 4, 0.7, get_preset("llama2-7b").config, gpu="h200")
    even = s.break_even_acceptance
    assert 0 < even < 0.7 and s.speedup > 1
    at_even = dataclasses.replace(s, acceptance=even)
    assert at_even.speedup == pytest.approx(1, abs=1e-9)


def test_large_batch_verify_turns_compute_bound_and_never_pays():
    """Llama-2-70B with a 7B draft, batch 128 on H200: 5 tokens per sequence make the verify
    compute-bound, so even alpha = 1 (5 tokens per step) loses."""
    s = speculate(get_preset("llama2-70b").config, 4, 0.7, get_preset("llama2-7b").config, batch=128, gpu="h200")
    assert s.verify_step_seconds > 1.5 * s.target_step_seconds
    assert s.break_even_acceptance is None and s.speedup < 1


def test_mtp_on_deepseek_v3():
    """k = 1 MTP head. DeepSeek-V3 reports 85-90% acceptance of the second token and 1.8x
    tokens/s (arXiv:2412.19437 sec. 5.4.3). At batch 1 the 2-token verify reaches twice the
    experts (8 -> ~16 of 256 per layer), so MTP pays less; at batch 256 every expert is read
    by both and the speedup approaches E = 1.85."""
    cfg = get_preset("deepseek-v3").config
    head = mtp_head_config(cfg)
    assert head.n_layers == 1 and head.is_moe and head.vocab_size == cfg.vocab_size
    small = speculate(cfg, 1, 0.85, None, batch=1, gpu="h200", weight_dtype="fp8")
    large = speculate(cfg, 1, 0.85, None, batch=256, gpu="h200", weight_dtype="fp8")
    assert small.verify_step_seconds > 1.35 * small.target_step_seconds  # the step overhead is paid by both
    assert small.break_even_acceptance > large.break_even_acceptance
    assert 1.65 < large.speedup < 1.85  # 1.85 tokens per step less the MTP head and the larger verify


def test_bad_input():
    cfg = get_preset("llama2-70b").config
    with pytest.raises(SizingError, match="acceptance"):
        speculate(cfg, 4, 1.5)
    with pytest.raises(SizingError, match="draft vocab_size"):
        speculate(cfg, 4, 0.5, get_preset("llama3-8b").config)


def test_cli():
    args = ["speculate", "--preset", "llama2-70b", "--draft", "llama2-7b", "--gpu", "h200"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0 and "break-even acceptance rate" in r.output
    data = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).output)
    assert data["tokens_per_step"] == expected_tokens_per_step(0.7, 4)
    r = CliRunner().invoke(main, ["speculate", "--preset", "llama2-70b", "--draft", "nope"])
    assert r.exit_code == 2 and "--draft" in r.output
