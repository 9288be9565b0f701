"""The searches behind "will it fit": the largest n that fits, the fewest ZeRO-3 ranks, the
GPUs big enough, and the model argument every fit function takes (a preset name or a config).
"""

from __future__ import annotations

from collections.abc import Callable

from sizing.inputs import GPU, GPUS, ModelConfig, get_preset
from sizing.validate import SizingError, show


def largest_fitting(total_for: Callable[[int], int], capacity: int, limit: int = 1 << 40) -> int | None:
    """Largest n >= 1 with total_for(n) <= capacity (total_for increasing), None if n = 1 fails."""
    if total_for(1) > capacity:
        return None
    lo, hi = 1, 2
    while hi < limit and total_for(hi) <= capacity:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if total_for(mid) <= capacity else (lo, mid)
    return lo


def min_ranks(total_for_ranks: Callable[[int], int], capacity: int, limit: int = 1 << 20) -> int | None:
    """Smallest dp (ZeRO-3) with total_for_ranks(dp) <= capacity, None if none up to `limit`.
    From dp 2 on the per-GPU total only falls (the gathered unit is constant), so bisect there."""
    if total_for_ranks(1) <= capacity:
        return 1
    if total_for_ranks(limit) > capacity:
        return None
    lo, hi = 1, limit  # hi fits, lo does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if total_for_ranks(mid) <= capacity else (mid, hi)
    return hi


def bigger_gpus(need_bytes: int) -> list[GPU]:
    """The three smallest GPUs with at least `need_bytes`."""
    return sorted((g for g in GPUS.values() if g.memory_bytes >= need_bytes), key=lambda g: g.memory_bytes)[:3]


def resolve_model_arg(
    model: ModelConfig | str, name: str | None, length: int | None, what: str = "seq_len"
) -> tuple[ModelConfig, str | None, int]:
    """(config, name, length) of a preset name or a config; a preset supplies its context."""
    if isinstance(model, str):
        preset = get_preset(model)
        model, name = preset.config, name or preset.name
        length = length if length is not None else preset.context
    elif not isinstance(model, ModelConfig):
        raise SizingError(f"model ({show(model)}) must be a preset name or a ModelConfig")
    if length is None:
        raise SizingError(f"{what} must be given for a config that is not a preset")
    return model, name, model.check_context(length, what)
