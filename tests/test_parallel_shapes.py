"""sizing.parallel.shapes names every parameter tensor of every layer as the reference model
does, with its shape, and the kinds of blocks a range of layers holds."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.formulas import params as P
from sizing.inputs.presets import PRESETS
from sizing.parallel.shapes import (
    block_kinds,
    count_moe_layers,
    first_stage_tensors,
    last_stage_tensors,
    layer_tensors,
    model_tensors,
)
from tests.strategies import modern_configs

torch = pytest.importorskip("torch")
import reference_model  # noqa: E402
from reference_model.model.small import small_config  # noqa: E402

MODERN = ("deepseek-v3", "deepseek-v2-lite", "gemma-2-9b", "gemma-3-27b", "gpt-oss-20b", "llama-4-maverick")
MODERN += ("qwen1.5-moe-a2.7b", "olmo-2-7b", "gpt-oss-120b", "gemma-2-27b", "qwen3-30b-a3b", "mixtral-8x7b")


def _reference_shapes(cfg) -> dict[str, tuple[int, ...]]:
    """{name with `blocks.i.` and `experts.j.` kept: shape} of the reference model on meta."""
    model = reference_model.build(cfg, device="meta")
    return {name: tuple(p.shape) for name, p in model.named_parameters()}


def _our_shapes(cfg) -> dict[str, tuple[int, ...]]:
    out = {t.name: t.shape for t in first_stage_tensors(cfg) + last_stage_tensors(cfg)}
    for i in range(cfg.n_layers):
        for t in layer_tensors(cfg, i):
            if t.expert:
                name = t.name.replace("moe.experts.", "moe.experts.{j}.")
                out.update({f"blocks.{i}." + name.format(j=j): t.shape for j in range(t.copies)})
            else:
                out[f"blocks.{i}.{t.name}"] = t.shape
    if cfg.tied_embeddings:
        out.pop("lm_head.weight", None)
    return out


@pytest.mark.parametrize("name", MODERN)
def test_every_tensor_is_named_and_shaped_as_the_reference_model(name):
    cfg = small_config(PRESETS[name].config)
    assert _our_shapes(cfg) == _reference_shapes(cfg)


@settings(max_examples=30, deadline=None)
@given(modern_configs())
def test_modern_switches_are_named_and_add_up(cfg):
    assert sum(t.numel for t in model_tensors(cfg)) == P.total_params(cfg)
    assert _our_shapes(cfg) == _reference_shapes(cfg)


@settings(max_examples=60, deadline=None)
@given(modern_configs(), st.integers(0, 6), st.integers(0, 6))
def test_block_kinds_count_the_moe_layers_of_a_range(cfg, a, b):
    lo, hi = sorted((min(a, cfg.n_layers), min(b, cfg.n_layers)))
    layers = range(lo, hi)
    moe = sum(cfg.is_moe_layer(i) for i in layers)
    assert count_moe_layers(cfg, layers) == moe
    assert dict(block_kinds(cfg, layers)) == {k: n for k, n in ((False, len(layers) - moe), (True, moe)) if n}


def test_deepseek_v3_first_dense_layers_and_placements():
    cfg = PRESETS["deepseek-v3"].config
    assert block_kinds(cfg, range(cfg.n_layers)) == [(False, 3), (True, 58)]
    dense, moe = layer_tensors(cfg, 0), layer_tensors(cfg, 3)
    place = {t.name: t.placement for t in moe}
    assert place["attn.q_a.weight"] == place["attn.kv_a.weight"] == "rep"
    assert place["attn.q_b.weight"] == place["attn.kv_b.weight"] == "col"
    assert place["attn.o.weight"] == "row" and place["moe.router.weight"] == "rep"
    assert place["moe.shared.up.weight"] == "col" and place["moe.shared.down.weight"] == "row"
    assert {t.name for t in dense if re.match(r"mlp\.", t.name)} == {
        "mlp.up.weight",
        "mlp.gate.weight",
        "mlp.down.weight",
    }
    # 3 dense layers of 3 d f (f = 18432) + the 58 MoE layers' experts, as params.py counts them
    assert sum(t.numel for t in dense) - sum(t.numel for t in moe if not t.name.startswith("moe.")) == 3 * 7168 * 18432
