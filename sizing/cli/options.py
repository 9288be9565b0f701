"""Click option types whose bad values end in one `Error:` line and exit code 2 (never
click's usage block, never a traceback). They call sizing.validate, the same checks the
Python API runs, so the CLI and the API accept exactly the same values."""

from __future__ import annotations

import click

from ..validate import MAX_COUNT, SizingError, require_choice, require_int, require_number, show
from .common import UserError


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
    """An integer in [minimum, maximum], parsed exactly (never through float)."""

    name = "integer"

    def __init__(self, option: str, minimum: int = 1, maximum: int = MAX_COUNT):
        self.option, self.minimum, self.maximum = option, minimum, maximum

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip().replace("_", "")
            number = int(text) if text.lstrip("+-").isdigit() and len(text) <= 40 else None
        try:
            if number is None:
                raise SizingError(f"{self.option} ({show(str(value))}) must be an integer >= {self.minimum}")
            return require_int(self.option, number, self.minimum, self.maximum)
        except SizingError as exc:
            raise UserError(str(exc)) from None


class Number(click.ParamType):
    """A finite real number in bounds (no nan, no inf, no overflow)."""

    name = "number"

    def __init__(self, option: str, minimum: float | None = 0, maximum: float = 1e30, exclusive_minimum: bool = True,
                 what: str | None = None):
        self.option, self.minimum, self.maximum = option, minimum, maximum
        self.exclusive_minimum, self.what = exclusive_minimum, what

    def convert(self, value, param, ctx):
        try:
            number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else \
                float(str(value).strip().replace("_", ""))
        except ValueError:
            number = None
        try:
            if number is None:
                raise SizingError(f"{self.option} ({show(str(value))}) must be a number")
            return require_number(self.option, number, self.minimum, self.maximum,
                                  exclusive_minimum=self.exclusive_minimum, what=self.what)
        except SizingError as exc:
            raise UserError(str(exc)) from None
