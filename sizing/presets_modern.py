"""Presets of the architectures of 2024-26 (latent attention, shared experts, dense/MoE layer
patterns, qk-norm, four-norm blocks, local/global layers, sinks), as data with their sources.

Each config is what transformers 5.24.0 builds from the model's config.json (the counts are
checked exactly against tests/fixtures/hf_counts_modern.json), and each preset carries the
published figures as printed, with what they count (sizing.presets.Published). Built by
`modern_presets(Preset, Published)` so that this module needs nothing from presets.py.
"""

from __future__ import annotations

from .config import ModelConfig

B, T_ = 10**9, 10**12
_RMS = dict(mlp="swiglu", norm="rmsnorm", position="rope")
_DSV3_SRC = "arXiv:2412.19437 (DeepSeek-V3 Technical Report): 671B total, 37B activated, 14.8T tokens; HF config.json"
_DSV2L_SRC = "HF deepseek-ai/DeepSeek-V2-Lite model card (15.7B total, 2.4B activated, 5.7T tokens) and config.json"
_QWEN3_SRC = "arXiv:2505.09388 (Qwen3 Technical Report, 36T tokens); HF Qwen/{} model card (parameters) and config.json"
_QWEN15_SRC = "qwenlm.github.io/blog/qwen-moe (14.3B total, 2.7B activated); HF Qwen/Qwen1.5-MoE-A2.7B config.json"
_GEMMA2_SRC = "arXiv:2408.00118 (Gemma 2: 9B on 8T tokens, 27B on 13T); HF google/gemma-2-{} config.json"
_GEMMA3_SRC = (
    "arXiv:2503.19786 (Gemma 3) Table 1: 27B = 417M vision + 1,416M embedding + 25,600M non-embedding, "
    "14T tokens; HF google/gemma-3-27b-pt config.json text_config"
)
_LLAMA4_SRC = "HF meta-llama/Llama-4-{} model card ({}) and config.json text_config"
_GPT_OSS_SRC = (
    "arXiv:2508.10925 (gpt-oss-120b & gpt-oss-20b model card) Table 1: total and active parameters "
    "(active without the embedding); HF openai/gpt-oss-{} config.json"
)


def _deepseek_v3() -> ModelConfig:
    return ModelConfig(
        vocab_size=129280,
        d_model=7168,
        n_layers=61,
        n_heads=128,
        d_ff=18432,
        **_RMS,
        norm_eps=1e-6,
        n_experts=256,
        top_k=8,
        expert_d_ff=2048,
        first_dense_layers=3,
        n_shared_experts=1,
        kv_lora_rank=512,
        q_lora_rank=1536,
        qk_nope_head_dim=128,
        qk_rope_head_dim=64,
        v_head_dim=128,
    )


def _deepseek_v2_lite() -> ModelConfig:
    return ModelConfig(
        vocab_size=102400,
        d_model=2048,
        n_layers=27,
        n_heads=16,
        d_ff=10944,
        **_RMS,
        norm_eps=1e-6,
        n_experts=64,
        top_k=6,
        expert_d_ff=1408,
        first_dense_layers=1,
        n_shared_experts=2,
        kv_lora_rank=512,
        qk_nope_head_dim=128,
        qk_rope_head_dim=64,
        v_head_dim=128,
    )


def _qwen3(d, L, h, kv, d_ff, experts=None) -> ModelConfig:
    moe = dict(n_experts=128, top_k=8, expert_d_ff=experts) if experts else {}
    head = None if h * 128 == d else 128
    return ModelConfig(
        vocab_size=151936,
        d_model=d,
        n_layers=L,
        n_heads=h,
        n_kv_heads=kv,
        head_dim=head,
        d_ff=d_ff,
        **_RMS,
        rope_theta=1e6,
        norm_eps=1e-6,
        qk_norm="head",
        **moe,
    )


def _qwen15_moe() -> ModelConfig:
    return ModelConfig(
        vocab_size=151936,
        d_model=2048,
        n_layers=24,
        n_heads=16,
        d_ff=5632,
        **_RMS,
        rope_theta=1e6,
        norm_eps=1e-6,
        qkv_bias=True,
        n_experts=60,
        top_k=4,
        expert_d_ff=1408,
        n_shared_experts=1,
        shared_expert_d_ff=5632,
        shared_expert_gate=True,
    )


def _gemma(d, L, h, kv, d_head, d_ff, vocab=256000, window=4096, every=2, theta=10000.0, qk_norm="none"):
    return ModelConfig(
        vocab_size=vocab,
        d_model=d,
        n_layers=L,
        n_heads=h,
        n_kv_heads=kv,
        head_dim=d_head,
        d_ff=d_ff,
        mlp="geglu",
        norm="rmsnorm",
        position="rope",
        norm_placement="sandwich",
        tied_embeddings=True,
        sliding_window=window,
        full_attention_every=every,
        rope_theta=theta,
        norm_eps=1e-6,
        qk_norm=qk_norm,
    )


def _llama4(n_experts, step, qk_norm) -> ModelConfig:
    return ModelConfig(
        vocab_size=202048,
        d_model=5120,
        n_layers=48,
        n_heads=40,
        n_kv_heads=8,
        d_ff=16384,  # intermediate_size_mlp: the dense layers
        **_RMS,
        rope_theta=500000.0,
        n_experts=n_experts,
        top_k=1,
        expert_d_ff=8192,
        n_shared_experts=1,
        moe_layer_step=step,
        qk_norm=qk_norm,
        attention_chunk=8192,
        full_attention_every=4,
        nope_layer_every=4,
    )


def _gpt_oss(L, n_experts) -> ModelConfig:
    return ModelConfig(
        vocab_size=201088,
        d_model=2880,
        n_layers=L,
        n_heads=64,
        n_kv_heads=8,
        head_dim=64,
        d_ff=2880,
        **_RMS,
        rope_theta=150000.0,
        qkv_bias=True,
        attn_out_bias=True,
        mlp_bias=True,
        n_experts=n_experts,
        top_k=4,
        router_bias=True,
        sliding_window=128,
        full_attention_every=2,
        attention_sinks=True,
    )


def modern_presets(Preset, Published) -> list:
    """The presets, built with sizing.presets' Preset and Published classes."""
    no_emb = "active_without_embedding"
    return [
        Preset(
            "deepseek-v3",
            "deepseek_v3",
            _deepseek_v3(),
            _DSV3_SRC,
            context=4096,
            training_tokens=14_800 * B,
            tokens_source=_DSV3_SRC,
            published_params_rounded=671e9,
            hf_id="deepseek-ai/DeepSeek-V3",
            notes="Pre-trained at 4K context, extended to 128K (YaRN). The 14B multi-token-prediction module "
            "(685B in the checkpoint) is not part of the 671B, nor of what transformers builds; sizing.mtp sizes it.",
            published=Published("671B", "37B", active_counts=no_emb),
            served_context=131072,
            served_context_source="arXiv:2412.19437 section 4.3: extended to 32K, then 128K, with YaRN; HF "
            "config.json rope_scaling yarn, factor 40 over original_max_position_embeddings 4096",
        ),
        Preset(
            "deepseek-v2-lite",
            "deepseek_v2",
            _deepseek_v2_lite(),
            _DSV2L_SRC,
            context=4096,
            training_tokens=5_700 * B,
            tokens_source=_DSV2L_SRC,
            published_params_rounded=15.7e9,
            hf_id="deepseek-ai/DeepSeek-V2-Lite",
            published=Published(
                "15.7B", "2.4B", active_counts=no_emb, rounding="truncate", note="2.45B without the embedding"
            ),
        ),
        Preset(
            "qwen3-8b",
            "qwen3",
            _qwen3(4096, 36, 32, 8, 12288),
            _QWEN3_SRC.format("Qwen3-8B"),
            context=4096,
            training_tokens=36 * T_,
            tokens_source="arXiv:2505.09388: 36T tokens (stage 1 at 4,096 tokens of context)",
            published_params_rounded=8.2e9,
            hf_id="Qwen/Qwen3-8B",
            published=Published("8.2B", note="non-embedding 6.95B (embedding and lm_head left out)"),
        ),
        Preset(
            "qwen3-30b-a3b",
            "qwen3_moe",
            _qwen3(2048, 48, 32, 4, 6144, experts=768),
            _QWEN3_SRC.format("Qwen3-30B-A3B"),
            context=4096,
            training_tokens=36 * T_,
            tokens_source="arXiv:2505.09388: 36T tokens (stage 1 at 4,096 tokens of context)",
            published_params_rounded=30.5e9,
            hf_id="Qwen/Qwen3-30B-A3B",
            published=Published("30.5B", "3.3B", rounding="truncate"),
        ),
        Preset(
            "qwen3-235b-a22b",
            "qwen3_moe",
            _qwen3(4096, 94, 64, 4, 12288, experts=1536),
            _QWEN3_SRC.format("Qwen3-235B-A22B"),
            context=4096,
            training_tokens=36 * T_,
            tokens_source="arXiv:2505.09388: 36T tokens (stage 1 at 4,096 tokens of context)",
            published_params_rounded=235e9,
            hf_id="Qwen/Qwen3-235B-A22B",
            published=Published("235B", "22B"),
        ),
        Preset(
            "qwen1.5-moe-a2.7b",
            "qwen2_moe",
            _qwen15_moe(),
            _QWEN15_SRC,
            context=8192,
            published_params_rounded=14.3e9,
            hf_id="Qwen/Qwen1.5-MoE-A2.7B",
            published=Published("14.3B", "2.7B", note="one shared expert of 5,632 with a sigmoid gate"),
        ),
        Preset(
            "gemma-2-9b",
            "gemma2",
            _gemma(3584, 42, 16, 8, 256, 14336),
            _GEMMA2_SRC.format("9b"),
            context=8192,
            training_tokens=8 * T_,
            tokens_source=_GEMMA2_SRC.format("9b"),
            published_params_rounded=9e9,
            hf_id="google/gemma-2-9b",
            published=Published("9B"),
        ),
        Preset(
            "gemma-2-27b",
            "gemma2",
            _gemma(4608, 46, 32, 16, 128, 36864),
            _GEMMA2_SRC.format("27b"),
            context=8192,
            training_tokens=13 * T_,
            tokens_source=_GEMMA2_SRC.format("27b"),
            published_params_rounded=27e9,
            hf_id="google/gemma-2-27b",
            published=Published("27B"),
        ),
        Preset(
            "gemma-3-27b",
            "gemma3_text",
            _gemma(5376, 62, 32, 16, 128, 21504, vocab=262208, window=1024, every=6, theta=1e6, qk_norm="head"),
            _GEMMA3_SRC,
            context=32768,
            training_tokens=14 * T_,
            tokens_source=_GEMMA3_SRC,
            published_params_rounded=27e9,
            hf_id="google/gemma-3-27b-pt",
            notes="The text model alone; the 417M SigLIP vision encoder is not sized.",
            published=Published(
                "27B", total_counts="with_vision", note="25,600M non-embedding, ours 25,599.7M (Table 1)"
            ),
        ),
        Preset(
            "llama-4-scout",
            "llama4_text",
            _llama4(16, 1, "unweighted"),
            _LLAMA4_SRC.format("Scout-17B-16E", "109B total, 17B active, ~40T tokens"),
            context=8192,
            training_tokens=40 * T_,
            tokens_source="HF meta-llama/Llama-4-Scout-17B-16E model card (~40T tokens)",
            published_params_rounded=109e9,
            hf_id="meta-llama/Llama-4-Scout-17B-16E",
            notes="The text model alone; the published 109B includes the vision encoder.",
            published=Published("109B", "17B", total_counts="with_vision"),
        ),
        Preset(
            "llama-4-maverick",
            "llama4_text",
            _llama4(128, 2, "none"),
            _LLAMA4_SRC.format("Maverick-17B-128E", "400B total, 17B active, ~22T tokens"),
            context=8192,
            training_tokens=22 * T_,
            tokens_source="HF meta-llama/Llama-4-Maverick-17B-128E model card (~22T tokens)",
            published_params_rounded=400e9,
            hf_id="meta-llama/Llama-4-Maverick-17B-128E",
            notes="The text model alone; the published 400B includes the vision encoder.",
            published=Published("400B", "17B", total_counts="with_vision"),
        ),
        Preset(
            "gpt-oss-20b",
            "gpt_oss",
            _gpt_oss(24, 32),
            _GPT_OSS_SRC.format("20b"),
            context=4096,
            published_params_rounded=20.91e9,
            hf_id="openai/gpt-oss-20b",
            notes="Pre-trained at 4K context, extended to 128K (YaRN).",
            published=Published("20.91B", "3.61B", active_counts=no_emb),
        ),
        Preset(
            "gpt-oss-120b",
            "gpt_oss",
            _gpt_oss(36, 128),
            _GPT_OSS_SRC.format("120b"),
            context=4096,
            published_params_rounded=116.83e9,
            hf_id="openai/gpt-oss-120b",
            notes="Pre-trained at 4K context, extended to 128K (YaRN).",
            published=Published("116.83B", "5.13B", active_counts=no_emb),
        ),
        Preset(
            "phi-3-mini",
            "phi3",
            ModelConfig(
                vocab_size=32064, d_model=3072, n_layers=32, n_heads=32, d_ff=8192, **_RMS, sliding_window=2047
            ),
            "arXiv:2404.14219 (Phi-3: 3.8B, 3.3T tokens); HF microsoft/Phi-3-mini-4k-instruct config.json",
            context=4096,
            training_tokens=3_300 * B,
            tokens_source="arXiv:2404.14219 (3.3T tokens)",
            published_params_rounded=3.8e9,
            hf_id="microsoft/Phi-3-mini-4k-instruct",
            notes="Fused qkv_proj and gate_up_proj in the checkpoint: the same counts as separate matrices.",
            published=Published("3.8B"),
        ),
        Preset(
            "olmo-2-7b",
            "olmo2",
            ModelConfig(
                vocab_size=100352,
                d_model=4096,
                n_layers=32,
                n_heads=32,
                d_ff=11008,
                **_RMS,
                norm_placement="branch_post",
                qk_norm="width",
                rope_theta=500000.0,
                norm_eps=1e-6,
            ),
            "arXiv:2501.00656 (2 OLMo 2 Furious); HF allenai/OLMo-2-1124-7B config.json",
            context=4096,
            published_params_rounded=7e9,
            hf_id="allenai/OLMo-2-1124-7B",
            published=Published("7B"),
        ),
    ]
