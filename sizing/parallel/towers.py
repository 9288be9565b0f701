"""A vision-language model's tower and projector under a parallel layout: where they sit, how tensor
parallelism splits them, and what they cost the first pipeline stage.

Placement, as Megatron-Core's LLaVAModel (megatron/core/models/multimodal/llava_model.py) builds
them: the vision encoder and the projector live with the language model's first pipeline stage
(`add_encoder` on the first stage) and use the language model's tensor-parallel group: the tower's
blocks are TransformerLayers (vit_layer_specs.py), q, k, v and the MLP's first linear
column-parallel, the attention output and the MLP's last linear row-parallel, norms replicated; the
patch convolution, class token and learned positions are replicated (CLIPViTModel's conv1 and
position embedding are plain modules); the projector (multimodal_projector.py) is an MLP, its first
linear column- and its last row-parallel. The tower is replicated over data parallelism and sharded
by ZeRO / FSDP with the rest of the first stage. Mllama's cross-attention layers (text_extra) are
placed on the first stage too, split over tp (an approximation: Megatron has no Mllama).
"""

from __future__ import annotations

from sizing.inputs import ModelConfig
from sizing.parallel.tensors import Tensor
from sizing.vision import VisionLanguage, vision_of


def _pair(name: str, rows: int, cols: int, placement: str, bias: bool, copies: int, units: int = 0) -> list[Tensor]:
    out = [Tensor(f"{name}.weight", (rows, cols), placement, copies=copies, units=units)]
    if bias:  # a row-parallel bias is added after the reduce: replicated
        out.append(Tensor(f"{name}.bias", (rows,), "col" if placement == "col" else "rep", copies=copies, units=units))
    return out


def tower_block_tensors(vision: VisionLanguage) -> list[Tensor]:
    """Every tower block's tensors (copies: the blocks)."""
    t = vision.tower
    h, f, L, heads = t.hidden, t.intermediate, t.layers, t.heads
    out = []
    for name in ("q", "k", "v"):
        out += _pair(f"vision.attn.{name}", h, h, "col", t.attn_bias, L, heads)
    out += _pair("vision.attn.o", h, h, "row", t.attn_bias, L, heads)
    for name in ("gate", "up") if t.gated_mlp else ("fc1",):
        out += _pair(f"vision.mlp.{name}", f, h, "col", True, L)
    out += _pair("vision.mlp.down", h, f, "row", True, L)
    return out + [Tensor("vision.norms", (2 * t.norm,), "rep", copies=L)]


def vision_tensors(vision: VisionLanguage) -> list[Tensor]:
    """The tower, the projector and Mllama's cross-attention layers, with their placement (module docstring)."""
    t = vision.tower
    blocks = set(t.block_params())  # the blocks' parts, laid out tensor by tensor below
    out = [Tensor(key, (size,), "rep") for key, size in t.params().items() if key not in blocks]
    out += tower_block_tensors(vision)
    last = len(vision.projector) - 1
    for i, (key, d_in, d_out, bias) in enumerate(vision.projector):
        out += _pair(key, d_out, d_in, "row" if i == last and i > 0 else "col", bias, 1)
    out += [Tensor(key, (size,), "rep") for key, size in vision.projector_extra]
    for key, size in vision.text_extra:
        out.append(Tensor(f"language_model.{key}", (size,), "rep" if key.startswith("embed") else "col"))
    return out


def first_stage_vision_tensors(cfg: ModelConfig) -> list[Tensor]:
    """What a vision-language model adds to its first pipeline stage (none for any other model)."""
    vision = vision_of(cfg)
    return vision_tensors(vision) if vision is not None else []
