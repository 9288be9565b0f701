"""`sizing estimate`: parameters by component, FLOPs per token, training cost and a memory summary."""

from __future__ import annotations

import dataclasses

import click

from ..flops import ATTENTION_CONVENTIONS, RECOMPUTE_MODES
from ..hardware import DTYPES, get_gpu
from .common import FORMATS, UserError, model_options, positive_int, quantity, resolve_model


@click.command()
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
    from ..estimate import estimate as run_estimate

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
    from ..render.estimate import render_estimate

    click.echo(render_estimate(est, fmt), nl=False)


def _with_memory(est, gpu_key):
    from ..memory import summary_for_estimate  # imported here: only when the summary is asked for

    return dataclasses.replace(est, memory=summary_for_estimate(est.config, est.flops.seq_len, gpu_key))
