"""The sequence length of the full-size FLOP check, and the longest one torch can size.

Pure arithmetic, no torch: `sizing verify` checks --seq-len with these before it imports torch,
so an impossible length is refused at once (an earlier version let the meta model allocate
8·T bytes of positions on the CPU first).
"""

from __future__ import annotations

import math

from sizing import MAX_SEQ_LEN, SizingError, require_int
from sizing.inputs import PRESETS, ModelConfig

DEFAULT_SEQ_LEN = 2048  # the full-size run's T for a model that is not a preset
FULL_SIZE_BATCH = 1
# torch sizes every tensor, meta ones included, in int64 bytes. The largest tensor of the
# full-size run is the math path's (batch, h, T, T) score matrix in fp32 (the meta model is
# built in the default dtype, and the softmax runs in fp32): 4.b.h.T^2 bytes must stay below 2^63.
SCORE_BYTES = 4
MAX_TENSOR_BYTES = 2**63 - 1


def meta_seq_len_limit(cfg: ModelConfig, batch: int = FULL_SIZE_BATCH) -> int:
    """The longest T whose full-size run torch can size on the meta device: the largest T
    with SCORE_BYTES.b.h.T^2 <= 2^63 - 1 (see SCORE_BYTES)."""
    return math.isqrt(MAX_TENSOR_BYTES // (SCORE_BYTES * batch * cfg.n_heads))


def full_size_seq_len(name: str, cfg: ModelConfig, seq_len: int | None = None, option: str = "seq_len") -> int:
    """T of the full-size run. Default: the preset's training context (DEFAULT_SEQ_LEN for a
    model that is not a preset), capped at a learned position table. An explicit T beyond a
    learned position table, or longer than the meta device can size, is a SizingError that
    names `option` (the CLI passes "--seq-len")."""
    if seq_len is None:
        preset = PRESETS.get(name)
        T = preset.context if preset else DEFAULT_SEQ_LEN
        if cfg.position == "learned":
            T = min(T, cfg.max_positions)
    else:
        T = require_int(option, seq_len, 1, MAX_SEQ_LEN)
        if cfg.position == "learned" and T > cfg.max_positions:
            raise SizingError(
                f"{option} ({T:,}) exceeds the learned position table of {name} (max_positions "
                f"{cfg.max_positions:,}); use a shorter {option} or --set max_positions={T}"
            )
    limit = meta_seq_len_limit(cfg)
    if T > limit:
        raise SizingError(
            f"{option} ({T:,}) is too long for the full-size FLOP check of {name}: its "
            f"(batch, {cfg.n_heads} heads, T, T) fp32 score tensor would exceed torch's int64 "
            f"byte count even on the meta device; at most {limit:,}"
        )
    return T
