"""sizing.serve against the reference model's generate() on CPU (reference_model/probes/serve.py):
the FLOPs of the prefill and of every decode step equal what torch's FlopCounterMode formulas
count, and the bytes a decode step reads (parameters touched + KV cache slices) equal what a
dispatch mode sees each op read, exactly, but for one named remainder: aten.embedding is
handed the whole lookup table (token rows of an untied table, a learned position table) and
gathers only the rows it needs, which is what sizing counts.

The prefill is compared in the `full` convention: the math path scores every query against
every prompt key (a dense masked matmul); the `causal` count that `sizing serve` uses by
default is proven against a tiled causal kernel in tests/test_flop_verify.py."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from reference_model.model.gpt import build  # noqa: E402
from reference_model.model.small import small_config  # noqa: E402
from reference_model.probes.serve import probe_generate  # noqa: E402
from sizing import get_preset  # noqa: E402
from sizing.serve.work import decode_step_flops, prefill_flops, step_bytes, unread_table_params  # noqa: E402

PROMPT, NEW, BATCH = 12, 8, 3
FP32 = 4
CASES = {
    "gpt2": "LayerNorm, learned positions, tied head",
    "llama2-7b": "RMSNorm, RoPE, SwiGLU, MHA",
    "llama2-70b": "GQA: K/V heads read once for their query group",
    "falcon-7b": "MQA, parallel block",
    "mistral-7b": "sliding window (8) shorter than prompt + output: the ring buffer wraps",
    "mixtral-8x7b": "MoE top-2 of 4: the experts that ran, per layer",
    "gemma-7b": "head_dim != d_model / h",
}


@pytest.fixture(scope="module", params=sorted(CASES))
def probed(request):
    cfg = small_config(get_preset(request.param).config, seq_len=16)
    torch.manual_seed(0)
    model = build(cfg, seed=0)
    idx = torch.randint(0, cfg.vocab_size, (BATCH, PROMPT))
    return cfg, probe_generate(model, idx, NEW)


def test_one_forward_per_token_and_flop_counter_agrees(probed):
    _, probe = probed
    assert [r.tokens for r in probe.records] == [PROMPT] + [1] * (NEW - 1)
    assert sum(r.flops for r in probe.records) == probe.flop_counter_mode_total


def test_prefill_flops(probed):
    cfg, probe = probed
    assert probe.prefill.flops == prefill_flops(cfg, PROMPT, BATCH, attention="full")


def test_decode_step_flops_and_kv_read(probed):
    cfg, probe = probed
    for i, step in enumerate(probe.decode_steps):
        context = PROMPT + i + 1  # the cache holds the prompt, the tokens so far and the new one
        assert step.flops == decode_step_flops(cfg, context, BATCH), f"step {i}"
        assert step.kv_bytes == step_bytes(cfg, context, BATCH, "fp32", "fp32").kv_bytes, f"step {i}"


def test_decode_step_weight_bytes_with_the_named_remainder(probed):
    cfg, probe = probed
    for i, step in enumerate(probe.decode_steps):
        context = PROMPT + i + 1
        hits = len(step.experts)  # (layer, expert) pairs that ran
        predicted = step_bytes(cfg, context, BATCH, "fp32", "fp32", experts_read_per_layer=hits / cfg.n_layers)
        assert predicted.dense_weight_bytes + hits * predicted.expert_bytes == pytest.approx(
            predicted.weight_bytes, rel=1e-12
        )
        handed_whole = unread_table_params(cfg, BATCH) * FP32  # aten.embedding gets the whole table
        assert step.weight_bytes == predicted.dense_weight_bytes + hits * predicted.expert_bytes + handed_whole
        if cfg.is_moe:
            assert cfg.top_k * 1 <= hits / cfg.n_layers <= cfg.n_experts  # each layer ran at least top_k
