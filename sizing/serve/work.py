"""The work of serving: FLOPs and bytes of one prefill and of one decode step, exact integers
(the expected MoE expert count aside), from the formula functions of sizing.formulas.flops,
sizing.formulas.params and sizing.memory, so an architecture that changes those flows through here.

Symbols: L layers, d d_model, V padded vocab, P prompt tokens, C positions in the KV cache
(the new token included), b sequences in the batch, E experts, k experts per token.

* Prefill of b prompts of P tokens: every matmul of the blocks over P tokens (attention
  `causal` by default: serving kernels skip the masked tiles; `full` on request), and the
  lm_head on the last position only (serving engines project only the tokens they sample
  from): b·(blocks(P) + 2·d·V).
* Decode step: b·decode_flops_per_token(C): every weight matmul once per sequence plus QK^T
  and AV of one query over min(C, W) keys.
* Bytes a decode step reads: the parameters it touches plus the KV cache slices it reads.
  Touched: every tensor except the rows of the lookup tables that no sequence looks up (an
  untied token table gives b rows, a learned position table one row: the batch decodes in
  lockstep), and, for an MoE, the experts no token routes to. The KV read is the cache itself,
  kv_cache_bytes(C, b): min(C, W) positions (a window caps it), h_kv heads (GQA/MQA read
  each K/V head once for its whole query group).
* MoE routing is assumed uniform and independent: each of b tokens picks k of E experts, so
  an expert is missed by all with probability (1 - k/E)^b and E·(1 - (1 - k/E)^b) distinct
  experts are read per layer (expected value). Every other MoE weight (router, and shared
  experts when sizing.formulas.params has them) is always read.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.formulas import decode_flops_per_token, flop_components, lm_head_flops, mla_absorbed_decode_flops_per_token
from sizing.formulas import params as P
from sizing.inputs import ModelConfig
from sizing.memory import (
    dtype_bytes,
    kv_cache_bytes,
    kv_cache_bytes_per_rank,
    naive_kv_cache_bytes,
    naive_kv_cache_bytes_per_rank,
)
from sizing.validate import require_choice, require_int
from sizing.vocabulary import ATTENTION_CONVENTIONS, DEFAULT_MLA_IMPL, DEFAULT_SERVE_ATTENTION, MLA_IMPLS, ceil_div


# ---------------------------------------------------------------- FLOPs
def prefill_flops(cfg: ModelConfig, prompt: int, batch: int = 1, attention: str = DEFAULT_SERVE_ATTENTION) -> int:
    """b·(blocks over P tokens + lm_head on the last position): one prefill of the batch."""
    require_choice("attention", attention, ATTENTION_CONVENTIONS)
    require_int("batch", batch)
    blocks = sum(c.forward_per_sequence for c in flop_components(cfg, prompt, attention) if c.key != "lm_head")
    return batch * (blocks + lm_head_flops(cfg, 1))


def decode_step_flops(cfg: ModelConfig, context: int, batch: int = 1, mla: str = DEFAULT_MLA_IMPL) -> int:
    """b·decode_flops_per_token(C): one new token for each of b sequences with C cached positions.
    Under MLA, `mla` picks the implementation: "absorbed" (sizing.formulas.flops'
    mla_absorbed_decode_flops_per_token) or "naive" (decompressed per-head K and V)."""
    require_int("batch", batch)
    require_choice("mla", mla, MLA_IMPLS)
    if cfg.is_mla and mla == "absorbed":
        return batch * mla_absorbed_decode_flops_per_token(cfg, context)
    return batch * decode_flops_per_token(cfg, context)


def kv_read_bytes(cfg: ModelConfig, context: int, batch: int, dtype: str, mla: str = DEFAULT_MLA_IMPL) -> int:
    """The KV cache a decode step reads, whole replica: the latent under absorbed MLA, per-head
    K and V under naive MLA, kv_cache_bytes otherwise."""
    require_choice("mla", mla, MLA_IMPLS)
    if cfg.is_mla and mla == "naive":
        return naive_kv_cache_bytes(cfg, context, batch, dtype)
    return kv_cache_bytes(cfg, context, batch, dtype)


def kv_read_bytes_per_rank(
    cfg: ModelConfig, context: int, batch: int, dtype: str, tp: int, mla: str = DEFAULT_MLA_IMPL
) -> int:
    """What one of tp ranks reads: its K/V heads (replicated heads when tp > h_kv), the whole
    latent under absorbed MLA (it has no head axis to split), h/tp heads under naive MLA."""
    require_choice("mla", mla, MLA_IMPLS)
    if cfg.is_mla and mla == "naive":
        return naive_kv_cache_bytes_per_rank(cfg, context, batch, dtype, tp)
    return kv_cache_bytes_per_rank(cfg, context, batch, dtype, tp)


def chunked_prefill_kv_reread_bytes(
    cfg: ModelConfig,
    prompt: int,
    chunk: int | None,
    batch: int = 1,
    dtype: str = "bf16",
    tp: int = 1,
    mla: str = DEFAULT_MLA_IMPL,
) -> int:
    """KV bytes one rank re-reads while b prompts are prefilled in chunks of c tokens: chunk j
    (0-based) of a prompt attends the j·c positions its earlier chunks cached, so the prompt's
    n = ⌈P/c⌉ chunks read Σ_{j=1}^{n-1} KV(j·c) (a window caps each, as kv_read_bytes_per_rank
    does). 0 when one chunk holds a whole prompt or no chunk is given. Chunks are taken per
    prompt (a chunk does not straddle two prompts)."""
    require_int("prompt", prompt)
    if chunk is None or require_int("prefill_chunk", chunk) >= prompt:
        return 0
    chunks = ceil_div(prompt, chunk)
    return sum(kv_read_bytes_per_rank(cfg, j * chunk, batch, dtype, tp, mla) for j in range(1, chunks))


# ---------------------------------------------------------------- MoE routing
def expected_experts_hit(n_experts: int, top_k: int, tokens: int) -> float:
    """E·(1 - (1 - k/E)^n): distinct experts that n tokens, each routed uniformly to k of E,
    reach in one layer (expected value; E when n·k is large, k for one token)."""
    require_int("tokens", tokens)
    if n_experts == 0:
        return 0.0
    if top_k == n_experts:
        return float(n_experts)
    return n_experts * (1.0 - (1.0 - top_k / n_experts) ** tokens)


# ---------------------------------------------------------------- bytes
def unread_table_params(cfg: ModelConfig, tokens: int, positions: int = 1) -> int:
    """Lookup-table rows a forward over `tokens` tokens at `positions` distinct positions does
    not read: an untied token table is read at most one row per token (the tied one is read
    whole by the lm_head), a learned position table one row per position (a decode step of a
    batch in lockstep: one)."""
    unread = 0
    if not cfg.tied_embeddings:
        unread += P.token_embedding_params(cfg) - min(tokens, cfg.padded_vocab) * cfg.d_model
    if cfg.position == "learned":
        unread += P.position_embedding_params(cfg) - min(positions, cfg.max_positions) * cfg.d_model
    return unread


def routed_expert_params(cfg: ModelConfig) -> int:
    """Parameters of the routed experts, all layers: sizing.formulas.params' `moe.experts` component
    (E·L·expert_params today; 0 for a dense model). Everything else of an MoE layer (router,
    shared experts as their own component) is always read."""
    return sum(P.term_count(cfg, t) for t in P.PARAM_TERMS if t.key == "moe.experts" and t.present(cfg))  # no text


@dataclass(frozen=True)
class StepBytes:
    """Bytes one forward moves through HBM: the parameters touched and the KV cache slices."""

    dense_weight_bytes: int  # every touched parameter but the routed experts
    expert_bytes: int  # one routed expert of one layer
    experts_read_per_layer: float  # distinct routed experts read per layer (expected, or measured)
    layers: int
    kv_bytes: int  # the KV cache read (decode) or written (prefill), whole replica
    kv_bytes_per_rank: int | None = None  # what one TP rank reads (None: kv_bytes, tp 1)

    @property
    def expert_weight_bytes(self) -> float:
        """experts read per layer x L x one expert's bytes."""
        return self.experts_read_per_layer * self.layers * self.expert_bytes

    @property
    def weight_bytes(self) -> float:
        return self.dense_weight_bytes + self.expert_weight_bytes

    @property
    def total(self) -> float:
        return self.weight_bytes + self.kv_bytes

    def per_rank(self, tp: int, kv_read_repeat: int = 1) -> float:
        """Bytes one of tp ranks moves: the weights split evenly, its own KV slice (read
        `kv_read_repeat` times by the attention kernel: ServeSettings.kv_read_repeat)."""
        kv = self.kv_bytes if self.kv_bytes_per_rank is None else self.kv_bytes_per_rank
        return self.weight_bytes / tp + kv * kv_read_repeat

    def to_dict(self) -> dict:
        weights = self.weight_bytes
        return {
            "weight_bytes": int(weights) if float(weights).is_integer() else weights,
            "dense_weight_bytes": self.dense_weight_bytes,
            "expert_bytes": self.expert_bytes,
            "experts_read_per_layer": self.experts_read_per_layer,
            "kv_bytes": self.kv_bytes,
            "kv_bytes_per_rank": self.kv_bytes if self.kv_bytes_per_rank is None else self.kv_bytes_per_rank,
        }


def step_bytes(
    cfg: ModelConfig,
    context: int,
    batch: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    new_tokens: int = 1,
    experts_read_per_layer: float | None = None,
    tp: int = 1,
    mla: str = DEFAULT_MLA_IMPL,
) -> StepBytes:
    """What one forward of `new_tokens` tokens per sequence for b sequences reads: the touched
    parameters in `weight_dtype` and kv_cache_bytes(C, b) in `kv_dtype`. A decode step: one new
    token, C cached positions, the cache read. A prefill: P new tokens, C = P, the cache
    written. MoE experts per layer: `experts_read_per_layer` when measured, else
    expected_experts_hit over the b·new_tokens tokens. The KV bytes are those of the MLA
    implementation `mla` (kv_read_bytes), and per rank of tp (kv_read_bytes_per_rank)."""
    require_int("batch", batch)
    require_int("new_tokens", new_tokens)
    n = batch * new_tokens
    dense = P.total_params(cfg) - routed_expert_params(cfg) - unread_table_params(cfg, n, new_tokens)
    hit = (
        expected_experts_hit(cfg.n_experts, cfg.top_k, n) if experts_read_per_layer is None else experts_read_per_layer
    )
    return StepBytes(
        dense_weight_bytes=dtype_bytes(dense, weight_dtype),
        expert_bytes=dtype_bytes(P.expert_params(cfg), weight_dtype) if cfg.is_moe else 0,
        experts_read_per_layer=hit,
        layers=routed_expert_params(cfg) // P.expert_params(cfg) // cfg.n_experts if cfg.is_moe else cfg.n_layers,
        kv_bytes=kv_read_bytes(cfg, context, batch, kv_dtype, mla),
        kv_bytes_per_rank=kv_read_bytes_per_rank(cfg, context, batch, kv_dtype, tp, mla),
    )
