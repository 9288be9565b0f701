"""A vision-language model (sizing.vision: the language model's ModelConfig and its VisionLanguage
tower + projector) as a WholeModel: every parameter counted (the language model by
sizing.formulas, the tower and projector by sizing.vision), FLOPs per text token of the language
model, and the encoder's FLOPs and tokens per image beside them (`details`), at the image size of
`sizing vision`'s default (896 x 896)."""

from __future__ import annotations

from sizing.formulas import decode_flops_per_token, flop_components, param_components
from sizing.memory import activations_bytes, kv_cache_bytes
from sizing.vision import vlm_active_params, vlm_params
from sizing.whole.model import WholeModel

VISION_LABEL = (
    "vision-language: language model + vision tower + projector, every part counted (sizing.vision, docs/hybrid.md)"
)
VISION_EXACT = {
    "params": "exact: the language model by sizing.formulas, the tower and projector by sizing.vision",
    "flops": "formula: per text token of the language model; each image's encoder FLOPs are in details",
    "kv_cache": "formula: the language model's KV cache (image tokens take positions like text)",
    "state": "none: no recurrent state",
    "activations": "formula for the language model (flash attention, no recompute); the tower's are not counted",
}
IMAGE_SIDE = 896  # pixels: `sizing vision`'s default --image-size


def vision_whole_model(
    name: str, text, vision, seq_len: int, attention: str = "full", seq_len_source: str = "given"
) -> WholeModel:
    """`text` (the language model's ModelConfig) with `vision` (its VisionLanguage) at one sequence length."""
    params = {f"language_model.{c.key}": c.count for c in param_components(text)}
    params.update({f"language_model.{key}": size for key, size in vision.text_extra})
    params.update(vision.params())
    forward = {f"language_model.{c.key}": c.forward_per_sequence for c in flop_components(text, seq_len, attention)}
    return WholeModel(
        name=name,
        kind="vision-language",
        label=VISION_LABEL,
        params=params,
        active_params=vlm_active_params(text, vision),
        embedding_params=params.get("language_model.tok_emb", 0),
        seq_len=seq_len,
        attention=attention,
        forward_flops=forward,
        decode_flops_per_token=decode_flops_per_token(text, seq_len),
        kv_cache_bytes=kv_cache_bytes(text, seq_len),
        state_bytes=0,
        activation_bytes=activations_bytes(text, seq_len),
        exact=VISION_EXACT,
        seq_len_source=seq_len_source,
        details={
            "family": vision.family,
            "image_size": [IMAGE_SIDE, IMAGE_SIDE],
            "image_tokens_per_image": vision.image_tokens(IMAGE_SIDE, IMAGE_SIDE),
            "image_encoder_flops_per_image": vision.image_flops(IMAGE_SIDE, IMAGE_SIDE),
            "language_model_params": vlm_params(text, vision)["language_model"],
        },
    )
