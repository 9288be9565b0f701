"""Training compute of a run under the published conventions, each written once.

`model_training_flops` is this tool's figure (forward + backward matmul FLOPs, no
recomputation: PaLM's "model FLOPs"); every report, the profiler and `estimate` call it.
"""

from __future__ import annotations

from .config import ModelConfig
from .flops import flop_breakdown


def model_training_flops(cfg: ModelConfig, seq_len: int, tokens: int, attention: str = "full") -> int | float:
    """Forward + backward matmul FLOPs for `tokens` training tokens in sequences of `seq_len`
    (model FLOPs: recomputation is hardware work and is left out, as MFU does)."""
    fb = flop_breakdown(cfg, seq_len, attention)
    return fb.per_token(fb.forward + fb.backward) * tokens
