"""One way to check input, used by the Python API, the config and the CLI's option types.

Every check names the field, shows the value (escaped, so a newline cannot forge a second
line of output) and says what would be valid. Each returns the value it accepted, so a call
site reads `n = require_int("batch", batch)`. Bounds are generous but finite and live here.
"""

from __future__ import annotations

import difflib
import math
from typing import Any, Iterable

# Generous, finite bounds: past these no formula result is meaningful, and big-integer
# arithmetic (or float overflow) would make a command slow or crash.
MAX_COUNT = 2**40  # sequences, GPUs, layers, widths, context lengths: ~1.1e12
MAX_SEQ_LEN = 2**40
MAX_TOKENS = 10**30
MAX_PRICE = 1e12  # USD per GPU-hour
MAX_FLOAT = 1e30  # any other real-valued field (rope_theta, norm_eps, TFLOP/s)


class SizingError(ValueError):
    """Bad input to sizing: the message names the field, the value and what would be valid.
    A ValueError, so `except ValueError` keeps working."""


def show(value: Any, limit: int = 60) -> str:
    """A value as an error message shows it: repr-escaped (newlines and control characters
    visible), cut to `limit` characters."""
    text = repr(value) if isinstance(value, str) else repr(value) if not isinstance(value, (int, float)) else str(value)
    if isinstance(value, int) and not isinstance(value, bool) and len(text) > limit:
        return f"an integer of {len(text)} digits"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def require_int(name: str, value: Any, minimum: int = 1, maximum: int = MAX_COUNT) -> int:
    """An int (not a bool, not a float) in [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise SizingError(f"{name} ({show(value)}) must be {what} (at most {maximum:,})")
    return value


def require_optional_int(name: str, value: Any, minimum: int = 1, maximum: int = MAX_COUNT) -> int | None:
    return None if value is None else require_int(name, value, minimum, maximum)


def require_number(name: str, value: Any, minimum: float | None = None, maximum: float = MAX_FLOAT, *,
                   exclusive_minimum: bool = False, what: str | None = None) -> float:
    """A finite real number (int or float, not a bool) within the bounds."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok:
        try:
            ok = math.isfinite(value) and value <= maximum
        except OverflowError:  # an int too large for a float
            ok = False
    if ok and minimum is not None:
        ok = value > minimum if exclusive_minimum else value >= minimum
    if not ok:
        if what is None:
            low = "" if minimum is None else (f" > {minimum:g}" if exclusive_minimum else f" >= {minimum:g}")
            what = f"a finite number{low} and at most {maximum:g}"
        raise SizingError(f"{name} ({show(value)}) must be {what}")
    return value


def require_fraction(name: str, value: Any) -> float:
    """A share in (0, 1]: MFU, efficiencies, rotary fraction."""
    return require_number(name, value, 0, 1, exclusive_minimum=True, what="a number in (0, 1]")


def require_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SizingError(f"{name} ({show(value)}) must be true or false")
    return value


def require_choice(name: str, value: Any, choices: Iterable[Any], aliases: dict | None = None) -> Any:
    """One of `choices` (after resolving `aliases`); else the valid values and a close match."""
    choices = tuple(choices)
    key = value
    if aliases and isinstance(value, str) and value in aliases:
        key = aliases[value]
    try:
        if key in choices:
            return key
    except TypeError:  # unhashable
        pass
    valid = ", ".join(map(str, choices))
    hint = ""
    if isinstance(value, str):
        close = difflib.get_close_matches(value, [str(c) for c in choices], n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
    raise SizingError(f"{name} ({show(value)}) must be one of: {valid}{hint}")
