"""Prefix caching (sizing/serve/prefix.py) and `sizing serve --prefix-cached`."""

import json

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.formulas.flops import decode_flops_per_token, lm_head_flops
from sizing.inputs.presets import get_preset
from sizing.memory.kv import kv_cache_bytes
from sizing.serve import serve
from sizing.serve.prefix import prefix_cache, shared_prefix_tokens, suffix_prefill_flops
from sizing.validate import SizingError


def test_shared_tokens_are_whole_blocks():
    assert shared_prefix_tokens(3000) == 2992  # 187 blocks of 16
    assert shared_prefix_tokens(3000, block=1) == 3000  # SGLang's radix tree: one token per page
    assert shared_prefix_tokens(15) == 0


def test_suffix_flops_are_the_suffix_positions():
    """Causal: the suffix costs exactly positions S+1..P, each one query over C keys (the
    decode FLOPs of a token at C, lm_head aside), plus one lm_head."""
    cfg = get_preset("gpt2").config
    head = lm_head_flops(cfg, 1)
    by_position = sum(decode_flops_per_token(cfg, c) - head for c in range(113, 301)) + head
    assert suffix_prefill_flops(cfg, 300, 112, 1) == by_position
    assert suffix_prefill_flops(cfg, 300, 112, 4) == 4 * by_position


def test_kv_stored_once():
    est = serve("llama2-7b", prompt=4096, output=256, batch=8, gpu="h100")
    p = prefix_cache(est, 3000)
    cfg = est.config
    assert p.kv_bytes == 8 * kv_cache_bytes(cfg, 4352) - 7 * kv_cache_bytes(cfg, 2992)
    assert p.kv_bytes_unshared == est.kv_bytes_per_request * 8
    assert p.ttft_seconds < est.ttft_seconds * (4096 - 2992) / 4096 * 1.2  # compute-bound: ~ the suffix share
    assert p.prefill_flops_uncached == est.prefill_flops


def test_refusals():
    with pytest.raises(SizingError, match="shorter than the prompt"):
        prefix_cache(serve("llama2-7b", prompt=100, output=20), 100)
    with pytest.raises(SizingError, match="sliding-window"):
        prefix_cache(serve("gpt-oss-20b", prompt=1000, output=20, gpu="h100"), 500)
    with pytest.raises(SizingError, match="causal"):
        prefix_cache(serve("llama2-7b", prompt=1000, output=20, attention="full"), 500)


def test_cli():
    args = ["serve", "--preset", "llama2-7b", "--gpu", "h100", "--batch", "8", "--prompt", "4096", "--output", "256"]
    r = CliRunner().invoke(main, [*args, "--prefix-cached", "3000"])
    assert r.exit_code == 0 and "Prefix caching" in r.output and "2992 of 3000" in r.output
    data = json.loads(CliRunner().invoke(main, [*args, "--prefix-cached", "3000", "--format", "json"]).output)
    assert data["prefix_cache"]["shared_tokens"] == 2992
    r = CliRunner().invoke(main, [*args, "--prefix-cached", "5000"])
    assert r.exit_code == 2 and "Error: prefix" in r.output
