"""`sizing estimate`: parameters by component, FLOPs per token, training cost and a memory summary."""

from __future__ import annotations

import dataclasses

import click

from sizing.cli.any_model import answers_whole_models, whole_estimate
from sizing.cli.common import UserError, resolve_model
from sizing.cli.from_file import with_file
from sizing.cli.option_layer import model_options, option
from sizing.inputs import default_gpu_for, get_gpu
from sizing.validate import SizingError
from sizing.vocabulary import DEFAULT_MFU


@click.command()
@with_file
@model_options
@option(
    "seq_len",
    help="Tokens per sequence (default: the preset's training context, or the config's pretraining context: "
    "rope_scaling.original_max_position_embeddings, else max_position_embeddings up to 8,192, else 4,096).",
)
@option("attention")
@option(
    "recompute",
    default=None,
    help="Activation recomputation: selective (the attention core) or full (one more forward of the blocks).  "
    "[default: none; with --gpus, the layout search's choice]",
)
@option("tokens", help="Training tokens, e.g. 2T, 300B, 1.4e12 (default: published).")
@option("gpu", help="GPU name (see `sizing gpus`).  [default: h100-sxm, or the preset's published run's GPU]")
@option("dtype")
@option(
    "mfu",
    help="A constant whole-run MFU in (0, 1] instead of the step model.  [default: with --gpus, the step model's "
    f"for the fastest layout that fits (as `sizing parallel --gpus N`); without, {DEFAULT_MFU}, assumed]",
)
@option(
    "gpus",
    dest="num_gpus",
    help="GPUs: the layout search of the step model, and wall-clock days.  [default: none: 1 GPU for the days, "
    "MFU assumed]",
)
@option("price")
@option("power")
@option("pue")
@option("grid_intensity")
@option("memory", help="Include the memory summary (bf16 AdamW training, bf16 inference).")
@option("mtp_depth")
@option("calibration")
@option("run_remote_code")
@option("format")
@answers_whole_models(lambda command, source, run_remote_code, kwargs: whole_estimate(source, run_remote_code, kwargs))
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
    mtp_depth,
    calibration,
    fmt,
):
    """Parameters by component, FLOPs per token and training cost.

    The training cost's MFU is the step model's with --gpus N (the fastest layout that fits on N
    GPUs at 4M tokens per step: the plan `sizing parallel --gpus N` prints, named in the output),
    --mfu X when given, else 0.4, assumed and said so.

    \b
    Example:
      sizing estimate --preset llama2-7b
      sizing estimate --preset llama3-70b --tokens 15T --gpu h100 --gpus 2048
      sizing estimate --preset llama2-7b --tokens 2T --gpu h100 --mfu 0.45 --gpus 1024 --price 2.5
      sizing estimate --config config.json --seq-len 8192 --attention causal --format json
    """
    from sizing.estimate import estimate as run_estimate

    model = with_mtp_depth(resolve_model(preset, config_path, overrides), mtp_depth)
    seq_len, seq_len_source, gpu_entry = _context_and_gpu(model, config_path, seq_len, gpu, dtype)
    # A preset with --set overrides keeps its context, published tokens and source as defaults.
    target = dataclasses.replace(model.preset, config=model.config) if model.preset else model.config
    est = run_estimate(
        target,
        seq_len=seq_len,
        attention=attention,
        recompute=recompute,
        tokens=tokens,
        gpu=gpu_entry.key,
        dtype=dtype,
        mfu=mfu,
        num_gpus=num_gpus,
        price_per_gpu_hour=price,
        name=model.name,
        memory=with_memory,
        power_watts=power_watts,
        pue=pue,
        grid_kg_co2_per_kwh=grid_kg_co2_per_kwh,
    )
    from sizing.render import render_estimate

    click.echo(render_estimate(dataclasses.replace(est, seq_len_source=seq_len_source), fmt), nl=False)


def with_mtp_depth(model, depth: int | None):
    """The model with `depth` MTP modules (--mtp-depth), else as its config says."""
    if depth is None or depth == model.config.mtp_modules:
        return model
    return model._replace(config=dataclasses.replace(model.config, mtp_modules=depth))


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
