"""Gemma 3n (`gemma3n`, and its language model alone, `gemma3n_text`), as transformers 5.25 builds it
(modeling_gemma3n.py), every part counted apart:

- the language model: L layers of attention (q/k/v/o, q/k RMSNorms of d_h; the last
  num_kv_shared_layers layers reuse the keys and values of an earlier layer, so they hold no k/v
  projection or k norm), a GeGLU MLP whose width may differ per layer (`intermediate_size` as a
  list: the MatFormer nesting, a smaller model's widths inside the larger one's), four RMSNorms,
  AltUp (A = altup_num_inputs streams: an output scale d, correction coefficients A·A, prediction
  coefficients A·A·A, a router A·d and its norm d), LAuReL (a rank-r residual, d·r twice, and its
  norm d) and the per-layer input (a gate d·D, a projection D·d and a norm d, D =
  hidden_size_per_layer_input). Outside the layers: the token embedding V·d (the lm_head tied to it),
  the per-layer embeddings V_pl·L·D, their projection d·L·D and norm D, AltUp's (A - 1) input and
  (A - 1) output projections d·d, and the final norm;
- the audio tower (a USM conformer): two subsampling convs with their norms, an input projection,
  and per conformer layer two half-step feed-forwards (4a wide), relative-position attention (q, k,
  v, the position projection, the output, a per-dim scale a/heads), a light conv (a -> 2a GLU, a
  depthwise conv of K, a -> a) and the norms;
- the vision tower: timm's named architecture (`vision_config.architecture`), counted by its name
  (sizing/data/timm_towers.json: MobileNetV5-300M's parameters and FLOPs per 768 x 768 image, as timm
  builds it);
- the multimodal embedders of each tower: a table of its 128 soft tokens, two RMSNorms and a
  projection into d.
"""

from __future__ import annotations

from sizing.inputs import ConfigError, data_files
from sizing.inputs.hf import _get
from sizing.validate import show

MAC = 2
GEMMA3N_TYPES = ("gemma3n", "gemma3n_text")


def _widths(t: dict, L: int) -> list[int]:
    width = t.get("intermediate_size", 16384)
    widths = width if isinstance(width, list) else [width] * L
    if len(widths) != L or any(not isinstance(w, int) or isinstance(w, bool) or w < 1 for w in widths):
        raise ConfigError(f"text_config.intermediate_size ({show(width)}) must be a width or one width per layer ({L})")
    return widths


def _full_layers(t: dict, L: int) -> frozenset[int]:
    """The global-attention layers: `layer_types`, else every fifth (Gemma3nTextConfig's default)."""
    types = t.get("layer_types")
    if types is None:
        return frozenset(i for i in range(L) if (i + 1) % 5 == 0)
    if not isinstance(types, list) or len(types) != L or set(types) - {"full_attention", "sliding_attention"}:
        raise ConfigError(f"text_config.layer_types ({show(types)}) must give full or sliding attention for {L} layers")
    return frozenset(i for i, kind in enumerate(types) if kind == "full_attention")


def gemma3n_text_shape(t: dict) -> dict:
    """The language model's sizes, with transformers' Gemma3nTextConfig defaults."""
    L = _get(t, "num_hidden_layers", default=35)
    shape = {
        "L": L,
        "V": _get(t, "vocab_size", default=262400),
        "d": _get(t, "hidden_size", default=2048),
        "h": _get(t, "num_attention_heads", default=8),
        "h_kv": _get(t, "num_key_value_heads", default=2),
        "d_h": _get(t, "head_dim", default=256),
        "V_pl": _get(t, "vocab_size_per_layer_input", default=262144),
        "D": _get(t, "hidden_size_per_layer_input", default=256),
        "A": _get(t, "altup_num_inputs", default=4),
        "r": _get(t, "laurel_rank", default=64),
        "shared": _get(t, "num_kv_shared_layers", default=15),
        "window": _get(t, "sliding_window", default=512),
        "widths": _widths(t, L),
        "full": _full_layers(t, L),
    }
    if not 0 <= shape["shared"] < L:
        raise ConfigError(f"text_config.num_kv_shared_layers ({shape['shared']}) must be below num_hidden_layers ({L})")
    return shape


def text_params(s: dict) -> dict[str, int]:
    d, h, h_kv, dh, A, D, L = s["d"], s["h"], s["h_kv"], s["d_h"], s["A"], s["D"], s["L"]
    kv_layers = L - s["shared"]
    return {
        "text.embed_tokens": s["V"] * d,
        "text.attention.q_o": L * (2 * d * h * dh + dh),
        "text.attention.k_v": kv_layers * (2 * d * h_kv * dh + dh),
        "text.mlp": sum(3 * d * f for f in s["widths"]),
        "text.norms": L * 4 * d + d,
        "text.altup": L * (d + A * A + A * A * A + A * d + d) + 2 * (A - 1) * d * d,
        "text.laurel": L * (2 * s["r"] * d + d),
        "text.per_layer_embeddings": s["V_pl"] * L * D,  # a lookup table, like embed_tokens
        "text.per_layer_input": L * (2 * d * D + d) + d * L * D + D,
    }


def audio_params(a: dict) -> dict[str, int]:
    """The audio tower (Gemma3nAudioEncoder) by part."""
    width, layers = _get(a, "hidden_size", default=1536), _get(a, "conf_num_hidden_layers", default=12)
    heads, kernel = _get(a, "conf_num_attention_heads", default=8), _get(a, "conf_conv_kernel_size", default=5)
    channels = a.get("sscp_conv_channel_size", [128, 32])
    kernels = a.get("sscp_conv_kernel_size", [[3, 3], [3, 3]])
    strides = a.get("sscp_conv_stride_size", [[2, 2], [2, 2]])
    freq, c_in, subsample = _get(a, "input_feat_size", default=128), 1, 0
    for c_out, (kh, kw), (_, sw) in zip(channels, kernels, strides, strict=True):
        subsample += c_out * c_in * kh * kw + c_out  # conv (no bias) + its norm's gain
        freq, c_in = (freq + 2 - kw) // sw + 1, c_out  # frequency padded by 1 each side
    subsample += c_in * freq * width  # input_proj_linear
    ffw = 2 * (2 * width + 8 * width * width)  # start and end: norms + 4a-wide up and down
    attention = 2 * width + width // heads + 5 * width * width  # norms, per-dim scale, q/k/v/pos/post
    lconv = 2 * width + 2 * width * width + width * kernel + width * width  # norms, GLU in, depthwise, out
    return {"audio.subsample": subsample, "audio.conformer": layers * (ffw + attention + lconv + width)}


def _embedder(vocab: int, width: int, d: int) -> int:
    """Gemma3nMultimodalEmbedder: a soft-token table, hard and soft RMSNorms, a projection to d."""
    return vocab * width + 2 * width + width * d


def gemma3n_timm_tower(architecture: str) -> dict:
    towers = data_files.builtin("timm_towers.json")["towers"]
    if architecture not in towers:
        raise ConfigError(
            f"vision_config.architecture ({show(architecture)}) is not a tower this tool knows; "
            f"known: {', '.join(towers)}"
        )
    return towers[architecture]


def gemma3n_params(data: dict) -> dict[str, int]:
    """Every parameter of a gemma3n (whole) or gemma3n_text config, by part."""
    text = data.get("text_config", data) if data.get("model_type") == "gemma3n" else data
    if not isinstance(text, dict):
        raise ConfigError(f"text_config ({show(text)}) must be the JSON object of the model's text part")
    s = gemma3n_text_shape(text)
    out = text_params(s)
    if data.get("model_type") != "gemma3n":
        return out
    audio, vision = data.get("audio_config") or {}, data.get("vision_config") or {}
    out.update(audio_params(audio))
    out["vision.tower"] = gemma3n_timm_tower(vision.get("architecture", "mobilenetv5_300m_enc"))["params"]
    out["embed_audio"] = _embedder(
        _get(audio, "vocab_size", default=128), _get(audio, "hidden_size", default=1536), s["d"]
    )
    out["embed_vision"] = _embedder(
        _get(vision, "vocab_size", default=128), _get(vision, "hidden_size", default=2048), s["d"]
    )
    return out


def gemma3n_text_flops(s: dict, seq_len: int, attention: str = "full") -> dict[str, int]:
    """Forward FLOPs of one sequence of T text tokens: the weights each token multiplies, and QK^T and
    AV over the pairs each layer scores (global layers T keys per query under `full`, T(T+1)/2 pairs
    under `causal`; sliding layers capped at the window under `causal`). Lookups count 0."""
    from sizing.formulas import attended_pairs

    d, h, h_kv, dh, A, D, L, T = s["d"], s["h"], s["h_kv"], s["d_h"], s["A"], s["D"], s["L"], seq_len
    n_global = len(s["full"])
    pairs = n_global * attended_pairs(T, attention) + (L - n_global) * attended_pairs(T, attention, s["window"])
    return {
        "text.attention.projections": T * MAC * (L * 2 * d * h * dh + (L - s["shared"]) * 2 * d * h_kv * dh),
        "text.attention.scores_and_values": MAC * h * 2 * dh * pairs,
        "text.mlp": T * MAC * sum(3 * d * f for f in s["widths"]),
        "text.altup_laurel_per_layer": T
        * MAC
        * (L * (A * d + 2 * s["r"] * d + 2 * d * D) + d * L * D + 2 * (A - 1) * d * d),
        "text.lm_head": T * MAC * s["V"] * d,
    }


def gemma3n_text_decode_flops(s: dict, context: int) -> int:
    """One new token with `context` positions cached: the weights, and one query against each layer's
    keys (global layers the context, sliding ones the window)."""
    one = gemma3n_text_flops(s, 1)
    weights = sum(v for k, v in one.items() if k != "text.attention.scores_and_values")
    n_global = len(s["full"])
    keys = n_global * context + (s["L"] - n_global) * min(context, s["window"])
    return weights + MAC * s["h"] * 2 * s["d_h"] * keys


def gemma3n_kv_elements(s: dict, context: int) -> int:
    """Cached K and V of one position summed over the layers that keep them (the last
    num_kv_shared_layers layers reuse earlier ones'): full layers the whole context, sliding ones the
    window; returned for `context` positions."""
    L, kv_layers = s["L"], s["L"] - s["shared"]
    full = sum(1 for i in range(kv_layers) if i in s["full"])
    positions = full * context + (kv_layers - full) * min(context, s["window"])
    return 2 * s["h_kv"] * s["d_h"] * positions if L else 0
