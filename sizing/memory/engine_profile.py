"""vLLM's profiling run on one tensor-parallel rank: the activation peak its start-up takes from
the KV budget (what it logs as "PyTorch activation peak memory" / "torch peak memory increase").

vLLM runs one forward of `max_num_batched_tokens` dummy tokens, then its sampler over
R = min(max_num_seqs, max_num_batched_tokens) rows of logits with top-k and top-p
(vllm/v1/worker/gpu_model_runner.py profile_run, _dummy_sampler_run; V0:
vllm/worker/model_runner.py profile_run). The peak is the larger of the two, per rank, with N
tokens, a bytes per activation, d the hidden width, widths split over tp as the rank holds them:

* forward, the MLP of a layer: the layer's input (still held by the caller), the residual and
  the MLP's input, 3·N·d·a, plus the gate/up output and the activated product, N·(2 + 1)·f/tp·a
  (a plain MLP: N·2·f/tp·a); an MoE layer runs vLLM's fused_moe, whose caches hold the top-k
  rows' gate/up output, their product and their down output, N·k·(3·f_e/tp + d)·a;
* forward, the attention of a layer: 3·N·d·a, the fused q/k/v output and the attention output,
  N·(2·q + 2·kv)/tp·a;
* sampler: R·V·s, s the bytes the top-k/top-p sampler holds per logit (sizing/data/
  engine_memory.json: 28 in V1, 40 in V0, read from the code), plus the forward's N·d·a hidden
  states it samples from.

Checked against the activation peaks vLLM logs (sizing/data/engine_logs.json, reports/serving.md):
the sampler term is what makes the peak of a 128K-vocabulary model on an H100 (1024 rows) about
3.4 GiB, not the forward's 0.8.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.inputs import ModelConfig
from sizing.memory.engine_data import sampler_bytes_per_logit
from sizing.memory.kv import kv_heads_per_rank
from sizing.validate import require_int
from sizing.vocabulary import ceil_div


def _rank_width(width: int, tp: int) -> int:
    return ceil_div(width, tp)


def attention_phase_bytes(cfg: ModelConfig, tokens: int, tp: int = 1, activation_bytes: int = 2) -> int:
    """N·(3·d + 2·q/tp + 2·kv per rank)·a: the layer input, residual and normed input, the fused
    q/k/v output and the attention output (an MLA rank caches the whole latent)."""
    d = cfg.d_model
    q = _rank_width(cfg.n_heads * cfg.qk_head_width, tp)
    kv = cfg.kv_lora_rank + cfg.qk_rope_head_dim if cfg.is_mla else kv_heads_per_rank(cfg, tp) * cfg.d_head * 2
    return tokens * (3 * d + 2 * q + kv) * activation_bytes


def mlp_phase_bytes(cfg: ModelConfig, tokens: int, tp: int = 1, activation_bytes: int = 2) -> int:
    """N·(3·d + m·f/tp)·a for a dense MLP (m = 3 gated: gate, up, product; 2 plain); for an MoE
    layer N·(3·d + k·(m·f_e/tp + d))·a, the fused_moe caches of the top-k rows. The larger."""
    d, m = cfg.d_model, cfg.mlp_matrices
    dense = tokens * (3 * d + m * _rank_width(cfg.d_ff, tp)) * activation_bytes if cfg.n_dense_layers else 0
    if not cfg.is_moe:
        return dense
    experts = cfg.top_k * (m * _rank_width(cfg.expert_ff, tp) + d)
    return max(dense, tokens * (3 * d + experts) * activation_bytes)


def sampler_peak_bytes(cfg: ModelConfig, rows: int, tokens: int, profile: str = "v1", activation_bytes: int = 2) -> int:
    """R·V·s + N·d·a: the top-k/top-p sampler over R rows of V logits (s bytes per logit, by the
    vLLM generation) and the hidden states of the N-token forward it samples from."""
    return rows * cfg.vocab_size * sampler_bytes_per_logit(profile) + tokens * cfg.d_model * activation_bytes


@dataclass(frozen=True)
class ProfilePeak:
    """The three candidates and the peak, bytes on one rank."""

    attention: int
    mlp: int
    sampler: int

    @property
    def peak(self) -> int:
        return max(self.attention, self.mlp, self.sampler)

    @property
    def phase(self) -> str:
        return max(("attention", self.attention), ("MLP", self.mlp), ("sampler", self.sampler), key=lambda p: p[1])[0]


def profile_peak(
    cfg: ModelConfig,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    tp: int = 1,
    profile: str = "v1",
    activation_bytes: int = 2,
) -> ProfilePeak:
    """vLLM's profiling run on one rank (module docstring): forward of max_num_batched_tokens,
    sampler over min(max_num_seqs, max_num_batched_tokens) rows."""
    tokens = require_int("max_num_batched_tokens", max_num_batched_tokens)
    rows = min(require_int("max_num_seqs", max_num_seqs), tokens)
    return ProfilePeak(
        attention_phase_bytes(cfg, tokens, tp, activation_bytes),
        mlp_phase_bytes(cfg, tokens, tp, activation_bytes),
        sampler_peak_bytes(cfg, rows, tokens, profile, activation_bytes),
    )
