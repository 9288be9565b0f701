"""fp8 training storage as Transformer Engine (TE) keeps it, per scaling recipe: the fp8 copies
of each GEMM weight, and the fp8 copy of each GEMM input saved for backward.

What TE keeps (transformer_engine/pytorch/module/linear.py and base.py, TE 2.x; LayerNormLinear
and LayerNormMLP do the same for the norm output they feed their GEMM):

* Weights. The parameters stay in bf16 (the optimizer's fp32 master copy is separate). Forward
  quantizes each GEMM weight into a "workspace" with rowwise data (forward GEMM) and
  columnwise data (the dgrad GEMM). Megatron-Core passes `is_first_microbatch`
  (megatron/core/extensions/transformer_engine.py, TELinear.forward, unless
  --disable-parameter-transpose-cache), so the workspace is cached across micro-batches
  (linear.py: `cache_name = None if is_first_microbatch is None ... else "weight"`) and stays
  allocated for the whole step. Primary fp8 weights (`fp8_model_init`, Megatron's
  --fp8-param-gather) make the parameter itself the fp8 tensor: the bf16 copy is gone, the fp8
  data and its columnwise copy remain.
* Columnwise data. Hopper's fp8 GEMM takes only the TN layout, so a per-tensor-scaled weight
  keeps an fp8 transpose beside its data (csrc/quantizer.cpp: `with_transpose =
  columnwise_usage && !is_non_tn_fp8_gemm_supported`); block-scaled recipes keep columnwise data
  with their own scales. Two copies are counted for every recipe (on Blackwell a per-tensor
  weight needs one: counted as on Hopper).
* Saved inputs. Each fp8 Linear quantizes its input and saves only the copy wgrad reads (linear.py:
  `inputmat.update_usage(rowwise_usage=False, columnwise_usage=True)`, or the rowwise copy when the
  input is all-gathered under sequence parallelism): one fp8 copy, 1 byte per element plus the
  recipe's scales, in place of the 2-byte bf16 tensor.

Recipes (transformer_engine/common/recipe): per-tensor scaling, delayed or current
(DelayedScaling, Float8CurrentScaling: one fp32 scale per tensor, not counted); blockwise
(Float8BlockScaling, DeepSeek-V3's: inputs in 1 x 128 tiles, weights in 128 x 128 blocks, one
fp32 scale each; tensor/float8_blockwise_tensor.py `block_len = 128`); MXFP8 (MXFP8BlockScaling,
the OCP MX format Blackwell runs: one 1-byte E8M0 scale per 32 elements, for inputs and weights
alike).
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.validate import require_choice
from sizing.vocabulary import ceil_div

FP8_BYTES = 1  # e4m3 / e5m2 element


@dataclass(frozen=True)
class Fp8Recipe:
    key: str
    input_block: int | None  # elements per scale of a saved input (None: one scale per tensor)
    weight_block: int | None  # elements per scale of a weight copy
    scale_bytes: int
    weight_copies: int  # fp8 copies of each GEMM weight TE keeps: rowwise + columnwise
    description: str


FP8_RECIPES: dict[str, Fp8Recipe] = {
    "tensorwise": Fp8Recipe(
        "tensorwise", None, None, 4, 2, "per-tensor scaling (delayed or current): fp8 data + its transpose"
    ),
    "blockwise": Fp8Recipe(
        "blockwise", 128, 128 * 128, 4, 2, "1 x 128 input tiles, 128 x 128 weight blocks, fp32 scales"
    ),
    "mxfp8": Fp8Recipe("mxfp8", 32, 32, 1, 2, "MXFP8: one E8M0 scale per 32 elements, rowwise and columnwise"),
}
DEFAULT_FP8_RECIPE = "tensorwise"


def get_fp8_recipe(key: str) -> Fp8Recipe:
    return FP8_RECIPES[require_choice("fp8_recipe", key, FP8_RECIPES)]


def fp8_copy_bytes(n_elements: int, block: int | None, scale_bytes: int) -> int:
    """One fp8 copy of n elements: 1 byte each plus one scale per block (per-tensor: none counted)."""
    return FP8_BYTES * n_elements + (scale_bytes * ceil_div(n_elements, block) if block else 0)


def fp8_weight_copies_bytes(n_weights: int, recipe: str = DEFAULT_FP8_RECIPE) -> int:
    """The fp8 copies TE keeps of n GEMM-weight elements: rowwise and columnwise, with scales."""
    r = get_fp8_recipe(recipe)
    return r.weight_copies * fp8_copy_bytes(n_weights, r.weight_block, r.scale_bytes)


def fp8_saved_input_bytes(n_elements: int, recipe: str = DEFAULT_FP8_RECIPE) -> int:
    """The fp8 copy of a GEMM input that an fp8 Linear saves for its weight gradient."""
    r = get_fp8_recipe(recipe)
    return fp8_copy_bytes(n_elements, r.input_block, r.scale_bytes)
