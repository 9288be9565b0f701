"""Vision towers and projectors of vision-language models: a ViT / SigLIP / CLIP encoder, the
projector into the language model, image tokens per image and the encoder's FLOPs per image.

One generic pre-norm ViT block, as the four families build it (transformers 5.24: SiglipEncoderLayer
for Gemma-3, CLIPEncoderLayer for LLaVA-1.5, Llama4VisionEncoderLayer, Qwen2_5_VLVisionBlock):
norm1, attention (q, k, v, o; Qwen2.5-VL fuses q, k, v in one `qkv`), norm2, MLP (fc1, fc2;
SwiGLU gate/up/down for Qwen2.5-VL), each Linear with a bias. Outside the blocks: the patch
embedding (a conv of c·p·p -> h; Qwen2.5-VL's Conv3d also spans 2 frames), a class token and
learned positions where the family has them, pre/post norms, and the projector. Counts equal
transformers' on the meta device (tests/test_vision.py against tests/fixtures/hf_counts_modern.json
and tests/fixtures/hf_counts_vision.json).

FLOPs (2 per multiply-add, matmuls only, as sizing.formulas.flops): per image, every patch through every
block (2·block matmul weights per patch) plus attention QK^T and AV over the patches a query
sees (all N of its image: bidirectional, `full`; Qwen2.5-VL's windowed blocks: the W patches of
its window), the patch embedding (2·c·p·p·h per patch) and the projector on its input tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from sizing.validate import SizingError, parse_int, require_bool, require_int, show

MAC = 2


@dataclass(frozen=True)
class VisionTower:
    hidden: int
    intermediate: int
    layers: int
    heads: int
    patch: int
    image_size: int  # the side the tower is built for (learned positions are sized by it)
    channels: int = 3
    temporal_patch: int = 1  # Qwen2.5-VL: a patch spans 2 frames (an image is repeated)
    patch_bias: bool = True
    class_token: bool = False
    learned_positions: bool = True
    pre_norm: bool = False
    post_norm: bool = True
    norm_bias: bool = True  # LayerNorm (True) or RMSNorm (False)
    gated_mlp: bool = False
    window_patches: int | None = None  # patches per attention window in windowed blocks
    full_attention_layers: int | None = None  # blocks with full attention when windowed
    attn_bias: bool = True  # q, k, v, o biased (Mllama's tower has none)

    def __post_init__(self) -> None:
        """Sizes positive ints (full_attention_layers may be 0), switches bools, before any formula."""
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type.startswith("bool"):
                require_bool(f"vision_config {f.name}", value)
            elif value is not None:
                require_int(f"vision_config {f.name}", value, 0 if f.name == "full_attention_layers" else 1)
        if self.hidden % self.heads or (self.full_attention_layers or 0) > self.layers:
            raise SizingError(
                f"vision_config hidden ({self.hidden}) must divide into heads ({self.heads}) and the full-attention "
                f"blocks ({self.full_attention_layers}) be at most the layers ({self.layers})"
            )

    @property
    def patches_per_side(self) -> int:
        return self.image_size // self.patch

    @property
    def norm(self) -> int:
        return self.hidden * (2 if self.norm_bias else 1)

    def block_params(self) -> dict[str, int]:
        h, i = self.hidden, self.intermediate
        mlp = (2 if self.gated_mlp else 1) * (h * i + i) + i * h + h
        attn = 4 * (h * h + (h if self.attn_bias else 0))
        return {"vision.attn": attn, "vision.mlp": mlp, "vision.norms": 2 * self.norm}

    def params(self) -> dict[str, int]:
        h = self.hidden
        kernel = self.channels * self.temporal_patch * self.patch * self.patch
        n_pos = self.patches_per_side**2 + (1 if self.class_token else 0)
        out = {"vision.patch_embed": kernel * h + (h if self.patch_bias else 0)}
        if self.class_token:
            out["vision.class_token"] = h
        if self.learned_positions:
            out["vision.positions"] = n_pos * h
        for key, size in self.block_params().items():
            out[key] = self.layers * size
        out["vision.outer_norms"] = self.norm * (int(self.pre_norm) + int(self.post_norm))
        return {k: v for k, v in out.items() if v}

    def block_weight_flops_per_patch(self) -> int:
        h, i = self.hidden, self.intermediate
        return MAC * (4 * h * h + (3 if self.gated_mlp else 2) * h * i)

    def encoder_flops(self, n_patches: int) -> int:
        """Forward FLOPs of one image of N patches (tokens), the patch embedding included."""
        N = require_int("patches", n_patches, 1)
        kernel = self.channels * self.temporal_patch * self.patch * self.patch
        full = self.layers if self.full_attention_layers is None else self.full_attention_layers
        windowed = self.layers - full
        keys = full * N + windowed * min(N, self.window_patches or N)
        attention = MAC * 2 * self.hidden * N * keys  # QK^T and AV, every head's d_h summing to h
        embedded = N - (1 if self.class_token else 0)  # the class token is not a patch
        return MAC * kernel * self.hidden * embedded + self.layers * N * self.block_weight_flops_per_patch() + attention


@dataclass(frozen=True)
class VisionLanguage:
    """A tower, its projector's parameters by component, and how an image becomes tokens."""

    family: str
    tower: VisionTower
    projector: tuple[tuple[str, int, int, bool], ...]  # (key, in, out, bias) Linears
    projector_extra: tuple[tuple[str, int], ...] = ()  # norms, a bare weight matrix's size
    merge: int = 1  # patches per side merged into one token (Qwen2.5-VL 2, Llama-4 pixel shuffle 2)
    fixed_tokens: int | None = None  # Gemma-3: 256 tokens per image whatever its size
    drop_class_token: bool = True  # LLaVA "default" feature select drops CLS
    tile: int | None = None  # Llama-4: images tiled into image_size tiles (+ one global tile)
    # Mllama: the tower runs max_num_tiles tiles of every image (padded) and the language model reads
    # them through cross-attention: the image is one token of the prompt, and each vision token is
    # projected to K and V in every cross-attention layer (these FLOPs per vision token)
    fixed_runs: int | None = None
    cross_kv_flops_per_vision_token: int = 0
    # parts of the language model its ModelConfig does not hold (Mllama's cross-attention layers)
    text_extra: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        """Every projector width, norm size and token count a positive int, before any formula
        (a negative width would count negative parameters)."""
        for key, d_in, d_out, bias in self.projector:
            require_int(f"{key} input width", d_in, 1)
            require_int(f"{key} output width", d_out, 1)
            require_bool(f"{key} bias", bias)
        for key, size in self.projector_extra:
            require_int(f"{key} size", size, 1)
        require_int("merge", self.merge, 1)
        for name in ("fixed_tokens", "tile"):
            if getattr(self, name) is not None:
                require_int(name, getattr(self, name), 1)

    def projector_params(self) -> dict[str, int]:
        out = {key: i * o + (o if bias else 0) for key, i, o, bias in self.projector}
        out.update(dict(self.projector_extra))
        return out

    def params(self) -> dict[str, int]:
        return {**self.tower.params(), **self.projector_params()}

    def total(self) -> int:
        return sum(self.params().values())

    def patches(self, height: int, width: int) -> tuple[int, int]:
        """(images the tower runs, patches each): Qwen2.5-VL at native resolution (sides rounded
        to a multiple of patch·merge, HF's smart_resize without its pixel bounds), Llama-4 by
        336-pixel tiles plus a global view when there is more than one, the rest resized to
        the tower's own square."""
        H, W = require_int("--image-size height", height, 1), require_int("--image-size width", width, 1)
        t = self.tower
        if self.family == "qwen2_5_vl":
            unit = t.patch * self.merge
            h, w = max(unit, round(H / unit) * unit), max(unit, round(W / unit) * unit)
            return 1, (h // t.patch) * (w // t.patch)
        per_image = t.patches_per_side**2 + (1 if t.class_token else 0)
        if self.fixed_runs is not None:
            return self.fixed_runs, per_image
        if self.tile is not None:
            tiles = -(-H // self.tile) * -(-W // self.tile)
            return tiles + (1 if tiles > 1 else 0), per_image
        return 1, per_image

    def image_tokens(self, height: int, width: int) -> int:
        """Tokens one image adds to the language model's prompt (without the special markers)."""
        runs, n = self.patches(height, width)
        if self.fixed_tokens is not None:
            return self.fixed_tokens
        if self.tower.class_token and self.drop_class_token:
            n -= 1
        return runs * n // (self.merge * self.merge)

    def image_flops(self, height: int, width: int) -> int:
        """Encoder + projector forward FLOPs for one image."""
        runs, n = self.patches(height, width)
        proj = sum(i * o for _, i, o, _ in self.projector)
        tokens_in = n - (1 if self.tower.class_token and self.drop_class_token else 0)
        per_run = self.tower.encoder_flops(n) + MAC * proj * tokens_in // (self.merge * self.merge)
        return runs * (per_run + n * self.cross_kv_flops_per_vision_token)


def parse_image_size(text: str) -> tuple[int, int]:
    """'896x896' -> (896, 896); one line naming the option otherwise."""
    parts = str(text).lower().split("x")
    if len(parts) != 2 or not all(p.strip().isascii() and p.strip().isdigit() for p in parts):
        raise SizingError(f"--image-size ({show(text)}) must be HEIGHTxWIDTH in pixels (digits 0-9), e.g. 896x896")
    # parse_int: exact and bounded before it is built (a 5,000-digit side is refused, not int()'s ValueError)
    return parse_int("--image-size height", parts[0], 1, 1 << 16), parse_int("--image-size width", parts[1], 1, 1 << 16)
