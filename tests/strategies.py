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


@st.composite
def modern_configs(draw, max_layers=6):
    """Small valid ModelConfigs with the 2024-26 switches drawn: latent attention (with or without
    a query rank), shared experts and their gate, first dense layers and an MoE step, qk-norm,
    sandwich / branch-post norms, sinks, sliding or chunked layers with a global one every n,
    NoPE layers."""
    mla = draw(st.booleans())
    n_heads = draw(st.integers(1, 4))
    n_layers = draw(st.integers(1, max_layers))
    fields = dict(
        vocab_size=draw(st.integers(2, 50)),
        d_model=n_heads * draw(st.sampled_from([4, 8])),
        n_layers=n_layers,
        n_heads=n_heads,
        d_ff=draw(st.integers(1, 40)),
        mlp=draw(st.sampled_from(["swiglu", "geglu", "gelu"])),
        norm="rmsnorm",
        position="rope",
        norm_placement=draw(st.sampled_from(["pre", "post", "sandwich", "branch_post"])),
        qkv_bias=draw(st.booleans()),
        attn_out_bias=draw(st.booleans()),
        mlp_bias=draw(st.booleans()),
        tied_embeddings=draw(st.booleans()),
        attention_sinks=draw(st.booleans()),
    )
    if mla:
        fields |= dict(
            kv_lora_rank=draw(st.integers(1, 12)),
            q_lora_rank=draw(st.sampled_from([None, 3, 10])),
            qk_nope_head_dim=draw(st.integers(1, 6)),
            qk_rope_head_dim=draw(st.sampled_from([2, 4])),
            v_head_dim=draw(st.integers(1, 6)),
        )
    else:
        fields |= dict(
            n_kv_heads=draw(st.sampled_from([d for d in range(1, n_heads + 1) if n_heads % d == 0])),
            qk_norm=draw(st.sampled_from(["none", "head", "width", "unweighted"])),
            nope_layer_every=draw(st.sampled_from([0, 2, 3])),
        )
    local = draw(st.sampled_from([None, "window", "chunk"]))
    if local == "window":
        fields["sliding_window"] = draw(st.integers(1, 9))
    elif local == "chunk":
        fields["attention_chunk"] = draw(st.integers(1, 9))
    if local:
        fields["full_attention_every"] = draw(st.sampled_from([0, 2, 3]))
    n_experts = draw(st.sampled_from([0, 2, 4]))
    if n_experts:
        first = draw(st.integers(0, n_layers - 1))
        step = draw(st.sampled_from([1, 2]))
        if n_layers // step - first // step == 0:
            step = 1
        shared = draw(st.integers(0, 2))
        fields |= dict(
            n_experts=n_experts,
            top_k=draw(st.integers(1, n_experts)),
            expert_d_ff=draw(st.sampled_from([None, 4, 12])),
            router_bias=draw(st.booleans()),
            first_dense_layers=first,
            moe_layer_step=step,
            n_shared_experts=shared,
            shared_expert_d_ff=draw(st.sampled_from([None, 6])) if shared else None,
            shared_expert_gate=draw(st.booleans()) if shared else False,
        )
    return ModelConfig(**fields)
