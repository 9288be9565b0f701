"""`sizing estimate`: parameters by component, FLOPs per token, training cost and a memory summary."""

from __future__ import annotations

import dataclasses

import click

from sizing.cli.common import FORMATS, UserError, model_options, resolve_model
from sizing.cli.options import GPU_NAME, MFU_TYPE, PRICE_TYPE, Choice, Count, Length, Number, Quantity
from sizing.inputs import default_gpu_for, get_gpu
from sizing.training import DEFAULT_KG_CO2_PER_KWH, DEFAULT_PUE
from sizing.validate import SizingError
from sizing.vocabulary import (
    ATTENTION_CONVENTIONS,
    COMPUTE_DTYPES,
    DEFAULT_ATTENTION,
    DEFAULT_MFU,
    DEFAULT_RECOMPUTE,
    RECOMPUTE_MODES,
)


@click.command()
@model_options
@click.option(
    "--seq-len",
    "-T",
    type=Length("--seq-len"),
    help="Tokens per sequence (default: the preset's training context, or the config's pretraining context).",
)
@click.option(
    "--attention",
    type=Choice("--attention", ATTENTION_CONVENTIONS),
    default=DEFAULT_ATTENTION,
    show_default=True,
    help="full: T keys per query; causal: T(T+1)/2 pairs per sequence.",
)
@click.option(
    "--recompute",
    type=Choice("--recompute", RECOMPUTE_MODES),
    default=DEFAULT_RECOMPUTE,
    show_default=True,
    help="Activation recomputation: full adds one forward of the blocks.",
)
@click.option(
    "--tokens",
    metavar="N",
    type=Quantity("--tokens"),
    help="Training tokens, e.g. 2T, 300B, 1.4e12 (default: published).",
)
@click.option(
    "--gpu",
    type=GPU_NAME,
    help="GPU name (see `sizing gpus`).  [default: h100-sxm, or the preset's published run's GPU]",
)
@click.option(
    "--dtype", type=Choice("--dtype", COMPUTE_DTYPES), help="Peak rate to use (default: bf16, else the GPU's first)."
)
@click.option(
    "--mfu",
    type=MFU_TYPE,
    help=f"Model FLOPs utilisation of the whole run, in (0, 1]. [default: with --gpus and --gpu, the "
    f"predicted MFU of the fastest layout on those GPUs; else {DEFAULT_MFU}]",
)
@click.option(
    "--gpus", "num_gpus", type=Count("--gpus"), help="GPUs, for wall-clock days (and the layout search).  [default: 1]"
)
@click.option(
    "--price",
    type=PRICE_TYPE,
    metavar="USD",
    help="Price per GPU-hour, for the cost.",
)
@click.option(
    "--power",
    "power_watts",
    type=Number("--power", 0, 100_000, exclusive_minimum=False, what="watts per GPU in [0, 100000]"),
    metavar="W",
    help="Power per GPU for the energy line (default: the GPU's TDP; docs/energy.md).",
)
@click.option(
    "--pue",
    type=Number("--pue", 1, 10, exclusive_minimum=False, what="a number in [1, 10]"),
    default=DEFAULT_PUE,
    show_default=True,
    help="Data-centre power usage effectiveness (1.0: GPU power alone, the Llama 2 card's convention).",
)
@click.option(
    "--grid-intensity",
    "grid_kg_co2_per_kwh",
    type=Number("--grid-intensity", 0, 10, exclusive_minimum=False, what="kgCO2eq per kWh in [0, 10]"),
    metavar="KG_PER_KWH",
    help=f"Grid carbon intensity, kgCO2eq/kWh (default: {DEFAULT_KG_CO2_PER_KWH}, implied by the Llama 2 card).",
)
@click.option(
    "--memory/--no-memory",
    "with_memory",
    default=True,
    show_default=True,
    help="Include the memory summary (bf16 AdamW training, bf16 inference).",
)
@click.option("--format", "fmt", type=Choice("--format", FORMATS), default="table", show_default=True)
def estimate(
    preset,
    config_path,
    overrides,
    seq_len,
    attention,
    recompute,
    tokens,
    gpu,
    dtype,
    mfu,
    num_gpus,
    price,
    power_watts,
    pue,
    grid_kg_co2_per_kwh,
    with_memory,
    fmt,
):
    """Parameters by component, FLOPs per token and training cost.

    \b
    Example:
      sizing estimate --preset llama2-7b
      sizing estimate --preset llama2-7b --tokens 2T --gpu h100 --mfu 0.45 --gpus 1024 --price 2.5
      sizing estimate --config config.json --seq-len 8192 --attention causal --format json
    """
    from sizing.estimate import estimate as run_estimate

    model = resolve_model(preset, config_path, overrides)
    seq_len, seq_len_source, gpu_entry = _context_and_gpu(model, config_path, seq_len, gpu, dtype)
    # A preset with --set overrides keeps its context, published tokens and source as defaults.
    target = dataclasses.replace(model.preset, config=model.config) if model.preset else model.config
    mfu, layout_mfu, mfu_source = run_mfu(model.config, seq_len, attention, gpu, gpu_entry, dtype, mfu, num_gpus)
    est = run_estimate(
        target,
        seq_len=seq_len,
        attention=attention,
        recompute=recompute,
        tokens=tokens,
        gpu=gpu_entry.key,
        dtype=dtype,
        mfu=mfu,
        num_gpus=num_gpus or 1,
        price_per_gpu_hour=price,
        name=model.name,
        memory=with_memory,
        power_watts=power_watts,
        pue=pue,
        grid_kg_co2_per_kwh=grid_kg_co2_per_kwh,
    )
    from sizing.render import render_estimate

    est = dataclasses.replace(est, seq_len_source=seq_len_source, mfu_layout=layout_mfu, mfu_source=mfu_source)
    click.echo(render_estimate(est, fmt), nl=False)


def _context_and_gpu(model, config_path, seq_len, gpu, dtype):
    """The sequence length (given, or the model's default and where it came from) and the GPU
    (given, or the default for the preset's published run), checked as the user typed them."""
    try:
        seq_len, seq_len_source = default_seq_len(model, config_path, seq_len)
        model.config.check_context(seq_len, "--seq-len")
        gpu_entry = get_gpu(gpu or default_gpu_for(model.preset.name if model.preset else None))
        if dtype is not None:
            gpu_entry.peak_flops_per_second(dtype)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    return seq_len, seq_len_source, gpu_entry


def run_mfu(cfg, seq_len, attention, gpu, gpu_entry, dtype, mfu, num_gpus):
    """(MFU, the searched layout's LayoutMfu or None, where the MFU came from or None for a
    constant). With --gpus and --gpu and no --mfu: the fastest layout's predicted MFU
    (sizing.parallel.estimate_mfu, imported only then), else the constant with a note."""
    if mfu is not None or num_gpus is None or gpu is None or dtype not in (None, "bf16", "fp16"):
        return mfu or DEFAULT_MFU, None, None
    from sizing.parallel import best_layout_mfu

    found = best_layout_mfu(cfg, seq_len, num_gpus, gpu_entry.key, attention or "full")
    if found is None:
        why = f"no layout on {num_gpus} x {gpu_entry.key} fits or has step-time constants"
        return DEFAULT_MFU, None, f"constant {DEFAULT_MFU:g}: {why}"
    return found.mfu, found, f"predicted for {found.layout}, recompute {found.recompute}"


def default_seq_len(model, config_path: str | None, seq_len: int | None) -> tuple[int, str]:
    """(T, where it came from): --seq-len, else the preset's training context, else the config
    file's pretraining context (sizing.inputs.hf.context: RoPE scaling's original_max_position_embeddings,
    else max_position_embeddings or the field CONTEXT_FIELDS finds)."""
    if seq_len is not None:
        return seq_len, "--seq-len"
    if model.preset is not None:
        return model.preset.context, f"{model.preset.name}'s training context"
    from sizing.inputs.hf import read_config_file

    read = read_config_file(config_path)
    if read.context is None:
        raise UserError(f"--seq-len is needed: {config_path} states no max_position_embeddings (e.g. --seq-len 4096)")
    return read.context, read.context_source(config_path)
