"""Parameter-efficient fine-tuning: LoRA adapters and QLoRA's 4-bit base weights.

LoRA (Hu et al. 2021, arXiv:2106.09685): a frozen W (out x in) gets W + B A with A (r x in)
and B (out x r); only A and B train, r (in + out) parameters per adapted projection. Under
tensor parallelism (NeMo / Megatron LoRA) a column-parallel W keeps A whole and splits B
(r.in + r.out/tp per rank); a row-parallel W splits A and keeps B whole (r.in/tp + r.out).

QLoRA (Dettmers et al. 2023, arXiv:2305.14314, section 3): the frozen linear weights of the
blocks are stored in NF4, 4 bits per weight, with one absmax per block of 64 weights; double
quantisation stores those absmax constants in 8 bits, with one fp32 constant per 256 of them:
4 + 8/64 + 32/(64 x 256) = 4.127 bits per weight. Embeddings, norms and the lm_head stay in
16 bits (bitsandbytes quantises nn.Linear layers of the blocks only; QLoRA's reference code
skips lm_head).
"""

from __future__ import annotations

from sizing.inputs import ModelConfig
from sizing.parallel.shapes import Tensor, block_kinds, block_tensors
from sizing.vocabulary import ceil_div

NF4_BLOCK = 64  # weights per first-level absmax (QLoRA, section 3 "double quantization")
NF4_SECOND_BLOCK = 256  # first-level constants per second-level fp32 constant
FP8_CONSTANT_BYTES = 1  # first-level absmax after double quantisation
FP32_CONSTANT_BYTES = 4


def nf4_bytes(n_weights: int) -> int:
    """NF4 storage with double quantisation: n/2 bytes of 4-bit codes + one 8-bit absmax per 64
    weights + one fp32 constant per 256 absmax values (each count rounded up: padded blocks)."""
    blocks = ceil_div(n_weights, NF4_BLOCK)
    return (
        ceil_div(n_weights, 2) + FP8_CONSTANT_BYTES * blocks + FP32_CONSTANT_BYTES * ceil_div(blocks, NF4_SECOND_BLOCK)
    )


# Latent attention's projections stand for the query / key-value targets they replace (PEFT users
# target DeepSeek's q_a_proj, q_b_proj, kv_a_proj_with_mqa, kv_b_proj together for "all linears").
MLA_TARGETS: dict[str, tuple[str, ...]] = {"q_a": ("q",), "q_b": ("q",), "kv_a": ("k", "v"), "kv_b": ("k", "v")}
NOT_ADAPTED = ("tok_emb", "lm_head", "pos_emb", "moe.router", "moe.shared_gate")


def adapted(tensor: Tensor, targets: tuple[str, ...]) -> bool:
    """Whether a LoRA adapter sits on this weight: a 2-D weight of a projection named in targets
    (MLA's q_a / q_b with "q", kv_a / kv_b with "k" or "v"); never the router or the shared gate."""
    if len(tensor.shape) != 2 or not tensor.name.endswith(".weight") or tensor.name.startswith(NOT_ADAPTED):
        return False
    projection = tensor.name[: -len(".weight")].rsplit(".", 1)[-1]
    return any(t in targets for t in MLA_TARGETS.get(projection, (projection,)))


def lora_adapter_params(tensor: Tensor, rank: int, tp: int = 1) -> int:
    """Adapter parameters of one adapted weight on one tp rank: r (in + out) split as above."""
    out_f, in_f = tensor.shape
    if tensor.placement == "col":
        per_copy = rank * in_f + rank * ceil_div(out_f, tp)
    elif tensor.placement == "row":
        per_copy = rank * ceil_div(in_f, tp) + rank * out_f
    else:
        per_copy = rank * (in_f + out_f)
    return tensor.copies * per_copy


def quantized_by_qlora(tensor: Tensor) -> bool:
    """QLoRA stores the blocks' linear weights in NF4 (not embeddings, norms, biases, lm_head,
    router, shared gate); shared experts are linears of the block like the routed ones."""
    return len(tensor.shape) == 2 and tensor.name.startswith(("attn.", "mlp.", "moe.experts.", "moe.shared."))


def lora_params(cfg: ModelConfig, rank: int, targets: tuple[str, ...]) -> int:
    """All adapter parameters of the model (tp 1)."""
    return sum(
        n * sum(lora_adapter_params(t, rank) for t in block_tensors(cfg, moe) if adapted(t, targets))
        for moe, n in block_kinds(cfg, range(cfg.n_layers))
    )


def int8_bytes(n_weights: int, rows: int) -> int:
    """LLM.int8 storage (Dettmers et al. 2022, arXiv:2208.07339; bitsandbytes Int8Params, as
    transformers' load_in_8bit stores a Linear): one int8 code per weight and one fp32 absmax per
    output row (SCB): n + 4 rows bytes."""
    return n_weights + FP32_CONSTANT_BYTES * rows


# PEFT's modules_to_save names, as the layout's lora_trained calls them: the tensors they train in full.
TRAINED_MODULE_TENSORS: dict[str, tuple[str, ...]] = {"embedding": ("tok_emb", "pos_emb"), "lm_head": ("lm_head",)}


def trained_in_full(tensor: Tensor, modules: tuple[str, ...]) -> bool:
    """Whether a LoRA run trains this tensor in full (modules_to_save), not through adapters."""
    return any(tensor.name.startswith(TRAINED_MODULE_TENSORS[m]) for m in modules)
