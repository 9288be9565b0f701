"""A vision-language model as the training and serving questions take a model: the language model's
ModelConfig with the vision tower and projector beside it, and the images each training sequence
carries (what the tower runs per sequence: `--images` at `--image-size`).

`VisionConfig` is a ModelConfig (the language model's fields), so the questions size the language
model as they size any stack; the tower is read by their own functions (sizing.parallel.towers, the
first pipeline stage's tensors, activations and time; sizing.parallel.whole_flops).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sizing.inputs import ModelConfig
from sizing.validate import SizingError, require_int
from sizing.vision.model import VisionLanguage

DEFAULT_IMAGE_SIDE = 896  # pixels: `sizing vision`'s default --image-size


@dataclass(frozen=True)
class VisionConfig(ModelConfig):
    vision: VisionLanguage | None = None  # the tower and projector (never None once built)
    images: int = 1  # images in each training sequence
    image_size: tuple[int, int] = (DEFAULT_IMAGE_SIDE, DEFAULT_IMAGE_SIDE)  # pixels, height x width

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.vision, VisionLanguage):
            raise SizingError("a VisionConfig needs its VisionLanguage (sizing.vision.vision_config builds one)")
        require_int("images", self.images, 0)
        for side in self.image_size:
            require_int("image_size", side, 1, 1 << 16)

    @property
    def image_tokens(self) -> int:
        """Tokens the images of one sequence put in the language model's sequence."""
        return self.images * self.vision.image_tokens(*self.image_size) if self.images else 0

    def tower_runs(self) -> tuple[int, int]:
        """(tower passes per sequence: images x tiles, patches per pass)."""
        runs, patches = self.vision.patches(*self.image_size)
        return self.images * runs, patches


def vision_config(text: ModelConfig, vision: VisionLanguage, images: int = 1, image_size=None) -> VisionConfig:
    """The VisionConfig of a language model `text` with its tower and projector `vision`."""
    fields = {f.name: getattr(text, f.name) for f in dataclasses.fields(ModelConfig)}
    size = tuple(image_size) if image_size is not None else (DEFAULT_IMAGE_SIDE, DEFAULT_IMAGE_SIDE)
    return VisionConfig(**fields, vision=vision, images=images, image_size=size)


def vision_of(cfg) -> VisionLanguage | None:
    """The tower and projector a config carries (a VisionConfig), None otherwise."""
    return getattr(cfg, "vision", None)


def tower_config(vision: VisionLanguage) -> ModelConfig:
    """The tower's blocks as a ModelConfig (one pass of its patches is a sequence), for the questions
    that time and store a stack of blocks: pre-norm ViT blocks, LayerNorm (or RMSNorm), q, k, v, o with
    the tower's biases, GeLU MLP (SwiGLU for Qwen2.5-VL) with biases; no vocabulary or positions of its own."""
    t = vision.tower
    return ModelConfig(
        vocab_size=1,
        d_model=t.hidden,
        n_layers=t.layers,
        n_heads=t.heads,
        d_ff=t.intermediate,
        mlp="swiglu" if t.gated_mlp else "gelu",
        norm="layernorm" if t.norm_bias else "rmsnorm",
        position="none",
        qkv_bias=t.attn_bias,
        attn_out_bias=t.attn_bias,
        mlp_bias=True,
        final_norm=False,
        tied_embeddings=True,
    )
