"""Llama 3.2 Vision (`mllama`), as transformers 5.25 builds it (modeling_mllama.py):

- the language model: num_hidden_layers decoder layers, of which those in `cross_attention_layers`
  cross-attend to the image instead of to the text. The self-attention layers are a Llama stack
  (the ModelConfig, n_layers = L - L_cross); each cross-attention layer holds q, k, v, o (no bias),
  per-head q and k RMSNorms (d_h each), two tanh gates (1 each), two RMSNorms (d) and the SwiGLU MLP
  (`text_extra`). The token embedding has 8 rows more than the lm_head (vocab_size + 8);
- the tower (MllamaVisionModel): a patch conv (no bias), a class token, gated learned positions
  ((N + 1)·h, a gate, and a tile position table of (R + 1) x (T·(N + 1)·h) for R supported aspect
  ratios and T tiles), gated pre- and post-tile embeddings ((R + 1)·T·h + 1 each), LayerNorms before
  and after, num_hidden_layers local blocks and num_global_layers gated ones (2 gates each), all
  without attention biases;
- the projector: Linear(vision_output_dim, d) with a bias.

An image runs the tower on max_num_tiles tiles (padded) of N + 1 patches each; the prompt holds one
image token, and every cross-attention layer projects each vision token to its K and V.
"""

from __future__ import annotations

from sizing.inputs import ConfigError, ModelConfig
from sizing.inputs.hf import _get, from_hf_config
from sizing.validate import show
from sizing.vision.model import MAC, VisionLanguage, VisionTower

_DEFAULT_CROSS = [3, 8, 13, 18, 23, 28, 33, 38]
_DEFAULT_RATIOS = 8  # [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]]
EXTRA_EMBEDDING_ROWS = 8  # MllamaTextModel: nn.Embedding(vocab_size + 8, hidden_size)


def _section(d: dict, key: str) -> dict:
    sub = d.get(key, {})
    if not isinstance(sub, dict):
        raise ConfigError(f"{key} ({show(sub)}) must be the JSON object of the model's {key.split('_')[0]} part")
    return sub


def _cross_layers(text: dict, L: int) -> list[int]:
    cross = text.get("cross_attention_layers") or _DEFAULT_CROSS
    if not isinstance(cross, list) or any(not isinstance(i, int) or not 0 <= i < L for i in cross):
        raise ConfigError(f"text_config.cross_attention_layers ({show(cross)}) must list layer indices below {L}")
    return sorted(set(cross))


def _text_model(text: dict, n_cross: int) -> ModelConfig:
    layers = _get(text, "num_hidden_layers", default=40)
    if layers <= n_cross:
        raise ConfigError(f"text_config.num_hidden_layers ({layers}) must exceed its {n_cross} cross-attention layers")
    fields = {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336}
    fields |= {"vocab_size": 128256, "rms_norm_eps": 1e-5}
    llama = {**fields, **text, "model_type": "llama", "num_hidden_layers": layers - n_cross}
    llama.pop("head_dim", None)  # MllamaTextCrossAttention and self-attention use hidden_size // heads
    return from_hf_config(llama)


def _cross_layer_params(cfg: ModelConfig) -> dict[str, int]:
    """One cross-attention layer by part."""
    d, dh = cfg.d_model, cfg.d_head
    return {
        "cross_attention": 2 * d * cfg.q_width + 2 * d * cfg.kv_width + 2 * dh,  # q, o; k, v; q and k norms
        "cross_mlp": 3 * d * cfg.d_ff,  # SwiGLU
        "cross_norms_and_gates": 2 * d + 2,  # two RMSNorms, the attention and MLP tanh gates
    }


def cross_layer_flops(cfg: ModelConfig, text_tokens: int, vision_tokens: int) -> int:
    """Forward FLOPs of one cross-attention layer: q, o and the MLP on T text tokens, k and v on N
    vision tokens, and QK^T and AV of every text query against all N vision keys (2 per multiply-add)."""
    T, N = text_tokens, vision_tokens
    per_text = 2 * cfg.d_model * cfg.q_width + 3 * cfg.d_model * cfg.d_ff
    attention = T * N * cfg.n_heads * 2 * cfg.d_head
    return MAC * (T * per_text + N * 2 * cfg.d_model * cfg.kv_width + attention)


def cross_layer_params(cfg: ModelConfig) -> int:
    return sum(_cross_layer_params(cfg).values())


def mllama_from_hf_config(d: dict) -> tuple[ModelConfig, VisionLanguage]:
    text_d, v = _section(d, "text_config"), _section(d, "vision_config")
    cross = _cross_layers(text_d, _get(text_d, "num_hidden_layers", default=40))
    text = _text_model(text_d, len(cross))
    h = _get(v, "hidden_size", default=1280)
    local, global_ = _get(v, "num_hidden_layers", default=32), _get(v, "num_global_layers", default=8)
    tower = VisionTower(
        hidden=h,
        intermediate=_get(v, "intermediate_size", default=5120),
        layers=local + global_,
        heads=_get(v, "attention_heads", default=16),
        patch=_get(v, "patch_size", default=14),
        image_size=_get(v, "image_size", default=448),
        channels=_get(v, "num_channels", default=3),
        patch_bias=False,
        class_token=True,
        pre_norm=True,
        attn_bias=False,
    )
    ratios = v.get("supported_aspect_ratios")
    n_ratios = _DEFAULT_RATIOS if ratios is None else len(ratios) if isinstance(ratios, list) else 0
    if n_ratios == 0:
        raise ConfigError(f"vision_config.supported_aspect_ratios ({show(ratios)}) must be a list of [rows, cols]")
    tiles, n_pos = _get(v, "max_num_tiles", default=4), tower.patches_per_side**2 + 1
    extra = (
        ("vision.tile_positions", (n_ratios + 1) * tiles * n_pos * h + 1),  # the table and its gate
        ("vision.tile_embeddings", 2 * ((n_ratios + 1) * tiles * h + 1)),  # pre- and post-tile, gated
        ("vision.global_gates", 2 * global_),
    )
    cross_kv = len(cross) * MAC * 2 * text.d_model * text.kv_width
    text_extra = tuple((key, len(cross) * size) for key, size in _cross_layer_params(text).items())
    text_extra += (("embed_tokens_extra_rows", EXTRA_EMBEDDING_ROWS * text.d_model),)
    projector = (("projector.multi_modal_projector", _get(v, "vision_output_dim", default=7680), text.d_model, True),)
    vision = VisionLanguage(
        "mllama",
        tower,
        projector,
        extra,
        fixed_tokens=1,
        drop_class_token=False,
        fixed_runs=tiles,
        cross_kv_flops_per_vision_token=cross_kv,
        text_extra=text_extra,
    )
    return text, vision
