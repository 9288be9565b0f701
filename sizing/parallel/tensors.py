"""Parameter tensors with their shapes and how tensor parallelism splits each (the placement rules of
sizing/parallel/shapes.py's docstring): the Tensor record and the attention, MLP and MoE tensors a
block is built of (shapes.py assembles blocks and stages from them; mixers.py adds a hybrid's state
mixers)."""

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
    units: int = (
        0  # col: the indivisible groups along dim 0 (Mamba-2's B/C groups); kept whole when tp does not divide them
    )

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
        if self.units and self.units % tp:  # a group (heads) per rank cannot be split: each rank keeps it
            return self.shape
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
