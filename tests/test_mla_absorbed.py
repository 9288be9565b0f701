"""The reference model's absorbed-MLA decode (reference_model/model/mla_absorbed.py): the same logits as
the naive form, and exactly the FLOPs sizing counts for it (mla_absorbed_decode_flops_per_token,
what `sizing serve --mla absorbed` uses), checked by torch's FlopCounterMode as the other paths."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from reference_model.model.gpt import build  # noqa: E402
from reference_model.model.small import small_config  # noqa: E402
from sizing import get_preset  # noqa: E402
from sizing.serve.work import decode_step_flops  # noqa: E402

PROMPT, BATCH = 10, 2


@pytest.fixture(scope="module", params=["deepseek-v3", "deepseek-v2-lite"])
def mla_model(request):
    cfg = small_config(get_preset(request.param).config, seq_len=16)
    return cfg, build(cfg, seed=0).eval()


def _decode_once(model, impl: str):
    """Prefill PROMPT tokens into a cache, then one decode step under `impl`: (logits, its FLOPs)."""
    from reference_model.model.attention import KVCache

    cfg = model.config
    torch.manual_seed(1)
    idx = torch.randint(0, cfg.vocab_size, (BATCH, PROMPT + 1))
    cache = KVCache(cfg, BATCH, PROMPT + 1, idx.device, model.tok_emb.weight.dtype)
    model.set_mla_impl(impl)
    with torch.no_grad():
        model._hidden(idx[:, :PROMPT], model.make_step(PROMPT, 0, idx.device, cache))
        with FlopCounterMode(display=False) as counter:
            h = model._hidden(idx[:, PROMPT:], model.make_step(1, PROMPT, idx.device, cache))
            logits = model.lm_head(h[:, -1])
    return logits, counter.get_total_flops()


def test_absorbed_decode_gives_the_naive_logits(mla_model):
    _, model = mla_model
    naive, _ = _decode_once(model, "naive")
    absorbed, _ = _decode_once(model, "absorbed")
    torch.testing.assert_close(absorbed, naive, rtol=1e-4, atol=1e-5)


def test_absorbed_decode_flops_equal_sizing(mla_model):
    cfg, model = mla_model
    _, flops = _decode_once(model, "absorbed")
    context = PROMPT + 1  # the cache holds the prompt and the new token
    assert flops == decode_step_flops(cfg, context, BATCH, mla="absorbed")
    assert flops != decode_step_flops(cfg, context, BATCH, mla="naive")
