"""A single-value option given twice is an error, in every command.

click keeps the last value of a repeated option and says nothing, so `--seq-len 8 --seq-len 16`
would quietly size T = 16. Options declared `multiple=True` (--set, verify's --preset) may
repeat; everything else may appear once. Checked on the raw arguments, before click parses
them, by the command group (sizing/cli/__init__.py).
"""

from __future__ import annotations

import click

from sizing.cli.common import UserError
from sizing.validate import show_arg


def _single_value_spellings(command: click.Command) -> dict[str, str]:
    """Every spelling (--seq-len, -T, --no-compile) of an option that may appear once -> its
    canonical name; a boolean flag's on and off spellings name the same option."""
    out: dict[str, str] = {}
    for param in command.params:
        if not isinstance(param, click.Option) or param.multiple or param.count:
            continue
        spellings = list(param.opts) + list(param.secondary_opts)
        for spelling in spellings:
            out[spelling] = "/".join(spellings)
    return out


def _spelling(arg: str, spellings: dict[str, str]) -> str | None:
    """The option spelling an argument uses: `--seq-len`, `--seq-len=8`, `-T` or `-T8`."""
    if arg in spellings:
        return arg
    if arg.startswith("--") and "=" in arg:
        head = arg.split("=", 1)[0]
        return head if head in spellings else None
    if len(arg) > 2 and arg[0] == "-" and arg[1] != "-" and arg[:2] in spellings:
        return arg[:2]
    return None


def reject_repeated_options(command: click.Command, args: list[str]) -> None:
    """UserError naming the first option (with its values) given more than once."""
    spellings = _single_value_spellings(command)
    seen: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":  # what follows is positional
            break
        spelling = _spelling(arg, spellings)
        if spelling is not None:
            option = spellings[spelling]
            takes_value = not _is_flag(command, spelling)
            attached = arg != spelling
            value = (
                arg[len(spelling) :].lstrip("=")
                if attached
                else (args[i + 1] if takes_value and i + 1 < len(args) else "")
            )
            seen.setdefault(option, []).append(value if takes_value else arg)
            if len(seen[option]) == 2:
                values = ", ".join(show_arg(v) for v in seen[option])
                raise UserError(f"{option.split('/')[0]} given twice ({values}); give it once")
            i += 1 if attached or not takes_value else 2
            continue
        i += 1


def _is_flag(command: click.Command, spelling: str) -> bool:
    for param in command.params:
        if isinstance(param, click.Option) and spelling in (*param.opts, *param.secondary_opts):
            return param.is_flag
    return False
