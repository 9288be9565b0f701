"""The `sizing` command. Commands parse, call one function, render. Each command lives in its own
module and is imported only when run, so `sizing estimate` never loads verify, memory, report or
profile code (and never torch, pandas, numpy or fvcore), and `sizing --help` lists the commands
from their stored one-line help without importing any of them (tests/test_cli_lazy.py checks the
stored lines against the commands' own)."""

from __future__ import annotations

import importlib
import sys
from typing import ClassVar

import click

from sizing import __version__
from sizing.cli.common import UserError
from sizing.cli.repeats import reject_repeated_options
from sizing.validate import SizingError, show_arg


class LazyGroup(click.Group):
    """A group whose commands live in their own modules (command name -> module, attribute)."""

    lazy_commands: ClassVar[dict[str, tuple[str, str]]] = {
        "calibrate": ("calibrate", "calibrate"),
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

    # What `sizing --help` shows for each command: the command's own short help (its docstring's
    # first sentence), stored here so that listing the commands imports none of their modules.
    command_help: ClassVar[dict[str, str]] = {
        "calibrate": "Fit the step model's per-stack overheads to measured steps (JSONL, JSON or CSV rows: preset or "
        "config, gpu, gpus, seq_len, global_batch, layout fields, precision, recompute, stack, and one of "
        "step_seconds, tokens_per_second, tokens_per_second_per_gpu or a torchtitan / Megatron log line).",
        "compare": "Several models side by side: params, FLOPs, training cost and memory, one row each.",
        "estimate": "Parameters by component, FLOPs per token and training cost.",
        "hybrid": "A hybrid SSM / linear-attention model: parameters, layer pattern, FLOPs, and memory against "
        "context beside an all-attention model of the same shape.",
        "gpus": "List the GPUs: dense peak TFLOP/s per dtype, memory, HBM bandwidth, and the scale-up (NVLink) "
        "and scale-out (network) bandwidths per GPU per direction.",
        "memory": "Training memory per GPU (or inference memory) and the largest batch that fits.",
        "parallel": "Per-GPU memory, communication and step time of a parallel layout, or the smallest that fits.",
        "plan": "Compute-optimal sizing: N_opt, D_opt and predicted loss for a budget, then shapes.",
        "presets": "List the presets with their parameter counts, context and source.",
        "profile": "Time training steps of the reference model; step time, TFLOP/s, MFU and peak memory beside "
        "the predictions (needs torch; a CUDA GPU unless --device cpu).",
        "report": "Write the reports: an index with every preset, one sheet per preset, published runs vs "
        "predictions, counting conventions and plots.",
        "serve-layout": "Serving layouts: pure TP, EP with DP attention (MoE, DeepSeek-V3 style), TP x PP across "
        "nodes.",
        "speculate": "Speculative decoding: expected tokens per target step, speedup and the break-even "
        "acceptance rate.",
        "serve": "Serving on the roofline: time to first token, time per output token, tokens/s, $/M tokens.",
        "vision": "A vision-language model whole: language model + vision tower + projector, the tokens an image "
        "adds, the encoder FLOPs per image and the prefill FLOPs of a prompt with images.",
        "sweep": "A grid over config and run fields: one row of params, FLOPs, GPU-hours, days and cost per point.",
        "ui": "The calculator in a browser: every question of the CLI on one page, with charts.",
        "verify": "Check the formulas against the PyTorch reference model (needs torch).",
    }

    def format_commands(self, ctx, formatter):
        """click's command list, from `command_help` where a command is stored there and not yet
        loaded (a command without a stored line is imported, as click would)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            if name in self.command_help and name not in self.commands:
                # click shortens a stored line as it would the command's own help
                stand_in = click.Command(name, help=self.command_help[name])
                rows.append((name, stand_in.get_short_help_str(limit)))
                continue
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

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
            import difflib  # only for a mistyped command

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


def _add_data_files(kind: str, paths: tuple[str, ...]) -> None:
    """--gpu-file / --presets-file, read before any command module loads its tables."""
    from sizing.inputs import add_user_file

    try:
        for path in paths:
            add_user_file(kind, path)
    except SizingError as exc:
        raise UserError(str(exc)) from None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, package_name="transformer-sizing")
@click.option(
    "--gpu-file",
    metavar="FILE",
    multiple=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, param, paths: _add_data_files("gpus", paths),
    help="A JSON file of your own GPUs, read beside the built-in table (format: docs/data.md).",
)
@click.option(
    "--presets-file",
    metavar="FILE",
    multiple=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, param, paths: _add_data_files("presets", paths),
    help="A JSON file of your own presets, read beside the built-in ones (format: docs/data.md).",
)
def main():
    """How big is this transformer, what will it cost to train, will it fit?

    Exact parameter counts, FLOPs per token and training cost from an architecture config.
    Start with:  sizing estimate --preset llama2-7b
    """


# The option layer as data, for the browser form (sizing.ui): loaded on first use (PEP 562).
_LAZY = {"OPTION_GROUPS": "sizing.cli.specs", "SPECS": "sizing.cli.option_layer", "command_options": "sizing.cli.specs"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
