"""A vision-language model's totals and its prefill with images: the language model's prompt
grows by the image tokens, and each image runs the tower and the projector once.

    prefill FLOPs = text forward over (prompt + N·tokens_per_image) tokens + N·image FLOPs

The text forward is sizing.formulas.flops' (attention convention labelled); the image FLOPs are
sizing.vision.model's (bidirectional attention inside the tower, windowed where the family windows).
"""

from __future__ import annotations

from sizing.formulas import active_params, flop_breakdown, total_params
from sizing.inputs import ModelConfig
from sizing.validate import require_choice, require_int
from sizing.vision.model import VisionLanguage
from sizing.vocabulary import ATTENTION_CONVENTIONS


def vlm_params(text: ModelConfig, vision: VisionLanguage) -> dict[str, int]:
    """{"language_model", "vision_tower", "projector", "total"}: the total is the sum of the parts."""
    tower_extra = sum(size for key, size in vision.projector_extra if key.startswith("vision."))
    tower = sum(vision.tower.params().values()) + tower_extra
    projector = sum(vision.projector_params().values()) - tower_extra
    lm = total_params(text) + sum(size for _, size in vision.text_extra)
    return {"language_model": lm, "vision_tower": tower, "projector": projector, "total": lm + tower + projector}


def vlm_active_params(text: ModelConfig, vision: VisionLanguage) -> int:
    """The language model's active parameters (sizing.formulas.params) plus the whole tower and projector."""
    return active_params(text) + vision.total() + sum(size for _, size in vision.text_extra)


def prefill_with_images(
    text: ModelConfig,
    vision: VisionLanguage,
    prompt_tokens: int,
    images: int,
    height: int,
    width: int,
    attention: str = "causal",
) -> dict[str, int | str]:
    T = require_int("--prompt-tokens", prompt_tokens, 0)
    N = require_int("--images", images, 0)
    require_choice("attention", attention, ATTENTION_CONVENTIONS)
    per_image = vision.image_tokens(height, width) if N else 0
    seq = T + N * per_image
    text_flops = flop_breakdown(text, seq, attention).forward if seq else 0
    image_flops = N * vision.image_flops(height, width) if N else 0
    return {
        "image_tokens_per_image": per_image,
        "sequence_tokens": seq,
        "text_forward_flops": text_flops,
        "image_encoder_flops": image_flops,
        "prefill_flops": text_flops + image_flops,
        "attention": attention,
    }
