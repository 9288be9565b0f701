"""Click option types whose bad values end in one `Error:` line and exit code 2 (never
click's usage block, never a traceback). They call sizing.validate, the same checks the
Python API runs, so the CLI and the API accept exactly the same values."""

from __future__ import annotations

import click

from sizing.cli.common import UserError, quantity
from sizing.inputs import LENGTH_NOTE, QUANTITY_NOTE, parse_length
from sizing.validate import (
    EFFICIENCY_WHAT,
    LINK_WHAT,
    MAX_COUNT,
    MAX_FLOAT,
    MAX_LINK_GBS,
    MAX_PRICE,
    MAX_RATE,
    MAX_SEQ_LEN,
    MAX_TOKENS,
    MFU_WHAT,
    MIN_EFFICIENCY,
    MIN_LINK_GBS,
    MIN_MFU,
    MIN_RATE,
    PRICE_WHAT,
    RATE_WHAT,
    SizingError,
    parse_int,
    require_choice,
    require_int,
    require_number,
    show,
    show_arg,
    typed_float,
)


class Choice(click.ParamType):
    """One of `choices` (case-insensitive, with aliases such as sdpa -> flash)."""

    def __init__(self, option: str, choices, aliases: dict | None = None):
        self.option, self.choices, self.aliases = option, tuple(choices), aliases or {}
        self.name = "|".join(map(str, self.choices))

    def get_metavar(self, param, ctx=None) -> str:  # click >= 8.2 passes ctx
        return "[" + self.name + "]"

    def convert(self, value, param, ctx):
        text = str(value).strip().lower()
        by_text = {str(c): c for c in self.choices}
        try:
            return by_text[require_choice(self.option, text, tuple(by_text), self.aliases)]
        except SizingError as exc:
            raise UserError(str(exc).replace(repr(text), show(str(value)), 1)) from None


class Name(click.ParamType):
    """A name to look up (a GPU, a preset): the text as given, refused when empty or blank,
    which would otherwise read as "not given" and silently take the default."""

    name = "text"

    def __init__(self, option: str, what: str):
        self.option, self.what = option, what

    def convert(self, value, param, ctx):
        if not str(value).strip():
            raise UserError(f"{self.option} ({show(str(value))}) names nothing: give {self.what}, or leave it out")
        return value


GPU_NAME = Name("--gpu", "a GPU (see `sizing gpus`)")
PRESET_NAME = Name("--preset", "a preset (see `sizing presets`)")
CONFIG_NAME = Name("--config", "a config.json, its directory or a hub id")


class Count(click.ParamType):
    """An integer in [minimum, maximum], parsed exactly (never through float; '4e3' and
    '1_000' are integers, '1.5' is not); a huge one is refused before it is built."""

    name = "integer"

    def __init__(self, option: str, minimum: int = 1, maximum: int = MAX_COUNT):
        self.option, self.minimum, self.maximum = option, minimum, maximum

    def convert(self, value, param, ctx):
        try:
            return parse_int(self.option, value if isinstance(value, str) else str(value), self.minimum, self.maximum)
        except SizingError as exc:
            raise UserError(str(exc)) from None


class Length(click.IntRange):
    """A sequence or context length in tokens, exact: an integer, or with K = 1024 / M = 1024^2
    as model cards state contexts (128K = 131,072; sizing.inputs.units.parse_length). Token
    budgets are Quantity (SI: 15T = 15 x 10^12). A click IntRange only so that every option of
    this type says so in its --help line, where click shows a range."""

    name = "tokens"

    def __init__(self, option: str, minimum: int = 1, maximum: int = MAX_SEQ_LEN):
        super().__init__(minimum, maximum)
        self.option, self.minimum, self.maximum = option, minimum, maximum

    def _describe_range(self) -> str:
        return LENGTH_NOTE

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = parse_length(str(value), self.option, self.maximum)
            except SizingError as exc:
                raise UserError(str(exc)) from None
        try:
            return require_int(self.option, number, self.minimum, self.maximum)
        except SizingError as exc:
            raise UserError(str(exc).replace(f"({number})", f"({show_arg(str(value).strip())})", 1)) from None


class Number(click.ParamType):
    """A finite real number in bounds (no nan, no inf, no overflow)."""

    name = "number"

    def __init__(
        self,
        option: str,
        minimum: float | None = 0,
        maximum: float = MAX_FLOAT,
        exclusive_minimum: bool = True,
        what: str | None = None,
    ):
        self.option, self.minimum, self.maximum = option, minimum, maximum
        self.exclusive_minimum, self.what = exclusive_minimum, what

    def convert(self, value, param, ctx):
        text = str(value).strip()
        number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else typed_float(text)
        try:
            if number is None:
                raise SizingError(f"{self.option} ({show(text)}) must be a number (digits 0-9)")
            return require_number(
                self.option,
                number,
                self.minimum,
                self.maximum,
                shown=show_arg(text),
                exclusive_minimum=self.exclusive_minimum,
                what=self.what,
            )
        except SizingError as exc:
            raise UserError(str(exc)) from None


class Quantity(click.IntRange):
    """A positive count with an optional SI suffix (2T, 300B, 1.4e12), exact, at most `maximum`:
    token budgets, where T is 10^12 (sequence lengths are Length, K = 1024). A click IntRange
    only so that every option of this type says so in its --help line."""

    name = "quantity"

    def __init__(self, option: str, maximum: int = MAX_TOKENS):
        super().__init__(1, maximum)
        self.option, self.maximum = option, maximum

    def _describe_range(self) -> str:
        return QUANTITY_NOTE

    def convert(self, value, param, ctx):
        return quantity(str(value), self.option, self.maximum)


# The run options several commands share, checked by the same functions the API calls
# (sizing.validate.require_mfu / require_price). An MFU below MIN_MFU would overflow the
# GPU-hours of a large run to infinity.
MFU_TYPE = Number("--mfu", MIN_MFU, 1, exclusive_minimum=False, what=MFU_WHAT)
PRICE_TYPE = Number("--price", 0, MAX_PRICE, exclusive_minimum=False, what=PRICE_WHAT)


def efficiency_type(option: str) -> Number:
    """A share of a peak (compute or bandwidth efficiency), checked as sizing.validate.require_efficiency."""
    return Number(option, MIN_EFFICIENCY, 1, exclusive_minimum=False, what=EFFICIENCY_WHAT)


def rate_type(option: str) -> Number:
    """Requests per second, checked as sizing.validate.require_rate."""
    return Number(option, MIN_RATE, MAX_RATE, exclusive_minimum=False, what=RATE_WHAT)


def link_gbs_type(option: str) -> Number:
    """A link's GB/s per direction, checked as sizing.validate.require_link_gbs."""
    return Number(option, MIN_LINK_GBS, MAX_LINK_GBS, exclusive_minimum=False, what=LINK_WHAT)
