"""The reference model's numel() by component equals sizing's formulas, exactly: every
preset (built on the meta device) and random small configs with every switch mixed."""

import time

import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from reference_model.counting import compare_params, component_key, count_params_by_component  # noqa: E402
from reference_model.model import build  # noqa: E402
from sizing import ModelConfig, get_preset  # noqa: E402
from sizing.params import param_components, total_params  # noqa: E402
from sizing.presets import PRESETS  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """Tiny models: one intra-op thread is as fast, and far faster on a busy 2-core runner
    (spinning OpenMP workers); restored afterwards so other test modules are unaffected."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _assert_exact(cfg):
    rows = compare_params(cfg)
    bad = [r for r in rows if r.difference]
    assert not bad, bad
    assert [r.component for r in rows] == [c.key for c in param_components(cfg)]
    assert sum(r.counted for r in rows) == total_params(cfg)


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_counted_equals_formula(name):
    _assert_exact(PRESETS[name].config)


def test_meta_build_of_the_largest_preset_is_fast_and_allocates_nothing():
    cfg = get_preset("llama3.1-405b").config
    build(get_preset("gpt2").config, device="meta")  # warm torch up
    start = time.perf_counter()
    model = build(cfg, device="meta")
    assert time.perf_counter() - start < 5  # ~0.1 s here; "about a second" with headroom for slow CI
    assert all(p.is_meta for p in model.parameters())
    assert model.num_params() == total_params(cfg)


def test_component_keys():
    assert component_key("blocks.3.attn.q.weight") == "attn.q"
    assert component_key("blocks.11.mlp_norm.bias") == "mlp_norm"
    assert component_key("blocks.0.moe.experts.7.gate.weight") == "moe.experts"
    assert component_key("blocks.0.moe.router.bias") == "moe.router"
    assert component_key("lm_head.bias") == "lm_head"
    assert component_key("tok_emb.weight") == "tok_emb"


def test_tied_weight_counted_once_and_shared():
    cfg = ModelConfig(vocab_size=40, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_positions=8,
                      tied_embeddings=True, lm_head_bias=True)
    model = build(cfg, seed=0)
    counts = count_params_by_component(model)
    assert counts["tok_emb"] == 40 * 16 and counts["lm_head"] == 40  # only the head's bias
    assert model.lm_head.effective_weight() is model.tok_emb.weight
    assert model.num_params() == total_params(cfg)
    moved = model.to(torch.float64)  # a dtype/device move keeps the tie
    assert moved.lm_head.effective_weight() is moved.tok_emb.weight


@st.composite
def configs(draw, max_layers=3):
    """Small valid ModelConfigs with every switch of the config drawn independently."""
    n_heads = draw(st.integers(1, 4))
    kv = draw(st.sampled_from([d for d in range(1, n_heads + 1) if n_heads % d == 0]))
    explicit_head = draw(st.booleans())
    position = draw(st.sampled_from(["learned", "rope", "none"]))
    if explicit_head:
        head_dim = draw(st.sampled_from([2, 4, 6, 8]))
        d_model = draw(st.integers(2, 24))
    else:
        head_dim = None
        d_model = n_heads * draw(st.sampled_from([2, 4, 6, 8]))
    d_head = head_dim or d_model // n_heads
    fractions = [f for f in (1.0, 0.5, 0.25) if int(d_head * f) > 0 and int(d_head * f) % 2 == 0]
    norm = draw(st.sampled_from(["layernorm", "rmsnorm"]))
    norm_bias = draw(st.sampled_from([None, False] + ([True] if norm == "layernorm" else [])))
    placement = draw(st.sampled_from(["pre", "post"]))
    parallel = placement == "pre" and draw(st.booleans())
    n_experts = draw(st.sampled_from([0, 0, 2, 3, 4]))
    moe = {}
    if n_experts:
        moe = dict(n_experts=n_experts, top_k=draw(st.integers(1, n_experts)),
                   expert_d_ff=draw(st.sampled_from([None, 4, 12])), router_bias=draw(st.booleans()))
    return ModelConfig(
        vocab_size=draw(st.integers(2, 50)), d_model=d_model, n_layers=draw(st.integers(1, max_layers)),
        n_heads=n_heads, n_kv_heads=draw(st.sampled_from([None, kv])), head_dim=head_dim,
        d_ff=draw(st.integers(1, 40)), mlp=draw(st.sampled_from(["gelu", "relu", "swiglu", "geglu"])),
        norm=norm, norm_bias=norm_bias, norm_placement=placement, final_norm=draw(st.booleans()),
        parallel_block=parallel, shared_block_norm=parallel and draw(st.booleans()), position=position,
        max_positions=draw(st.integers(16, 40)) if position == "learned" else draw(st.sampled_from([0, 7])),
        rotary_fraction=draw(st.sampled_from(fractions)) if position == "rope" else 1.0,
        qkv_bias=draw(st.booleans()), attn_out_bias=draw(st.booleans()), mlp_bias=draw(st.booleans()),
        lm_head_bias=draw(st.booleans()), tied_embeddings=draw(st.booleans()),
        sliding_window=draw(st.sampled_from([None, 1, 3, 5])), vocab_pad_multiple=draw(st.sampled_from([1, 8])),
        **moe,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_property_random_configs_counted_equals_formula(cfg):
    _assert_exact(cfg)
    # a real (CPU) build holds the same tensors as the meta one
    assert count_params_by_component(build(cfg, seed=0)) == count_params_by_component(build(cfg, device="meta"))
