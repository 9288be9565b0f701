"""Parsing and formatting of quantities. Counts of tokens to train on use SI prefixes (15T =
15 x 10^12, B = 1e9); sequence and context lengths use K = 1024 and M = 1024^2, as model cards
do (128K = 131,072; Llama 4 Scout's 10M = 10,485,760). Bytes are shown in GiB (2**30)."""

from __future__ import annotations

import math
import re

from sizing.validate import MAX_SEQ_LEN, MAX_TOKENS, SizingError, decimal_parts, show

SI_EXPONENTS = {"": 0, "K": 3, "M": 6, "B": 9, "G": 9, "T": 12, "P": 15}  # suffix -> power of ten
GIB = 2**30
_QUANTITY = re.compile(r"^\s*([0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?)\s*([KMBGTP]?)\s*$", re.IGNORECASE)


class QuantityError(SizingError):
    pass


def parse_quantity(text: str, name: str = "quantity", maximum: int = MAX_TOKENS) -> int:
    """'2T', '300B', '1.4e12', '2_000_000_000_000' -> an exact integer, at most `maximum`.
    Suffixes are SI: K 1e3, M 1e6, B/G 1e9, T 1e12, P 1e15. Exact at any number of digits
    (no float, no 28-digit Decimal context), and a number past `maximum` is refused from its
    digit count before it is built, so '1e999999' answers at once."""
    match = _QUANTITY.match(str(text))
    parts = decimal_parts(match.group(1)) if match else None
    if parts is None:
        raise QuantityError(
            f"{name} ({show(text)}) is not a quantity; use a number with an optional K/M/B/T/P suffix, "
            "e.g. 2T, 300B, 1.4e12"
        )
    _, digits, exponent = parts  # the pattern has no sign: a quantity is never negative
    exponent += SI_EXPONENTS[match.group(2).upper()]
    if digits and exponent < 0:
        raise QuantityError(f"{name} ({show(text)}) must be a whole number")
    value = int(digits or "0") * 10**exponent if len(digits) + exponent <= len(str(maximum)) else None
    if value is None or value > maximum:
        power_of_ten = str(maximum).rstrip("0") == "1"
        bound = f"1e{len(str(maximum)) - 1}" if power_of_ten else f"{maximum:,}"
        raise QuantityError(f"{name} ({show(text)}) must be at most {bound}")
    return value


LENGTH_EXPONENTS = {"": 0, "K": 1, "M": 2}  # suffix -> power of 1024
LENGTH_NOTE = "K = 1024: 128K = 131,072"  # what --help says beside every length option
QUANTITY_NOTE = "SI: 15T = 15 x 10^12, 300B = 3 x 10^11"  # and beside every token budget
_LENGTH = re.compile(r"^\s*([+-]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?)\s*([KM]?)\s*$", re.IGNORECASE)


def parse_length(text: str, name: str = "length", maximum: int = MAX_SEQ_LEN) -> int:
    """A sequence or context length in tokens: '4096', '128K' (131,072), '1M' (1,048,576),
    '1.5K' (1,536), '8e3' -> an exact integer, at most `maximum`. K and M are powers of 1024,
    as model cards state context lengths; a fraction of a token is refused, and a number past
    `maximum` is refused from its digit count before it is built."""
    match = _LENGTH.match(str(text))
    parts = decimal_parts(match.group(1)) if match else None
    if parts is None:
        raise QuantityError(
            f"{name} ({show(text)}) is not a length; use a number of tokens with an optional K (1024) or M (1024^2) "
            "suffix, e.g. 4096, 128K"
        )
    sign, digits, exponent = parts  # a negative length is parsed, for the caller to refuse as such
    power = LENGTH_EXPONENTS[match.group(2).upper()]
    if len(digits) + exponent > len(str(maximum)):  # before any big integer is built
        raise QuantityError(f"{name} ({show(text)}) must be at most {maximum:,}")
    # digits have no trailing zero, so 10^-exponent must divide 1024^power = 2^(10 power): -exponent <= 10 power
    whole = exponent >= 0 or -exponent <= 10 * power
    scaled = int(digits or "0") * 1024**power if whole else 0
    if not whole or (exponent < 0 and scaled % 10**-exponent):  # e.g. 1.5, 0.1K
        raise QuantityError(f"{name} ({show(text)}) must be a whole number of tokens")
    value = sign * (scaled * 10**exponent if exponent >= 0 else scaled // 10**-exponent)
    if value > maximum:
        raise QuantityError(f"{name} ({show(text)}) must be at most {maximum:,}")
    return value


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
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
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
