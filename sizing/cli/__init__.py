"""The `sizing` command. Commands parse, call one function, render. Each command lives in its own
module and is imported only when run or listed, so `sizing estimate` never loads verify,
memory, report or profile code (and never torch, pandas, numpy or fvcore)."""

from __future__ import annotations

import difflib
import importlib
import sys
from typing import ClassVar

import click

from ..validate import SizingError, show_arg
from .common import UserError
from .repeats import reject_repeated_options


class LazyGroup(click.Group):
    """A group whose commands live in their own modules (command name -> module, attribute)."""

    lazy_commands: ClassVar[dict[str, tuple[str, str]]] = {
        "compare": ("compare", "compare"),
        "estimate": ("estimate", "estimate"),
        "gpus": ("listing", "gpus"),
        "hybrid": ("hybrid", "hybrid"),
        "memory": ("memory", "memory"),
        "parallel": ("parallel", "parallel"),
        "plan": ("plan", "plan"),
        "presets": ("listing", "presets"),
        "profile": ("profile", "profile"),
        "report": ("report", "report"),
        "serve": ("serve", "serve"),
        "serve-layout": ("serve_layout", "serve_layout"),
        "speculate": ("speculate", "speculate"),
        "sweep": ("sweep", "sweep"),
        "ui": ("ui", "ui"),
        "verify": ("verify", "verify"),
        "vision": ("vision", "vision"),
    }

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_commands))

    def get_command(self, ctx, name):
        if name in self.lazy_commands and name not in self.commands:
            module_name, attribute = self.lazy_commands[name]
            module = importlib.import_module(f".{module_name}", __package__)
            self.add_command(getattr(module, attribute), name)
        return super().get_command(ctx, name)

    def resolve_command(self, ctx, args):
        typed = args[0] if args else ""
        if typed and not typed.startswith("-") and self.get_command(ctx, typed) is None:
            close = difflib.get_close_matches(typed.lower(), self.list_commands(ctx), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}?" if close else f"the commands: {', '.join(self.list_commands(ctx))}"
            raise UserError(f"no command {show_arg(typed)}; {hint}")
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            reject_repeated_options(command, rest)
        return name, command, rest

    def invoke(self, ctx):
        """Bad input that a command did not turn into a UserError itself still ends as one
        `Error:` line and exit 2: sizing raises SizingError for every bad value, and click's
        usage errors (an unknown option, a missing value) are cut to their message."""
        try:
            return super().invoke(ctx)
        except SizingError as exc:
            raise UserError(str(exc)) from None
        except click.UsageError as exc:  # unknown option, missing value: one line, not click's usage block
            raise UserError(exc.format_message()) from None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="transformer-sizing")
def main():
    """How big is this transformer, what will it cost to train, will it fit?

    Exact parameter counts, FLOPs per token and training cost from an architecture config.
    Start with:  sizing estimate --preset llama2-7b
    """


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
