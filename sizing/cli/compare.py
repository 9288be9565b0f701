"""`sizing compare`: several models side by side, one row each, under one workload."""

from __future__ import annotations

import click

from sizing.cli.common import UserError
from sizing.cli.option_layer import option
from sizing.validate import SizingError
from sizing.vocabulary import DEFAULT_GPU, DEFAULT_MFU

# What the table and markdown show; CSV and JSON carry every column of sizing.rows.COLUMNS.
VIEW = [
    "model",
    "params_total",
    "params_active",
    "seq_len",
    "training_flops_per_token",
    "tokens",
    "training_flops",
    "gpu_hours",
    "days",
    "cost_usd",
    "inference_memory_bytes",
    "inference_fits",
    "training_memory_bytes",
    "training_fits",
]


@click.command()
@option("preset", dest="presets", multiple=True, help="A preset (repeatable).")
@option("config", dest="configs", multiple=True, help="A config.json or this tool's JSON (repeatable).")
@option("seq_len")
@option("attention")
@option("recompute", default=None, help="Activation recomputation.  [default: none; with --gpus, the search's]")
@option("tokens", help="Training tokens, e.g. 2T (default: published).")
@option("gpu", default=DEFAULT_GPU)
@option("dtype")
@option("mfu", help=f"A constant whole-run MFU instead of the step model.  [default: as estimate: with --gpus the "
        f"step model's, else {DEFAULT_MFU}, assumed]")  # fmt: skip
@option("gpus", dest="num_gpus", help="GPUs: the step model's layout search, and wall-clock days.  [default: 1 GPU "
        "for the days, MFU assumed]")  # fmt: skip
@option("price")
@option("format")
def compare(presets, configs, seq_len, attention, recompute, tokens, gpu, dtype, mfu, num_gpus, price, fmt):
    """Several models side by side: params, FLOPs, training cost and memory, one row each.

    Any mix of --preset and --config, each repeatable (presets first, then configs, each in the
    order given). With --seq-len every model runs at that T; without it each runs at its own
    context (a preset's training context, a config's max_position_embeddings) and the output
    says so. Memory: bf16-mixed AdamW at micro-batch 1 without ZeRO (training), bf16 weights and
    KV cache at T, batch 1 (inference), on one GPU.

    \b
    Example:
      sizing compare -p llama2-7b -p mistral-7b -p llama3-8b --seq-len 4096 --tokens 2T --gpu h100
      sizing compare -p gpt3-175b --config config.json --format csv
    """
    from sizing.plan import compare as run_compare
    from sizing.render import render_rows

    models = list(presets) + list(configs)
    if not models:
        raise UserError("no model given: use --preset NAME and/or --config PATH (each repeatable)")
    try:
        result = run_compare(
            models,
            seq_len=seq_len,
            attention=attention,
            recompute=recompute,
            tokens=tokens,
            gpu=gpu,
            dtype=dtype,
            mfu=mfu,
            num_gpus=num_gpus,
            price_per_gpu_hour=price,
        )
    except SizingError as exc:
        raise UserError(str(exc)) from None
    notes = [result.context_note, _workload_note(result)]
    if any(e.training is None for e in result.estimates):
        notes.append("'-' in training columns: no published token count; pass --tokens (e.g. --tokens 2T)")
    text = render_rows(result.rows(), fmt, VIEW, notes, extra={"seq_len": result.seq_len})
    click.echo(text, nl=False)


def _workload_note(result) -> str:
    fl = result.estimates[0].flops
    t = next((e.training for e in result.estimates if e.training is not None), None)
    gpu = result.estimates[0].memory.training.gpu
    first = next((e for e in result.estimates if e.training is not None), None)
    where = f"{t.gpu.key} {t.dtype}, {t.run.num_gpus} GPU(s), MFU {first.mfu_source}" if t else gpu
    return f"attention {fl.attention}, recompute {fl.recompute}; {where}; memory per GPU (1 GPU, no ZeRO)"
