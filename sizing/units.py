"""Parsing and formatting of quantities. Counts use SI prefixes (B = 1e9), never 1024;
bytes are shown in GiB (2**30)."""

from __future__ import annotations

import math
import re

from .validate import SizingError

SI_SUFFIXES = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12, "P": 10**15}
GIB = 2**30
_QUANTITY = re.compile(r"^\s*([0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?)\s*([KMBGTP]?)\s*$", re.I)


class QuantityError(SizingError):
    pass


def parse_quantity(text: str, name: str = "quantity") -> int:
    """'2T', '300B', '1.4e12', '2_000_000_000_000' -> an exact integer.
    Suffixes are SI: K 1e3, M 1e6, B/G 1e9, T 1e12, P 1e15."""
    match = _QUANTITY.match(str(text))
    if not match:
        raise QuantityError(
            f"{name} ({text!r}) is not a quantity; use a number with an optional K/M/B/T/P suffix, e.g. 2T, 300B, 1.4e12"
        )
    number, suffix = match.group(1).replace("_", ""), match.group(2).upper()
    from decimal import Decimal, InvalidOperation

    try:
        value = Decimal(number) * SI_SUFFIXES[suffix]
    except InvalidOperation:
        raise QuantityError(f"{name} ({text!r}) is not a number") from None
    if value != value.to_integral_value():
        raise QuantityError(f"{name} ({text!r}) must be a whole number, got {value}")
    return int(value)


def format_si(value: float, digits: int = 3) -> str:
    """6738415616 -> '6.74B'; FLOPs and counts alike (T = 1e12, never 2**40)."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    value = abs(value)
    for suffix, scale in (("E", 1e18), ("P", 1e15), ("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if value >= scale:
            return f"{sign}{_sig(value / scale, digits)}{suffix}"
    return f"{sign}{_sig(value, digits)}"


def _sig(value: float, digits: int) -> str:
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(value)))))
    return f"{value:.{decimals}f}"


def format_int(value: int) -> str:
    return f"{value:,}"


def format_gib(n_bytes: float, decimals: int = 2) -> str:
    return f"{n_bytes / GIB:,.{decimals}f} GiB"


def format_float(value: float) -> str:
    """Large floats in scientific notation (8.09e+22), small ones plainly."""
    if value == 0:
        return "0"
    if abs(value) >= 1e6 or abs(value) < 1e-3:
        return f"{value:.3e}"
    return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
