"""One way to check input, used by the Python API, the config and the CLI's option types.

Every check names the field, shows the value (escaped, so a newline cannot forge a second
line of output) and says what would be valid. Each returns the value it accepted, so a call
site reads `n = require_int("batch", batch)`. Bounds are generous but finite and live here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

# Generous, finite bounds: past these no formula result is meaningful, and big-integer
# arithmetic (or float overflow) would make a command slow or crash.
MAX_COUNT = 2**40  # sequences, GPUs, layers, widths, context lengths: ~1.1e12
MAX_SEQ_LEN = 2**40
MAX_TOKENS = 10**30
MAX_PRICE = 1e12  # USD per GPU-hour
MAX_FLOAT = 1e30  # any other real-valued field (rope_theta, norm_eps, TFLOP/s)
# An MFU below this turns GPU-hours into float overflow for large runs (1e30 tokens x 1e38
# FLOPs per token / 1e-6 of a peak stays below 1e308); no real run is that slow.
MIN_MFU = 1e-6
# Config files: a real config.json is a few kB and nests three or four levels deep.
MAX_CONFIG_BYTES = 4 * 2**20
MAX_JSON_DEPTH = 32


class SizingError(ValueError):
    """Bad input to sizing: the message names the field, the value and what would be valid.
    A ValueError, so `except ValueError` keeps working."""


class UnknownName(SizingError, KeyError):
    """A name that is not in a table (preset, GPU, dtype of a GPU). Also a KeyError, so
    callers written for the old lookups (`except KeyError`) keep working."""

    def __str__(self) -> str:  # KeyError's str() would wrap the message in quotes
        return str(self.args[0]) if self.args else ""


def show(value: Any, limit: int = 60) -> str:
    """A value as an error message shows it: repr-escaped (newlines and control characters
    visible), cut to `limit` characters."""
    text = repr(value) if isinstance(value, str) else repr(value) if not isinstance(value, (int, float)) else str(value)
    if isinstance(value, int) and not isinstance(value, bool) and len(text) > limit:
        return f"an integer of {len(text)} digits"
    return text if len(text) <= limit else text[: limit - 3] + "..."


_PLAIN_ARG = re.compile(r"[\w.+\-/:@,=%]{1,60}", re.ASCII)


def show_arg(text: str) -> str:
    """A command-line argument as typed (`--mfu (1.5)`), when it is a short run of plain
    characters; anything else (spaces, newlines, quotes, long) as `show` escapes it."""
    return text if _PLAIN_ARG.fullmatch(text) else show(text)


def _int_message(name: str, shown: str, minimum: int, maximum: int) -> str:
    what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    return f"{name} ({shown}) must be {what} (at most {maximum:,})"


def require_int(name: str, value: Any, minimum: int = 1, maximum: int = MAX_COUNT) -> int:
    """An int (not a bool, not a float) in [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise SizingError(_int_message(name, show(value), minimum, maximum))
    return value


def require_optional_int(name: str, value: Any, minimum: int = 1, maximum: int = MAX_COUNT) -> int | None:
    return None if value is None else require_int(name, value, minimum, maximum)


def require_number(
    name: str,
    value: Any,
    minimum: float | None = None,
    maximum: float = MAX_FLOAT,
    *,
    exclusive_minimum: bool = False,
    what: str | None = None,
    shown: str | None = None,
) -> float:
    """A finite real number (int or float, not a bool) within the bounds. `shown`: how the
    message shows the value (the CLI passes the text as typed)."""
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
        raise SizingError(f"{name} ({show(value) if shown is None else shown}) must be {what}")
    return value


def require_fraction(name: str, value: Any) -> float:
    """A share in (0, 1]: MFU, efficiencies, rotary fraction."""
    return require_number(name, value, 0, 1, exclusive_minimum=True, what="a number in (0, 1]")


# ---- the run options every command and API function shares, defined once: the CLI's option
# types (sizing/cli/options.py) and the API (training.check_hardware_options, plans) call these.
MFU_WHAT = f"in (0, 1], at least {MIN_MFU:g}"
PRICE_WHAT = f">= 0 USD per GPU-hour and at most {MAX_PRICE:g}"


def require_mfu(name: str, value: Any, shown: str | None = None) -> float:
    """Model FLOPs utilisation in [MIN_MFU, 1]: smaller would overflow a large run's GPU-hours."""
    return require_number(name, value, MIN_MFU, 1, what=MFU_WHAT, shown=shown)


def require_price(name: str, value: Any, shown: str | None = None) -> float:
    """USD per GPU-hour in [0, MAX_PRICE]."""
    return require_number(name, value, 0, MAX_PRICE, what=PRICE_WHAT, shown=shown)


# A peak below 1 GFLOP/s (a thousandth of one CPU core's) makes a measured MFU overflow to
# infinity for any real step (FLOPs / seconds / peak): no device the profiler times is that slow.
MIN_PEAK_TFLOPS = 1e-3
PEAK_WHAT = f"a peak in TFLOP/s between {MIN_PEAK_TFLOPS:g} and {MAX_FLOAT:g}"


def require_peak_tflops(name: str, value: Any, shown: str | None = None) -> float:
    return require_number(name, value, MIN_PEAK_TFLOPS, MAX_FLOAT, what=PEAK_WHAT, shown=shown)


# An efficiency (a share of a peak rate or of a bandwidth) below this makes a time overflow to
# infinity for a large workload (seconds = work / (rate x efficiency)); no real kernel is slower.
MIN_EFFICIENCY = MIN_MFU
EFFICIENCY_WHAT = f"a number in (0, 1], at least {MIN_EFFICIENCY:g}"
# A request rate below one request in ~11.6 days turns $ per token into overflow, and one
# below a float's resolution rounds the replicas to 0.
MIN_RATE, MAX_RATE = 1e-6, 1e9
RATE_WHAT = f"requests per second between {MIN_RATE:g} and {MAX_RATE:g}"
# A link slower than 1 MB/s turns a collective's seconds into overflow (and nothing trains on it).
MIN_LINK_GBS, MAX_LINK_GBS = 1e-3, 1e6
LINK_WHAT = f"GB/s per direction between {MIN_LINK_GBS:g} and {MAX_LINK_GBS:g}"


def require_efficiency(name: str, value: Any, shown: str | None = None) -> float:
    """A share of a peak in [MIN_EFFICIENCY, 1] (serving's compute and bandwidth efficiencies)."""
    return require_number(name, value, MIN_EFFICIENCY, 1, what=EFFICIENCY_WHAT, shown=shown)


def require_rate(name: str, value: Any, shown: str | None = None) -> float:
    """Requests per second in [MIN_RATE, MAX_RATE]."""
    return require_number(name, value, MIN_RATE, MAX_RATE, what=RATE_WHAT, shown=shown)


def require_link_gbs(name: str, value: Any, shown: str | None = None) -> float:
    """A link's GB/s per direction in [MIN_LINK_GBS, MAX_LINK_GBS]."""
    return require_number(name, value, MIN_LINK_GBS, MAX_LINK_GBS, what=LINK_WHAT, shown=shown)


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
    # Same type as well as equal: True == 1 and 1.0 == 1, but zero=True is not ZeRO stage 1.
    for choice in choices:
        if type(choice) is type(key) and choice == key:
            return choice
    valid = ", ".join(map(str, choices))
    hint = ""
    if isinstance(value, str):
        import difflib  # only for a bad value: the close match it names

        close = difflib.get_close_matches(value, [str(c) for c in choices], n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
    raise SizingError(f"{name} ({show(value)}) must be one of: {valid}{hint}")


# ---- exact parsing of typed numbers: never through float, never a huge integer built
_DECIMAL = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?")
_HUGE_EXPONENT = 10**12  # stands in for an exponent of more than 12 digits (sign kept)


def decimal_parts(text: str) -> tuple[int, str, int] | None:
    """A decimal number as typed -> (sign, digits, exponent) with value sign x int(digits) x
    10**exponent, exactly: '-1.50e3' -> (-1, '15', 2); '0.0' -> (1, '', 0). The digits have
    no leading or trailing zeros, so the value is an integer iff exponent >= 0 and has
    len(digits) + exponent digits: callers bound it *before* building it ('1e999999' must
    not build a million-digit integer). Underscores between digits are allowed (1_000).
    None when `text` is not a decimal number (hex, 'nan', 'inf' and words are not)."""
    match = _DECIMAL.fullmatch(text.strip().replace("_", ""))
    if match is None:
        return None
    sign, whole, fraction, exponent_text = match.groups()
    fraction = fraction or ""
    if not whole and not fraction:
        return None
    exponent_text = exponent_text or "0"
    if len(exponent_text.lstrip("+-")) > 12:
        exponent = -_HUGE_EXPONENT if exponent_text.startswith("-") else _HUGE_EXPONENT
    else:
        exponent = int(exponent_text)
    digits = (whole + fraction).lstrip("0")
    significant = digits.rstrip("0")
    if not significant:
        return 1, "", 0
    return (-1 if sign == "-" else 1), significant, exponent - len(fraction) + len(digits) - len(significant)


def parse_int(name: str, text: str, minimum: int = 1, maximum: int = MAX_COUNT) -> int:
    """A typed integer, exactly: '48', '1_000', '4e3' and '4096.0' are integers;
    9007199254740993 stays ...993 (float() would give ...992). Refuses fractions, words
    and values outside [minimum, maximum], the too-large ones before they are built."""
    parts = decimal_parts(str(text))
    if parts is None or (parts[2] < 0 and parts[1]):
        raise SizingError(f"{name} ({show(text)}) must be an integer")
    sign, digits, exponent = parts
    if len(digits) + exponent > len(str(max(abs(minimum), abs(maximum)))):
        raise SizingError(_int_message(name, show(text), minimum, maximum))
    return require_int(name, sign * int(digits or "0") * 10**exponent, minimum, maximum)


def typed_float(text: str) -> float | None:
    """A number as typed -> float, or None when it is not one. Digits are ASCII 0-9 only, as for
    integers (parse_int): Python's float() would also read Arabic-Indic or full-width digits
    ('٣' = 3), which no other option takes. 'nan' and 'inf' are read (callers refuse them)."""
    cleaned = str(text).strip().replace("_", "")
    if not cleaned.isascii():
        return None
    try:
        return float(cleaned)
    except ValueError:
        return None


def parse_float(name: str, text: str) -> float:
    """A typed real number, finite: 'inf', 'nan' and '1e400' (a float overflow) are refused."""
    value = typed_float(text)
    if value is None:
        raise SizingError(f"{name} ({show(text)}) must be a number (digits 0-9)")
    if not math.isfinite(value):
        raise SizingError(f"{name} ({show(text)}) must be a finite number")
    return value
