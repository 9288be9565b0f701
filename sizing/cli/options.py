"""Click option types whose bad values end in one `Error:` line and exit code 2 (never
click's usage block, never a traceback). They call sizing.validate, the same checks the
Python API runs, so the CLI and the API accept exactly the same values."""

from __future__ import annotations

import click

from sizing.cli.common import UserError, quantity
from sizing.validate import (
    MAX_COUNT,
    MAX_FLOAT,
    MAX_PRICE,
    MAX_TOKENS,
    MFU_WHAT,
    MIN_MFU,
    PRICE_WHAT,
    SizingError,
    parse_int,
    require_choice,
    require_number,
    show,
    show_arg,
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
        try:
            number = (
                value
                if isinstance(value, (int, float)) and not isinstance(value, bool)
                else float(text.replace("_", ""))
            )
        except ValueError:
            number = None
        try:
            if number is None:
                raise SizingError(f"{self.option} ({show(text)}) must be a number")
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


class Quantity(click.ParamType):
    """A positive count with an optional SI suffix (2T, 300B, 1.4e12), exact, at most `maximum`."""

    name = "quantity"

    def __init__(self, option: str, maximum: int = MAX_TOKENS):
        self.option, self.maximum = option, maximum

    def convert(self, value, param, ctx):
        return quantity(str(value), self.option, self.maximum)


# The run options several commands share, checked by the same functions the API calls
# (sizing.validate.require_mfu / require_price). An MFU below MIN_MFU would overflow the
# GPU-hours of a large run to infinity.
MFU_TYPE = Number("--mfu", MIN_MFU, 1, exclusive_minimum=False, what=MFU_WHAT)
PRICE_TYPE = Number("--price", 0, MAX_PRICE, exclusive_minimum=False, what=PRICE_WHAT)
