"""Hypothesis strategies shared by the test modules."""

from hypothesis import strategies as st

from sizing import ModelConfig


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
        moe = dict(
            n_experts=n_experts,
            top_k=draw(st.integers(1, n_experts)),
            expert_d_ff=draw(st.sampled_from([None, 4, 12])),
            router_bias=draw(st.booleans()),
        )
    return ModelConfig(
        vocab_size=draw(st.integers(2, 50)),
        d_model=d_model,
        n_layers=draw(st.integers(1, max_layers)),
        n_heads=n_heads,
        n_kv_heads=draw(st.sampled_from([None, kv])),
        head_dim=head_dim,
        d_ff=draw(st.integers(1, 40)),
        mlp=draw(st.sampled_from(["gelu", "relu", "swiglu", "geglu"])),
        norm=norm,
        norm_bias=norm_bias,
        norm_placement=placement,
        final_norm=draw(st.booleans()),
        embedding_norm=draw(st.booleans()),
        parallel_block=parallel,
        shared_block_norm=parallel and draw(st.booleans()),
        position=position,
        max_positions=draw(st.integers(16, 40)) if position == "learned" else draw(st.sampled_from([0, 7])),
        rotary_fraction=draw(st.sampled_from(fractions)) if position == "rope" else 1.0,
        qkv_bias=draw(st.booleans()),
        attn_out_bias=draw(st.booleans()),
        mlp_bias=draw(st.booleans()),
        lm_head_bias=draw(st.booleans()),
        tied_embeddings=draw(st.booleans()),
        sliding_window=draw(st.sampled_from([None, 1, 3, 5])),
        vocab_pad_multiple=draw(st.sampled_from([1, 8])),
        **moe,
    )
