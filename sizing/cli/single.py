"""The planning commands' (compare, sweep, plan) single-value options, with their defaults shown
in the help. A repeat is refused for every command by the command group (cli/repeats.py)."""

from __future__ import annotations

from typing import Any

import click


def one_value_option(*decls: str, default: Any = None, help: str = "", **kwargs):
    """click.option with the default shown in the help."""
    return click.option(*decls, default=default, show_default=default is not None, help=help, **kwargs)
