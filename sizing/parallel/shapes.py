"""Parameter tensors with their shapes and how tensor parallelism splits each, named as the
reference model names them (reference_model/model/gpt.py), so per-rank shards can be compared
with torch's DTensor and FSDP2 shards tensor by tensor.

Placement (Megatron-LM, Shoeybi et al. 2019; torch's ColwiseParallel / RowwiseParallel):
`col` splits dim 0 (output features) over tp: q, k, v, MLP up and gate, their biases;
`row` splits dim 1 (input features): o, MLP down (their biases are replicated: added after
the all-reduce); `vocab` splits dim 0 (the vocabulary) when the layout is vocab-parallel:
token embedding, lm_head and its bias; `rep` is replicated: norms, router, learned positions.
A split that does not divide gives rank 0 ceil(n / tp) rows, as torch.chunk does.

The element counts add up to sizing.formulas.params exactly (tests/test_parallel_memory.py checks
it for every preset): shapes are not a second parameter formula, only its layout.
"""

from __future__ import annotations

from sizing.inputs import ModelConfig
from sizing.parallel.mixers import hybrid_block_tensors, hybrid_kinds, is_moe_kind
from sizing.parallel.tensors import Tensor, _linear, _mlp, _norm, attention_tensors, moe_tensors
from sizing.parallel.towers import first_stage_vision_tensors

__all__ = [  # tensors.py's names, importable from here where they were
    "Tensor",
    "_linear",
    "_mlp",
    "_norm",
    "attention_tensors",
    "block_kinds",
    "block_tensors",
    "count_moe_layers",
    "first_stage_tensors",
    "is_moe_kind",
    "last_stage_tensors",
    "layer_tensors",
    "model_tensors",
    "moe_tensors",
]


def block_tensors(cfg: ModelConfig, moe: bool | None = None) -> list[Tensor]:
    """One transformer block's parameters (each expert tensor once, standing for its E copies):
    an MoE block (`moe` True) or a dense one (False; None: the config's kind, MoE if it has experts).
    Norms are replicated. Every other per-layer difference (windows, chunks, NoPE) has no parameter.
    A hybrid's layer kind (mixer, mlp) is built by sizing.parallel.mixers."""
    if isinstance(moe, tuple):
        return hybrid_block_tensors(cfg, moe)
    moe = cfg.is_moe if moe is None else moe
    post = cfg.norm_placement == "sandwich"
    out = _norm(cfg, "attn_norm") + attention_tensors(cfg)
    if post:
        out += _norm(cfg, "attn_post_norm")
    if not cfg.shared_block_norm:
        out += _norm(cfg, "mlp_norm")
    out += moe_tensors(cfg) if moe else _mlp(cfg, "mlp", cfg.d_ff, expert=False)
    return out + (_norm(cfg, "mlp_post_norm") if post else [])


def layer_tensors(cfg: ModelConfig, layer: int) -> list[Tensor]:
    """Block `layer`'s parameters (cfg.is_moe_layer decides dense or MoE)."""
    return block_tensors(cfg, cfg.is_moe_layer(layer))


def block_kinds(cfg: ModelConfig, layers: range) -> list[tuple[bool, int]]:
    """(is MoE, how many) for the blocks in `layers`, counted without listing them: the dense
    kind first, then the MoE kind, each only where present. A hybrid's: ((mixer, mlp), how many)."""
    if getattr(cfg, "hybrid", None) is not None:
        return hybrid_kinds(cfg, layers)
    if not cfg.is_moe:
        return [(False, len(layers))] if len(layers) else []
    moe = count_moe_layers(cfg, layers)
    return [(kind, n) for kind, n in ((False, len(layers) - moe), (True, moe)) if n]


def count_moe_layers(cfg: ModelConfig, layers: range) -> int:
    """MoE layers among `layers` (a step-1 range): past the first dense ones, every step-th (a
    hybrid's: where its pattern puts them)."""
    if getattr(cfg, "hybrid", None) is not None:
        return sum(n for kind, n in hybrid_kinds(cfg, layers) if is_moe_kind(kind))
    lo, hi = max(layers.start, cfg.first_dense_layers), layers.stop
    if not cfg.is_moe or hi <= lo:
        return 0
    s = cfg.moe_layer_step
    return hi // s - lo // s  # i + 1 in (lo, hi] divisible by s


def first_stage_tensors(cfg: ModelConfig) -> list[Tensor]:
    """Outside the blocks, on the first pipeline stage: token (and position) embedding, embedding norm, and
    a vision-language model's tower and projector (sizing.parallel.towers)."""
    out = [Tensor("tok_emb.weight", (cfg.padded_vocab, cfg.d_model), "vocab")]
    if cfg.position == "learned":
        out.append(Tensor("pos_emb.weight", (cfg.max_positions, cfg.d_model), "rep"))
    if cfg.embedding_norm:
        out += _norm(cfg, "emb_norm")
    return out + first_stage_vision_tensors(cfg)  # a vision-language model's tower and projector


def last_stage_tensors(cfg: ModelConfig, pp: int = 1) -> list[Tensor]:
    """Outside the blocks, on the last stage: final norm and lm_head. A tied lm_head reads the
    embedding; with pp > 1 the last stage keeps its own copy of it (Megatron-LM's
    `shared_embedding` synchronised by an all-reduce), counted here."""
    out = _norm(cfg, "norm_f") if cfg.final_norm else []
    if not cfg.tied_embeddings or pp > 1:
        out.append(Tensor("lm_head.weight", (cfg.padded_vocab, cfg.d_model), "vocab"))
    if cfg.lm_head_bias:
        out.append(Tensor("lm_head.bias", (cfg.padded_vocab,), "vocab"))
    return out


def model_tensors(cfg: ModelConfig) -> list[Tensor]:
    """Every parameter tensor of the unsplit model (each kind of block repeated as often as the
    layers hold it; numel sums to total_params)."""
    blocks = [t for moe, n in block_kinds(cfg, range(cfg.n_layers)) for t in block_tensors(cfg, moe) * n]
    return first_stage_tensors(cfg) + blocks + last_stage_tensors(cfg)
