"""Presets: real architectures as data, each with its source.

`published_params` is the exact count the source reports (checked by a test); where a
source gives only a rounded figure it goes in `published_params_rounded`. `context` is the
training context length and `training_tokens` the published pre-training tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from .config import ModelConfig, llama_ffn_dim
from .names import lookup
from .presets_modern import modern_presets


@dataclass(frozen=True)
class Published:
    """Published parameter figures exactly as the source prints them ("671B", "20.91B"), with what
    they count: `total_counts` "total" (the model as sized) or "with_vision" (the whole image-text
    checkpoint; the preset is its text model); `active_counts` "active" (every parameter one
    token uses) or "active_without_embedding" (the input embedding left out). `rounding`:
    "round" to the last printed digit, or "truncate" where the source cuts digits instead."""

    total: str
    active: str | None = None
    total_counts: str = "total"
    active_counts: str = "active"
    rounding: str = "round"
    note: str = ""


def published_value(text: str) -> int:
    """ "671B" -> 671e9, "20.91B" -> 20.91e9, "25,600M" -> 25.6e9, exactly (no float rounding)."""
    scale = {"B": 10**9, "M": 10**6, "T": 10**12}[text[-1]]
    return int(Decimal(text[:-1].replace(",", "")) * scale)


@dataclass(frozen=True)
class Preset:
    name: str
    family: str
    config: ModelConfig
    source: str
    context: int
    training_tokens: int | None = None
    tokens_source: str | None = None
    published_params: int | None = None  # exact, as the source prints it
    published_params_rounded: float | None = None  # e.g. 125e6 from a paper table
    hf_id: str | None = None
    notes: str = ""
    published: Published | None = None  # the published figures as printed (modern presets)
    # the context the released model serves when it is longer than the pretraining `context`
    # (a long-context stage, RoPE scaling such as YaRN), with its source; None: = context
    served_context: int | None = None
    served_context_source: str | None = None

    @property
    def serving_context(self) -> int:
        """The longest prompt + output the released model is published to serve."""
        return self.context if self.served_context is None else self.served_context


B, T_ = 10**9, 10**12

# ---- GPT-2 (Radford et al. 2019; HF openai-community configs) ----
_GPT2 = dict(
    vocab_size=50257,
    max_positions=1024,
    mlp="gelu",
    norm="layernorm",
    position="learned",
    qkv_bias=True,
    attn_out_bias=True,
    mlp_bias=True,
    tied_embeddings=True,
)
_GPT2_SRC = "HF openai-community/gpt2* config.json; count: keras-hub gpt2_presets.py (reference-figures.json)"


def _gpt2(name, d, L, h, params):
    return Preset(
        name,
        "gpt2",
        ModelConfig(d_model=d, n_layers=L, n_heads=h, d_ff=4 * d, **_GPT2),
        _GPT2_SRC,
        context=1024,
        published_params=params,
        hf_id=f"openai-community/{name}",
    )


# ---- GPT-3 (Brown et al. 2020, Table 2.1): GPT-2 architecture at n_ctx 2048, 300B tokens ----
_GPT3 = dict(_GPT2, max_positions=2048)
_GPT3_SRC = "arXiv:2005.14165 Table 2.1 (shapes), Table D.1 (params, compute); 300B tokens"


def _gpt3(name, d, L, h, d_head, rounded, notes=""):
    cfg = ModelConfig(
        d_model=d, n_layers=L, n_heads=h, head_dim=d_head if d_head * h != d else None, d_ff=4 * d, **_GPT3
    )
    return Preset(
        name,
        "gpt3",
        cfg,
        _GPT3_SRC,
        context=2048,
        training_tokens=300 * B,
        tokens_source=_GPT3_SRC,
        published_params_rounded=rounded,
        notes=notes,
    )


# ---- LLaMA 1 (Touvron et al. 2023a) / Llama 2 (2023b) / Llama 3 (2024) ----
_LLAMA = dict(mlp="swiglu", norm="rmsnorm", position="rope", tied_embeddings=False)
_L1_SRC = "arXiv:2302.13971 Table 2; HF huggyllama config.json; counts: pyllama / keras-hub (reference-figures.json)"
_L2_SRC = "arXiv:2307.09288; meta-llama/llama-models llama2 MODEL_CARD.md; HF meta-llama/Llama-2-*-hf config.json"
_L3_SRC = "arXiv:2407.21783 (The Llama 3 Herd of Models) Table 3; HF meta-llama config.json"


def _llama(
    name,
    family,
    d,
    L,
    h,
    d_ff,
    ctx,
    tokens,
    src,
    params=None,
    rounded=None,
    kv=None,
    vocab=32000,
    theta=10000.0,
    eps=1e-5,
    hf_id=None,
    notes="",
    served=None,
):
    cfg = ModelConfig(
        vocab_size=vocab,
        d_model=d,
        n_layers=L,
        n_heads=h,
        n_kv_heads=kv,
        d_ff=d_ff,
        rope_theta=theta,
        norm_eps=eps,
        **_LLAMA,
    )
    return Preset(
        name,
        family,
        cfg,
        src,
        context=ctx,
        training_tokens=tokens,
        tokens_source=src,
        published_params=params,
        published_params_rounded=rounded,
        hf_id=hf_id,
        notes=notes,
        served_context=served[0] if served else None,
        served_context_source=served[1] if served else None,
    )


# ---- BLOOM (BigScience 2022, arXiv:2211.05100): ALiBi (no position table), LayerNorm on the
# embeddings (word_embeddings_layernorm) and in pre-LN blocks, biases everywhere, GELU 4d, tied ----
_BLOOM = dict(
    vocab_size=250880,
    mlp="gelu",
    norm="layernorm",
    position="none",
    embedding_norm=True,
    qkv_bias=True,
    attn_out_bias=True,
    mlp_bias=True,
    tied_embeddings=True,
)


def _bloom(name, d, L, h, params, hf_id, src, tokens=None, tokens_source=None):
    cfg = ModelConfig(d_model=d, n_layers=L, n_heads=h, d_ff=4 * d, **_BLOOM)
    return Preset(
        name,
        "bloom",
        cfg,
        src,
        context=2048,
        training_tokens=tokens,
        tokens_source=tokens_source,
        published_params=params,
        hf_id=hf_id,
    )


_PRESET_LIST = [
    _gpt2("gpt2", 768, 12, 12, 124_439_808),
    _gpt2("gpt2-medium", 1024, 24, 16, 354_823_168),
    _gpt2("gpt2-large", 1280, 36, 20, 774_030_080),
    _gpt2("gpt2-xl", 1600, 48, 25, 1_557_611_200),
    _gpt3("gpt3-125m", 768, 12, 12, 64, 125e6),
    _gpt3("gpt3-350m", 1024, 24, 16, 64, 356e6),
    _gpt3("gpt3-760m", 1536, 24, 16, 96, 760e6),
    _gpt3(
        "gpt3-1.3b",
        2048,
        24,
        16,
        128,
        1320e6,
        notes="Table 2.1 lists 24 heads of d_head 128 at d_model 2048, which cannot tile 2048 (24 x 128 = 3072). "
        "Parameters and FLOPs depend only on h x d_h, so we use 16 heads x 128 = 2048, which "
        "reproduces Table D.1's 1,320M; a 3072-wide attention would give 1.52B.",
    ),
    _gpt3("gpt3-2.7b", 2560, 32, 32, 80, 2650e6),
    _gpt3("gpt3-6.7b", 4096, 32, 32, 128, 6660e6),
    _gpt3(
        "gpt3-13b",
        5120,
        40,
        40,
        128,
        12850e6,
        notes="Table 2.1 prints d_model 5140, a typo: 40 heads x 128 = 5120, and 5120 reproduces the "
        "12,850M of Table D.1.",
    ),
    _gpt3("gpt3-175b", 12288, 96, 96, 128, 174600e6),
    _llama(
        "llama-7b",
        "llama",
        4096,
        32,
        32,
        llama_ffn_dim(4096, 256),
        2048,
        1 * T_,
        _L1_SRC,
        6_738_415_616,
        eps=1e-6,
        hf_id="huggyllama/llama-7b",
    ),
    _llama(
        "llama-13b",
        "llama",
        5120,
        40,
        40,
        llama_ffn_dim(5120, 256),
        2048,
        1 * T_,
        _L1_SRC,
        13_015_864_320,
        eps=1e-6,
        hf_id="huggyllama/llama-13b",
    ),
    _llama(
        "llama-33b",
        "llama",
        6656,
        60,
        52,
        llama_ffn_dim(6656, 256),
        2048,
        1400 * B,
        _L1_SRC,
        32_528_943_616,
        eps=1e-6,
        hf_id="huggyllama/llama-30b",
        notes="Released as 'llama-30b'; the paper calls it 33B.",
    ),
    _llama(
        "llama-65b",
        "llama",
        8192,
        80,
        64,
        llama_ffn_dim(8192, 256),
        2048,
        1400 * B,
        _L1_SRC,
        65_285_660_672,
        eps=1e-6,
        hf_id="huggyllama/llama-65b",
    ),
    _llama(
        "llama2-7b",
        "llama2",
        4096,
        32,
        32,
        llama_ffn_dim(4096, 256),
        4096,
        2 * T_,
        _L2_SRC,
        6_738_415_616,
        hf_id="meta-llama/Llama-2-7b-hf",
    ),
    _llama(
        "llama2-13b",
        "llama2",
        5120,
        40,
        40,
        llama_ffn_dim(5120, 256),
        4096,
        2 * T_,
        _L2_SRC,
        13_015_864_320,
        hf_id="meta-llama/Llama-2-13b-hf",
    ),
    _llama(
        "llama2-70b",
        "llama2",
        8192,
        80,
        64,
        llama_ffn_dim(8192, 4096, 1.3),
        4096,
        2 * T_,
        _L2_SRC,
        kv=8,
        hf_id="meta-llama/Llama-2-70b-hf",
        notes="'70B' is the name, not a count (68.98B). GQA with 8 kv heads; "
        "FFN rule with ffn_dim_multiplier 1.3, multiple_of 4096 -> 28672.",
    ),
    _llama(
        "llama3-8b",
        "llama3",
        4096,
        32,
        32,
        llama_ffn_dim(4096, 1024, 1.3),
        8192,
        15 * T_,
        _L3_SRC,
        8_030_261_248,
        kv=8,
        vocab=128256,
        theta=500000.0,
        hf_id="meta-llama/Meta-Llama-3-8B",
        notes="'over 15T tokens' (model card).",
    ),
    _llama(
        "llama3-70b",
        "llama3",
        8192,
        80,
        64,
        llama_ffn_dim(8192, 4096, 1.3),
        8192,
        15 * T_,
        _L3_SRC,
        70_553_706_496,
        kv=8,
        vocab=128256,
        theta=500000.0,
        hf_id="meta-llama/Meta-Llama-3-70B",
    ),
    _llama(
        "llama3.1-405b",
        "llama3",
        16384,
        126,
        128,
        llama_ffn_dim(16384, 4096, 1.2),
        8192,
        15_600 * B,
        _L3_SRC,
        rounded=405e9,
        kv=8,
        vocab=128256,
        theta=500000.0,
        hf_id="meta-llama/Llama-3.1-405B",
        notes="Pre-trained at 8K context on 15.6T tokens, then extended to 128K (paper section 3.4).",
        served=(131072, "arXiv:2407.21783 (The Llama 3 Herd of Models) section 3.4: context extended to 128K tokens"),
    ),
    Preset(
        "mistral-7b",
        "mistral",
        ModelConfig(
            vocab_size=32000,
            d_model=4096,
            n_layers=32,
            n_heads=32,
            n_kv_heads=8,
            d_ff=14336,
            sliding_window=4096,
            **_LLAMA,
        ),
        "arXiv:2310.06825 Table 1 (window 4096, context 8192); HF mistralai/Mistral-7B-v0.1 config.json",
        context=8192,
        published_params=7_241_732_096,
        hf_id="mistralai/Mistral-7B-v0.1",
    ),
    Preset(
        "mixtral-8x7b",
        "mixtral",
        ModelConfig(
            vocab_size=32000,
            d_model=4096,
            n_layers=32,
            n_heads=32,
            n_kv_heads=8,
            d_ff=14336,
            n_experts=8,
            top_k=2,
            rope_theta=1e6,
            **_LLAMA,
        ),
        "arXiv:2401.04088 Table 1 (46.7B total, 12.9B active); HF mistralai/Mixtral-8x7B-v0.1 config.json",
        context=32768,
        published_params=46_702_792_704,
        hf_id="mistralai/Mixtral-8x7B-v0.1",
    ),
    Preset(
        "mixtral-8x22b",
        "mixtral",
        ModelConfig(
            vocab_size=32768,
            d_model=6144,
            n_layers=56,
            n_heads=48,
            n_kv_heads=8,
            d_ff=16384,
            n_experts=8,
            top_k=2,
            rope_theta=1e6,
            **_LLAMA,
        ),
        "HF mistralai/Mixtral-8x22B-v0.1 config.json (141B total, 39B active: mistral.ai announcement)",
        context=65536,
        published_params_rounded=141e9,
        hf_id="mistralai/Mixtral-8x22B-v0.1",
    ),
    # ---- the quirks ----
    Preset(
        "opt-125m",
        "opt",
        ModelConfig(
            vocab_size=50272,
            d_model=768,
            n_layers=12,
            n_heads=12,
            d_ff=3072,
            mlp="relu",
            max_positions=2048 + 2,
            qkv_bias=True,
            attn_out_bias=True,
            mlp_bias=True,
            tied_embeddings=True,
        ),
        "arXiv:2205.01068 Table 1; HF facebook/opt-125m (OPTLearnedPositionalEmbedding keeps 2 extra rows)",
        context=2048,
        training_tokens=180 * B,
        tokens_source="arXiv:2205.01068 (~180B tokens)",
        hf_id="facebook/opt-125m",
        published_params_rounded=125e6,
    ),
    Preset(
        "opt-175b",
        "opt",
        ModelConfig(
            vocab_size=50272,
            d_model=12288,
            n_layers=96,
            n_heads=96,
            d_ff=49152,
            mlp="relu",
            max_positions=2048 + 2,
            qkv_bias=True,
            attn_out_bias=True,
            mlp_bias=True,
            tied_embeddings=True,
        ),
        "arXiv:2205.01068 Table 1 (96 layers, 96 heads, d 12288)",
        context=2048,
        training_tokens=180 * B,
        tokens_source="arXiv:2205.01068 (~180B tokens)",
        published_params_rounded=175e9,
    ),
    Preset(
        "pythia-160m",
        "gpt_neox",
        ModelConfig(
            vocab_size=50304,
            d_model=768,
            n_layers=12,
            n_heads=12,
            d_ff=3072,
            position="rope",
            rotary_fraction=0.25,
            parallel_block=True,
            qkv_bias=True,
            attn_out_bias=True,
            mlp_bias=True,
        ),
        "arXiv:2304.01373 Table 1; HF EleutherAI/pythia-160m config.json (parallel residual, rotary_pct 0.25)",
        context=2048,
        training_tokens=300 * B,
        tokens_source="arXiv:2304.01373 (299.9B tokens, the Pile)",
        published_params=162_322_944,
        hf_id="EleutherAI/pythia-160m",
    ),
    Preset(
        "pythia-1.4b",
        "gpt_neox",
        ModelConfig(
            vocab_size=50304,
            d_model=2048,
            n_layers=24,
            n_heads=16,
            d_ff=8192,
            position="rope",
            rotary_fraction=0.25,
            parallel_block=True,
            qkv_bias=True,
            attn_out_bias=True,
            mlp_bias=True,
        ),
        "arXiv:2304.01373 Table 1; HF EleutherAI/pythia-1.4b config.json",
        context=2048,
        training_tokens=300 * B,
        tokens_source="arXiv:2304.01373 (299.9B tokens, the Pile)",
        published_params=1_414_647_808,
        hf_id="EleutherAI/pythia-1.4b",
    ),
    Preset(
        "gpt-neox-20b",
        "gpt_neox",
        ModelConfig(
            vocab_size=50432,
            d_model=6144,
            n_layers=44,
            n_heads=64,
            d_ff=24576,
            position="rope",
            rotary_fraction=0.25,
            parallel_block=True,
            qkv_bias=True,
            attn_out_bias=True,
            mlp_bias=True,
        ),
        "arXiv:2204.06745 Table 1 (20,554,567,680 parameters); HF EleutherAI/gpt-neox-20b config.json",
        context=2048,
        published_params=20_554_567_680,
        hf_id="EleutherAI/gpt-neox-20b",
    ),
    Preset(
        "qwen2-0.5b",
        "qwen2",
        ModelConfig(
            vocab_size=151936,
            d_model=896,
            n_layers=24,
            n_heads=14,
            n_kv_heads=2,
            d_ff=4864,
            qkv_bias=True,
            rope_theta=1e6,
            norm_eps=1e-6,
            **dict(_LLAMA, tied_embeddings=True),
        ),
        "arXiv:2407.10671 Table 1; HF Qwen/Qwen2-0.5B config.json (q/k/v bias only, tied)",
        context=32768,
        published_params_rounded=0.49e9,
        hf_id="Qwen/Qwen2-0.5B",
    ),
    Preset(
        "qwen2-7b",
        "qwen2",
        ModelConfig(
            vocab_size=152064,
            d_model=3584,
            n_layers=28,
            n_heads=28,
            n_kv_heads=4,
            d_ff=18944,
            qkv_bias=True,
            rope_theta=1e6,
            norm_eps=1e-6,
            **_LLAMA,
        ),
        "arXiv:2407.10671 Table 1; HF Qwen/Qwen2-7B config.json (q/k/v bias only)",
        context=32768,
        published_params_rounded=7.07e9 + 0.54e9,
        hf_id="Qwen/Qwen2-7B",
        notes="The report's 7.07B excludes the 0.54B embedding; with it, 7.6B.",
    ),
    Preset(
        "gemma-2b",
        "gemma",
        ModelConfig(
            vocab_size=256000,
            d_model=2048,
            n_layers=18,
            n_heads=8,
            n_kv_heads=1,
            head_dim=256,
            d_ff=16384,
            mlp="geglu",
            norm="rmsnorm",
            position="rope",
            tied_embeddings=True,
            norm_eps=1e-6,
        ),
        "arXiv:2403.08295 Table 1 (MQA, head 256, GeGLU, tied); HF google/gemma-2b config.json",
        context=8192,
        training_tokens=3 * T_,
        tokens_source="arXiv:2403.08295 (2B: 3T tokens)",
        published_params=2_506_172_416,
        hf_id="google/gemma-2b",
    ),
    Preset(
        "gemma-7b",
        "gemma",
        ModelConfig(
            vocab_size=256000,
            d_model=3072,
            n_layers=28,
            n_heads=16,
            head_dim=256,
            d_ff=24576,
            mlp="geglu",
            norm="rmsnorm",
            position="rope",
            tied_embeddings=True,
            norm_eps=1e-6,
        ),
        "arXiv:2403.08295 Table 1 (head_dim 256 != 3072/16); HF google/gemma-7b config.json",
        context=8192,
        training_tokens=6 * T_,
        tokens_source="arXiv:2403.08295 (7B: 6T tokens)",
        published_params=8_537_680_896,
        hf_id="google/gemma-7b",
    ),
    Preset(
        "phi-2",
        "phi",
        ModelConfig(
            vocab_size=51200,
            d_model=2560,
            n_layers=32,
            n_heads=32,
            d_ff=10240,
            position="rope",
            rotary_fraction=0.4,
            parallel_block=True,
            shared_block_norm=True,
            qkv_bias=True,
            attn_out_bias=True,
            mlp_bias=True,
            lm_head_bias=True,
        ),
        "HF microsoft/phi-2 config.json and model card (2.7B, 1.4T tokens)",
        context=2048,
        training_tokens=1400 * B,
        tokens_source="microsoft/phi-2 model card (1.4T tokens)",
        published_params=2_779_683_840,
        hf_id="microsoft/phi-2",
    ),
    Preset(
        "falcon-7b",
        "falcon",
        ModelConfig(
            vocab_size=65024,
            d_model=4544,
            n_layers=32,
            n_heads=71,
            n_kv_heads=1,
            d_ff=4 * 4544,
            position="rope",
            parallel_block=True,
            shared_block_norm=True,
            tied_embeddings=True,
        ),
        "HF tiiuae/falcon-7b config.json (multi_query, parallel_attn, bias false) and model card (1.5T tokens)",
        context=2048,
        training_tokens=1500 * B,
        tokens_source="tiiuae/falcon-7b model card (1,500B tokens)",
        published_params=6_921_720_704,
        hf_id="tiiuae/falcon-7b",
    ),
    _bloom(
        "bloom-560m",
        1024,
        24,
        16,
        559_214_592,
        hf_id="bigscience/bloom-560m",
        src="HF bigscience/bloom-560m config.json and model card (559,214,592 parameters)",
    ),
    _bloom(
        "bloom-176b",
        14336,
        70,
        112,
        176_247_271_424,
        hf_id="bigscience/bloom",
        src="arXiv:2211.05100; HF bigscience/bloom config.json and model card (176,247,271,424 parameters)",
        tokens=366 * B,
        tokens_source="arXiv:2211.05100 (366B tokens)",
    ),
]

PRESETS: dict[str, Preset] = {p.name: p for p in _PRESET_LIST + modern_presets(Preset, Published)}
ALIASES = {
    "llama-30b": "llama-33b",
    "llama2-7b-hf": "llama2-7b",
    "llama3.1-8b": "llama3-8b",
    "llama3.1-70b": "llama3-70b",
    "mistral": "mistral-7b",
    "mixtral": "mixtral-8x7b",
    "bloom": "bloom-176b",
}


def get_preset(name: str) -> Preset:
    """A preset by name or alias; UnknownName (a SizingError and a KeyError) naming the
    closest presets otherwise."""
    return lookup(name, PRESETS, ALIASES, "preset", "see `sizing presets`")
