"""Options that take one value, declared `multiple` so that a second occurrence is seen and
refused (one `Error:` line, exit 2) instead of silently replacing the first. Used by the
planning commands (compare, sweep, plan)."""

from __future__ import annotations

from typing import Any

import click

from .common import UserError


def single(default: Any = None):
    """A click callback: the one value given (converted by the option's type), else `default`."""

    def callback(ctx: click.Context, param: click.Parameter, values: tuple) -> Any:
        if len(values) > 1:
            shown = ", ".join(str(v) for v in values)
            raise UserError(f"{param.opts[0]} given {len(values)} times ({shown}); give it once")
        return values[0] if values else default

    return callback


def one_value_option(*decls: str, default: Any = None, help: str = "", **kwargs):
    """click.option for a single-value option that refuses a repeat; the default is shown in the help."""
    shown = f" [default: {default}]" if default is not None else ""
    return click.option(*decls, multiple=True, callback=single(default), help=help + shown, **kwargs)
