"""The `sizing` command. Commands parse, call one function, render. Heavy modules (torch,
pandas, fvcore) are imported only inside the commands that need them."""

from __future__ import annotations

import dataclasses
import importlib
import sys

import click

from .cli_common import FORMATS, UserError, model_options, positive_int, quantity, resolve_model
from .flops import ATTENTION_CONVENTIONS, RECOMPUTE_MODES
from .hardware import DTYPES, GPUS, get_gpu
from .presets import PRESETS
from .render import csv_text, table
from .units import format_int, format_si


class LazyGroup(click.Group):
    """A group whose heavier commands live in their own modules and are imported only when
    run or listed (`sizing estimate` never loads verify, memory, report or profile code)."""

    lazy_commands = {"memory": "cli_memory", "profile": "cli_profile", "report": "cli_report", "verify": "cli_verify"}

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_commands))

    def get_command(self, ctx, name):
        if name in self.lazy_commands and name not in self.commands:
            module = importlib.import_module(f".{self.lazy_commands[name]}", __package__)
            self.add_command(getattr(module, name))
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="transformer-sizing")
def main():
    """How big is this transformer, what will it cost to train, will it fit?

    Exact parameter counts, FLOPs per token and training cost from an architecture config.
    Start with:  sizing estimate --preset llama2-7b
    """


@main.command()
@model_options
@click.option("--seq-len", "-T", type=int, help="Tokens per sequence (default: the preset's training context).")
@click.option("--attention", type=click.Choice(ATTENTION_CONVENTIONS), default="full", show_default=True,
              help="full: T keys per query; causal: T(T+1)/2 pairs per sequence.")
@click.option("--recompute", type=click.Choice(RECOMPUTE_MODES), default="none", show_default=True,
              help="Activation recomputation: full adds one forward of the blocks.")
@click.option("--tokens", metavar="N", help="Training tokens, e.g. 2T, 300B, 1.4e12 (default: published).")
@click.option("--gpu", default="a100-80gb", show_default=True, help="GPU name (see `sizing gpus`).")
@click.option("--dtype", type=click.Choice(DTYPES), help="Peak rate to use (default: bf16, else the GPU's first).")
@click.option("--mfu", type=float, default=0.4, show_default=True, help="Model FLOPs utilisation, in (0, 1].")
@click.option("--gpus", "num_gpus", type=int, default=1, show_default=True, help="GPUs, for wall-clock days.")
@click.option("--price", type=float, metavar="USD", help="Price per GPU-hour, for the cost.")
@click.option("--memory/--no-memory", "with_memory", default=True, show_default=True,
              help="Include the memory summary (bf16 AdamW training, bf16 inference).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def estimate(preset, config_path, overrides, seq_len, attention, recompute, tokens, gpu, dtype, mfu, num_gpus,
             price, with_memory, fmt):
    """Parameters by component, FLOPs per token and training cost.

    \b
    Example:
      sizing estimate --preset llama2-7b
      sizing estimate --preset llama2-7b --tokens 2T --gpu h100 --mfu 0.45 --gpus 1024 --price 2.5
      sizing estimate --config config.json --seq-len 8192 --attention causal --format json
    """
    from .estimate import estimate as run_estimate

    model = resolve_model(preset, config_path, overrides)
    if seq_len is None and model.preset is None:
        raise UserError("--seq-len is needed for a model that is not a preset (e.g. --seq-len 4096)")
    positive_int(seq_len, "--seq-len")
    positive_int(num_gpus, "--gpus")
    n_tokens = quantity(tokens, "--tokens")
    if not 0 < mfu <= 1:
        raise UserError(f"--mfu ({mfu:g}) must be in (0, 1], e.g. 0.4")
    if price is not None and price < 0:
        raise UserError(f"--price ({price:g}) must be >= 0 USD per GPU-hour")
    try:
        gpu_entry = get_gpu(gpu)
        if dtype is not None:
            gpu_entry.peak_flops_per_second(dtype)
    except KeyError as exc:
        raise UserError(exc.args[0]) from None
    # A preset with --set overrides keeps its context, published tokens and source as defaults.
    target = dataclasses.replace(model.preset, config=model.config) if model.preset else model.config
    est = run_estimate(target, seq_len=seq_len or model.preset.context, attention=attention, recompute=recompute,
                       tokens=n_tokens, gpu=gpu_entry.key, dtype=dtype, mfu=mfu, num_gpus=num_gpus,
                       price_per_gpu_hour=price, name=model.name)
    if with_memory:
        est = _with_memory(est, gpu_entry.key)
    from .show import render_estimate

    click.echo(render_estimate(est, fmt), nl=False)


def _with_memory(est, gpu_key):
    from .memory import summary_for_estimate  # imported here: only when the summary is asked for

    return dataclasses.replace(est, memory=summary_for_estimate(est.config, est.flops.seq_len, gpu_key))


@main.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def presets(fmt):
    """List the presets with their parameter counts, context and source."""
    from .params import active_params, total_params

    headers = ["name", "family", "params", "active", "context", "tokens", "published", "source"]
    rows = []
    for p in PRESETS.values():
        total, active = total_params(p.config), active_params(p.config)
        published = format_int(p.published_params) if p.published_params else (
            f"~{format_si(p.published_params_rounded)}" if p.published_params_rounded else "")
        rows.append([p.name, p.family, format_int(total) if fmt != "table" else format_si(total),
                     format_si(active) if active != total else "", p.context,
                     format_si(p.training_tokens) if p.training_tokens else "", published, p.source])
    _echo_rows(headers, rows, fmt, json_rows=[
        dict(name=p.name, family=p.family, params=total_params(p.config), active=active_params(p.config),
             context=p.context, training_tokens=p.training_tokens, published_params=p.published_params,
             published_params_rounded=p.published_params_rounded, source=p.source, hf_id=p.hf_id,
             config=p.config.to_dict()) for p in PRESETS.values()])


@main.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def gpus(fmt):
    """List the GPUs: dense peak TFLOP/s per dtype, memory and bandwidth."""
    headers = ["name", "gpu"] + [f"{d} TFLOP/s" for d in DTYPES] + ["memory GiB", "TB/s"]
    rows = [[g.key, g.name] + [f"{g.peak_tflops[d]:g}" if d in g.peak_tflops else "" for d in DTYPES]
            + [f"{g.memory_gib:g}", f"{g.bandwidth_tbs:g}"] for g in GPUS.values()]
    _echo_rows(headers, rows, fmt, json_rows=[
        dict(name=g.key, gpu=g.name, peak_tflops=g.peak_tflops, memory_gib=g.memory_gib,
             bandwidth_tbs=g.bandwidth_tbs, source=g.source) for g in GPUS.values()])


def _echo_rows(headers, rows, fmt, json_rows):
    if fmt == "json":
        import json

        click.echo(json.dumps(json_rows, indent=2))
    elif fmt == "csv":
        click.echo(csv_text(headers, rows), nl=False)
    else:
        click.echo(table(headers, rows, fmt))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
