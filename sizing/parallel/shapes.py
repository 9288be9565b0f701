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

from dataclasses import dataclass

from sizing.inputs import ModelConfig
from sizing.vocabulary import ceil_div


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


def _norm(cfg: ModelConfig, name: str, width: int | None = None) -> list[Tensor]:
    """A norm over the residual stream (its bias where the config has one), or an inner RMSNorm
    of `width` (MLA's compressed norms, a width qk-norm): gain only, replicated."""
    if width is not None:
        return [Tensor(f"{name}.weight", (width,), "rep")]
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


def _mla_projections(cfg: ModelConfig) -> list[Tensor]:
    """MLA (DeepSeek-V2/V3): the down-projections q_a and kv_a and their norms replicated (every
    tp rank computes the latent, as Megatron-LM's MLA and DeepSeek's own TP do), the up-projections
    q_b (or q) and kv_b column-parallel over the heads."""
    d, h = cfg.d_model, cfg.n_heads
    if cfg.q_lora_rank is None:
        out = _linear("attn.q", h * cfg.qk_head_width, d, "col", False)
    else:
        out = _linear("attn.q_a", cfg.q_lora_rank, d, "rep", cfg.qkv_bias)
        out += _norm(cfg, "attn.q_a_norm", cfg.q_lora_rank)
        out += _linear("attn.q_b", h * cfg.qk_head_width, cfg.q_lora_rank, "col", False)
    out += _linear("attn.kv_a", cfg.kv_lora_rank + cfg.qk_rope_head_dim, d, "rep", cfg.qkv_bias)
    out += _norm(cfg, "attn.kv_a_norm", cfg.kv_lora_rank)
    out += _linear("attn.kv_b", h * (cfg.qk_nope_head_dim + cfg.v_head_dim), cfg.kv_lora_rank, "col", False)
    return out + _indexer(cfg)


def _indexer(cfg: ModelConfig) -> list[Tensor]:
    """DSA's lightning indexer (DeepSeek-V3.2), replicated: its one key per token is shared by its
    heads and every rank scores all keys to pick the same top-k (as vLLM runs it under TP)."""
    if not cfg.has_indexer:
        return []
    d, H, d_i = cfg.d_model, cfg.index_heads, cfg.index_head_dim
    out = _linear("attn.indexer.wq_b", H * d_i, cfg.q_lora_rank, "rep", False)
    out += _linear("attn.indexer.wk", d_i, d, "rep", False)
    out.append(Tensor("attn.indexer.k_norm.weight", (d_i,), "rep"))
    out.append(Tensor("attn.indexer.k_norm.bias", (d_i,), "rep"))
    return out + _linear("attn.indexer.weights_proj", H, d, "rep", False)


def _qk_norms(cfg: ModelConfig) -> list[Tensor]:
    """qk-norm gains. "head": one d_h gain shared by the heads, replicated. "width" (OLMo-2):
    a gain over all of q (h d_h) and of k (h_kv d_h), replicated here, as OLMo-2 under Megatron
    keeps it (the norm's statistics span every head, so each rank needs the whole q to normalise:
    the gain is not split with the heads). "unweighted" (Llama-4): no parameter."""
    if cfg.qk_norm == "width":
        return _norm(cfg, "attn.q_norm", cfg.q_width) + _norm(cfg, "attn.k_norm", cfg.kv_width)
    if cfg.qk_norm == "head":
        return _norm(cfg, "attn.q_norm", cfg.d_head) + _norm(cfg, "attn.k_norm", cfg.d_head)
    return []


def attention_tensors(cfg: ModelConfig) -> list[Tensor]:
    """The attention of one block: q, k, v (or MLA's projections), qk-norm, sinks, o."""
    d = cfg.d_model
    if cfg.is_mla:
        out = _mla_projections(cfg)
    else:
        out = _linear("attn.q", cfg.q_width, d, "col", cfg.qkv_bias)
        out += _linear("attn.k", cfg.kv_width, d, "col", cfg.qkv_bias)
        out += _linear("attn.v", cfg.kv_width, d, "col", cfg.qkv_bias)
    out += _qk_norms(cfg)
    if cfg.attention_sinks:  # one logit per head: split with the heads
        out.append(Tensor("attn.sinks", (cfg.n_heads,), "col"))
    return out + _linear("attn.o", d, cfg.n_heads * cfg.v_head_width, "row", cfg.attn_out_bias)


def moe_tensors(cfg: ModelConfig) -> list[Tensor]:
    """An MoE layer's FFN: the router (and its bias) replicated, the E routed experts (each
    expert's biases with it), the shared experts as one dense MLP of E_s f_s (col / row) and
    Qwen2-MoE's shared gate (d -> 1, replicated)."""
    out = _linear("moe.router", cfg.n_experts, cfg.d_model, "rep", cfg.router_bias)
    out += _mlp(cfg, "moe.experts", cfg.expert_ff, expert=True, copies=cfg.n_experts)
    if cfg.n_shared_experts:
        out += _mlp(cfg, "moe.shared", cfg.n_shared_experts * cfg.shared_ff, expert=False)
    if cfg.shared_expert_gate:
        out += _linear("moe.shared_gate", 1, cfg.d_model, "rep", False)
    return out


def block_tensors(cfg: ModelConfig, moe: bool | None = None) -> list[Tensor]:
    """One transformer block's parameters (each expert tensor once, standing for its E copies):
    an MoE block (`moe` True) or a dense one (False; None: the config's kind, MoE if it has experts).
    Norms are replicated. Every other per-layer difference (windows, chunks, NoPE) has no parameter."""
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
    kind first, then the MoE kind, each only where present."""
    if not cfg.is_moe:
        return [(False, len(layers))] if len(layers) else []
    moe = count_moe_layers(cfg, layers)
    return [(kind, n) for kind, n in ((False, len(layers) - moe), (True, moe)) if n]


def count_moe_layers(cfg: ModelConfig, layers: range) -> int:
    """MoE layers among `layers` (a step-1 range): past the first dense ones, every step-th."""
    lo, hi = max(layers.start, cfg.first_dense_layers), layers.stop
    if not cfg.is_moe or hi <= lo:
        return 0
    s = cfg.moe_layer_step
    return hi // s - lo // s  # i + 1 in (lo, hi] divisible by s


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
    """Every parameter tensor of the unsplit model (each kind of block repeated as often as the
    layers hold it; numel sums to total_params)."""
    blocks = [t for moe, n in block_kinds(cfg, range(cfg.n_layers)) for t in block_tensors(cfg, moe) * n]
    return first_stage_tensors(cfg) + blocks + last_stage_tensors(cfg)
