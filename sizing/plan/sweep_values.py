"""A sweep grid's values as typed: an axis as a list ('24,32,48', '16:64:8', a Python list)
and each run field's value parsed and checked as the CLI options check it (sweeps.py builds
the grid from them).
"""

from __future__ import annotations

from typing import Any

from sizing.inputs import get_gpu, parse_length, parse_quantity
from sizing.validate import (
    MAX_SEQ_LEN,
    MAX_TOKENS,
    SizingError,
    parse_float,
    parse_int,
    require_int,
    require_mfu,
    require_price,
    show,
    show_arg,
)

# Run fields whose values are names, with an example list: a numeric range means nothing for them.
NAMED_FIELDS: dict[str, str] = {
    "gpu": "h100,b200",
    "dtype": "bf16,fp8",
    "attention": "full,causal",
    "recompute": "none,full",
}


def parse_values(field: str, values: Any) -> list[Any]:
    """A grid axis as a list: one value, a list, or text '24,32,48' / '16:64:8' (start:stop:step,
    stop included). Text items stay text; the field's own parser reads them (parse_run_value,
    ModelConfig.with_overrides)."""
    if isinstance(values, str):
        items: list[Any] = []
        for part in values.split(","):
            part = part.strip()
            if part.count(":") in (1, 2) and field in NAMED_FIELDS:
                raise SizingError(
                    f"{field} ({show(values)}) takes names, not a start:stop:step range: list them, "
                    f"e.g. {field}={NAMED_FIELDS[field]}"
                )
            items += _range(field, part) if part.count(":") in (1, 2) else [part]
        values = items
    elif not isinstance(values, (list, tuple, range)):
        values = [values]
    if not values or any(v == "" for v in values):
        raise SizingError(f"{field} ({show(values)}) must list at least one value, e.g. {field}=24,32,48")
    return list(values)


# typed with suffixes: tokens in SI (1T = 10^12), seq_len with K = 1024 (4K = 4,096)
QUANTITY_FIELDS = {"tokens": (parse_quantity, MAX_TOKENS), "seq_len": (parse_length, MAX_SEQ_LEN)}


def _range(field: str, text: str) -> list[int]:
    parts = text.split(":")
    if field in QUANTITY_FIELDS:  # 1T:3T:1T, as 1T,2T,3T is typed
        parse, maximum = QUANTITY_FIELDS[field]
        start, stop = (parse(p, field, maximum) for p in parts[:2])
        step = parse(parts[2], f"{field} step", maximum) if len(parts) == 3 else 1
        step = require_int(f"{field} step", step)
    else:
        start, stop = (parse_int(field, p, 0) for p in parts[:2])
        step = parse_int(f"{field} step", parts[2]) if len(parts) == 3 else 1
    if stop < start:
        raise SizingError(f"{field} ({show(text)}) must be start:stop:step with start <= stop")
    if (stop - start) // step >= 100_000:
        raise SizingError(f"{field} ({show(text)}) has more than 100,000 values")
    return list(range(start, stop + 1, step))


def parse_run_value(field: str, value: Any) -> Any:
    """A run field's value from text as the CLI types it, or as given; checked as the CLI
    options and estimate() check it (mfu, price, GPUs and tokens by sizing.validate)."""
    if not isinstance(value, str):
        if field == "mfu":
            return require_mfu(field, value)
        if field == "price_per_gpu_hour" and value is not None:
            return require_price(field, value)
        return value
    if field == "seq_len":
        return parse_length(value, field, MAX_SEQ_LEN)
    if field == "tokens":
        return require_int(field, parse_quantity(value, field, MAX_TOKENS), 1, MAX_TOKENS)
    if field == "num_gpus":
        return parse_int(field, value)
    if field == "mfu":
        return require_mfu(field, parse_float(field, value), shown=show_arg(value.strip()))
    if field == "price_per_gpu_hour":
        return require_price(field, parse_float(field, value), shown=show_arg(value.strip()))
    if field == "gpu":
        return get_gpu(value).key
    return value.strip().lower()
