"""Parameter tensors with their shapes and how tensor parallelism splits each, named as the
reference model names them (reference_model/model.py), so per-rank shards can be compared
with torch's DTensor and FSDP2 shards tensor by tensor.

Placement (Megatron-LM, Shoeybi et al. 2019; torch's ColwiseParallel / RowwiseParallel):
`col` splits dim 0 (output features) over tp: q, k, v, MLP up and gate, their biases;
`row` splits dim 1 (input features): o, MLP down (their biases are replicated: added after
the all-reduce); `vocab` splits dim 0 (the vocabulary) when the layout is vocab-parallel:
token embedding, lm_head and its bias; `rep` is replicated: norms, router, learned positions.
A split that does not divide gives rank 0 ceil(n / tp) rows, as torch.chunk does.

The element counts add up to sizing.params exactly (tests/test_parallel_memory.py checks
it for every preset): shapes are not a second parameter formula, only its layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import ModelConfig
from ..vocabulary import ceil_div


@dataclass(frozen=True)
class Tensor:
    name: str  # reference model name without the block / expert index
    shape: tuple[int, ...]
    placement: str  # col, row, vocab, rep
    expert: bool = False
    copies: int = 1  # identical tensors this entry stands for (the E experts of a layer)

    @property
    def numel(self) -> int:
        """Elements of every copy together."""
        n = self.copies
        for size in self.shape:
            n *= size
        return n

    def tp_local_shape(self, tp: int, vocab_parallel: bool = True) -> tuple[int, ...]:
        """Rank 0's shape of one copy after tensor parallelism (torch.chunk semantics: the largest piece)."""
        split = self.placement == "col" or (self.placement == "vocab" and vocab_parallel)
        if split:
            return (ceil_div(self.shape[0], tp),) + self.shape[1:]
        if self.placement == "row" and len(self.shape) == 2:
            return (self.shape[0], ceil_div(self.shape[1], tp))
        return self.shape


def _norm(cfg: ModelConfig, name: str) -> list[Tensor]:
    out = [Tensor(f"{name}.weight", (cfg.d_model,), "rep")]
    if cfg.has_norm_bias:
        out.append(Tensor(f"{name}.bias", (cfg.d_model,), "rep"))
    return out


def _linear(
    name: str, out_f: int, in_f: int, placement: str, bias: bool, expert: bool = False, copies: int = 1
) -> list[Tensor]:
    out = [Tensor(f"{name}.weight", (out_f, in_f), placement, expert, copies)]
    if bias:  # a column-parallel bias is split with its outputs; a row-parallel one is added after the reduce
        out.append(Tensor(f"{name}.bias", (out_f,), "col" if placement == "col" else "rep", expert, copies))
    return out


def _mlp(cfg: ModelConfig, prefix: str, width: int, expert: bool, copies: int = 1) -> list[Tensor]:
    out = _linear(f"{prefix}.up", width, cfg.d_model, "col", cfg.mlp_bias, expert, copies)
    if cfg.gated_mlp:
        out += _linear(f"{prefix}.gate", width, cfg.d_model, "col", cfg.mlp_bias, expert, copies)
    return out + _linear(f"{prefix}.down", cfg.d_model, width, "row", cfg.mlp_bias, expert, copies)


def block_tensors(cfg: ModelConfig) -> list[Tensor]:
    """One transformer block's parameters (each expert tensor once, standing for its E copies)."""
    d = cfg.d_model
    out = _norm(cfg, "attn_norm")
    out += _linear("attn.q", cfg.q_width, d, "col", cfg.qkv_bias)
    out += _linear("attn.k", cfg.kv_width, d, "col", cfg.qkv_bias)
    out += _linear("attn.v", cfg.kv_width, d, "col", cfg.qkv_bias)
    out += _linear("attn.o", d, cfg.q_width, "row", cfg.attn_out_bias)
    if not cfg.shared_block_norm:
        out += _norm(cfg, "mlp_norm")
    if cfg.is_moe:
        out += _linear("moe.router", cfg.n_experts, d, "rep", cfg.router_bias)
        out += _mlp(cfg, "moe.experts", cfg.expert_ff, expert=True, copies=cfg.n_experts)
    else:
        out += _mlp(cfg, "mlp", cfg.d_ff, expert=False)
    return out


def first_stage_tensors(cfg: ModelConfig) -> list[Tensor]:
    """Outside the blocks, on the first pipeline stage: token (and position) embedding, embedding norm."""
    out = [Tensor("tok_emb.weight", (cfg.padded_vocab, cfg.d_model), "vocab")]
    if cfg.position == "learned":
        out.append(Tensor("pos_emb.weight", (cfg.max_positions, cfg.d_model), "rep"))
    if cfg.embedding_norm:
        out += _norm(cfg, "emb_norm")
    return out


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
    """Every parameter tensor of the unsplit model (blocks repeated L times; numel sums to total_params)."""
    return first_stage_tensors(cfg) + block_tensors(cfg) * cfg.n_layers + last_stage_tensors(cfg)
