"""The prefill activation peak: the largest transient of one inference forward over n tokens
(a whole prompt batch, or one chunk of a chunked prefill), without autograd.

Inference keeps no activations for backward: only one layer's working set is alive at a time,
plus the logits of the last position of each sequence. The peak is the largest of three
phases (a bytes per activation element; symbols as in activations.py, n tokens in the forward,
b sequences whose last prompt token is in it):

* attention: residual x, normed x, q, k, v and the attention output:
  n·(2·d + 2·h·d_h + 2·h_kv·d_h)·a. A fused (flash / paged) kernel: no T x T tensor.
* MLP: residual x, normed x and the hidden tensors: n·(2·d + m·f)·a, m = 3 for a gated MLP
  (gate and up outputs and their product), 2 otherwise (up output and its activation).
  MoE as a fused grouped kernel (vLLM fused_moe): the n·k routed rows' hidden tensors and
  outputs, n·(2·d + k·(m·f_e + d))·a.
* logits: the last position of each sequence only (serving engines project only the tokens
  they sample from), b·V·(a + 4): the logits and their fp32 copy for sampling.

An estimate with a stated kernel model (norms and RoPE fused, elementwise ops in place where
kernels do so), not measured on CPU: `benchmarks/gpu_profile.sh` records the device peak.
"""

from __future__ import annotations

from sizing.inputs import ModelConfig
from sizing.memory.states import FP32_BYTES
from sizing.validate import require_int


def prefill_attention_phase_bytes(cfg: ModelConfig, n_tokens: int, activation_bytes: int = 2) -> int:
    """n·(2·d + 2·h·d_h + 2·h_kv·d_h)·a: x, norm(x), q, k, v, attention output."""
    return n_tokens * (2 * cfg.d_model + 2 * cfg.q_width + 2 * cfg.kv_width) * activation_bytes


def prefill_mlp_phase_bytes(cfg: ModelConfig, n_tokens: int, activation_bytes: int = 2) -> int:
    """n·(2·d + m·f)·a dense; n·(2·d + k·(m·f_e + d))·a for a fused MoE (m: 3 gated, 2 plain)."""
    m, d = cfg.mlp_matrices, cfg.d_model
    if cfg.is_moe:
        return n_tokens * (2 * d + cfg.top_k * (m * cfg.expert_ff + d)) * activation_bytes
    return n_tokens * (2 * d + m * cfg.d_ff) * activation_bytes


def prefill_logits_bytes(cfg: ModelConfig, sequences: int, activation_bytes: int = 2) -> int:
    """b·V·(a + 4): the last position's logits of each sequence and their fp32 copy."""
    return sequences * cfg.padded_vocab * (activation_bytes + FP32_BYTES)


def prefill_activation_peak_bytes(
    cfg: ModelConfig, n_tokens: int, sequences: int = 1, activation_bytes: int = 2
) -> int:
    """The largest transient of one prefill forward over n tokens ending b sequences' prompts:
    max(attention phase, MLP phase, logits) (module docstring)."""
    require_int("prefill tokens", n_tokens)
    require_int("sequences", sequences)
    require_int("activation_bytes", activation_bytes)
    return max(
        prefill_attention_phase_bytes(cfg, n_tokens, activation_bytes),
        prefill_mlp_phase_bytes(cfg, n_tokens, activation_bytes),
        prefill_logits_bytes(cfg, sequences, activation_bytes),
    )


def prefill_tokens(prompt: int, batch: int, chunk: int | None = None) -> int:
    """Tokens in the largest prefill forward: the whole batch's prompts (b·P) at once, or a
    chunk of at most `chunk` tokens (chunked prefill, vLLM's max_num_batched_tokens)."""
    require_int("prompt", prompt)
    require_int("batch", batch)
    whole = prompt * batch
    return whole if chunk is None else min(require_int("prefill chunk", chunk), whole)


def inference_prefill_peak_bytes(
    cfg: ModelConfig, context: int, batch: int = 1, chunk: int | None = None, activation_bytes: int = 2
) -> int:
    """The prefill peak while `batch` sequences of `context` tokens are served: by default one
    sequence's prompt per forward (continuous batching prefills a request while the others
    decode; their KV cache is counted apart), or `chunk` tokens per forward, at most b·C (a
    static batch prefilled at once)."""
    n = prefill_tokens(context, batch, context if chunk is None else chunk)
    return prefill_activation_peak_bytes(cfg, n, max(1, min(batch, n // context)), activation_bytes)
