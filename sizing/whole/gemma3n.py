"""Gemma 3n (sizing.vision.gemma3n) as a WholeModel: every part counted apart (language model, audio
tower, vision tower, their embedders), FLOPs per text token of the language model, its KV cache (the
layers that keep one: the last num_kv_shared_layers reuse earlier layers' keys and values)."""

from __future__ import annotations

from sizing.memory import dtype_bytes
from sizing.vision import (
    gemma3n_kv_elements,
    gemma3n_params,
    gemma3n_text_decode_flops,
    gemma3n_text_flops,
    gemma3n_text_shape,
    gemma3n_timm_tower,
)
from sizing.whole.model import WholeModel

GEMMA3N_LABEL = (
    "Gemma 3n: per-layer embeddings, AltUp, LAuReL, MatFormer widths and shared KV, with its audio and vision "
    "towers counted apart (sizing.vision.gemma3n)"
)
GEMMA3N_EXACT = {
    "params": "exact: every part by formula (the vision tower by its timm architecture's count), equal to "
    "transformers' count",
    "flops": "formula: per text token of the language model (projections, MLP, AltUp, LAuReL, per-layer input, "
    "attention); the towers' are in details",
    "kv_cache": "formula: the layers that keep K and V (full layers the context, sliding ones the window)",
    "state": "none: no recurrent state",
    "activations": "not modelled",
}


def gemma3n_whole_model(data: dict, name: str, seq_len: int, attention: str, source: str) -> WholeModel:
    text = data.get("text_config", data) if data.get("model_type") == "gemma3n" else data
    shape = gemma3n_text_shape(text)
    params = gemma3n_params(data)
    details = {"kv_shared_layers": shape["shared"], "ffn_widths": sorted(set(shape["widths"]))}
    if data.get("model_type") == "gemma3n":
        tower = gemma3n_timm_tower((data.get("vision_config") or {}).get("architecture", "mobilenetv5_300m_enc"))
        details |= {
            "vision_tokens_per_image": tower["tokens_per_image"],
            "vision_flops_per_image": tower["flops_per_image"],
        }
        details["image_size"] = [tower["image_size"], tower["image_size"]]
    return WholeModel(
        name=name,
        kind="gemma3n",
        label=GEMMA3N_LABEL,
        params=params,
        active_params=sum(params.values()),
        embedding_params=params["text.embed_tokens"] + params["text.per_layer_embeddings"],
        seq_len=seq_len,
        attention=attention,
        forward_flops=gemma3n_text_flops(shape, seq_len, attention),
        decode_flops_per_token=gemma3n_text_decode_flops(shape, seq_len),
        kv_cache_bytes=dtype_bytes(gemma3n_kv_elements(shape, seq_len), "bf16"),
        state_bytes=0,
        activation_bytes=None,
        exact=GEMMA3N_EXACT,
        seq_len_source=source,
        details=details,
    )
