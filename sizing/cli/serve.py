"""`sizing serve`: prefill and decode latency, tokens/s and $ per million tokens on the roofline."""

from __future__ import annotations

import click

from ..default_gpu import default_gpu_for
from ..render.serve import render_serve
from ..serve import serve as serve_estimate
from ..validate import MAX_SEQ_LEN, SizingError
from ..vocabulary import (
    ATTENTION_CONVENTIONS,
    DEFAULT_SERVE_ATTENTION,
    DEFAULT_SERVE_BANDWIDTH_EFFICIENCY,
    DEFAULT_SERVE_COMPUTE_EFFICIENCY,
    DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
    SERVE_ACTIVATION_DTYPES,
    STORAGE_DTYPES,
)
from .common import FORMATS, UserError, model_options, resolve_model
from .options import PRICE_TYPE, Choice, Count, Number


def _efficiency(option: str) -> Number:
    return Number(option, 0, 1, what="a number in (0, 1]")


@click.command()
@model_options
@click.option("--gpu", help="GPU name (see `sizing gpus`).  [default: h100-sxm, or the preset's published run's GPU]")
@click.option("--batch", "-b", type=Count("--batch"), default=1, show_default=True, help="Sequences decoded together.")
@click.option("--prompt", type=Count("--prompt", maximum=MAX_SEQ_LEN), help="Prompt tokens per sequence (required).")
@click.option(
    "--output",
    type=Count("--output", minimum=2, maximum=MAX_SEQ_LEN),
    help="Output tokens per sequence, the first from the prefill (required, at least 2).",
)
@click.option("--tp", type=Count("--tp"), default=1, show_default=True, help="Tensor-parallel GPUs per replica.")
@click.option(
    "--gpus", type=Count("--gpus"), help="GPUs in all, a multiple of --tp (replicas = gpus / tp).  [default: tp]"
)
@click.option("--weight-dtype", type=Choice("--weight-dtype", STORAGE_DTYPES), default="bf16", show_default=True)
@click.option("--kv-dtype", type=Choice("--kv-dtype", STORAGE_DTYPES), default="bf16", show_default=True)
@click.option(
    "--activation-dtype",
    type=Choice("--activation-dtype", SERVE_ACTIVATION_DTYPES),
    default="bf16",
    show_default=True,
    help="The dtype the matmuls run in: its peak rate is used.",
)
@click.option(
    "--attention",
    type=Choice("--attention", ATTENTION_CONVENTIONS),
    default=DEFAULT_SERVE_ATTENTION,
    show_default=True,
    help="Prefill FLOPs: causal (serving kernels skip masked tiles) or full (T keys per query).",
)
@click.option(
    "--compute-efficiency",
    type=_efficiency("--compute-efficiency"),
    default=DEFAULT_SERVE_COMPUTE_EFFICIENCY,
    show_default=True,
    help="Share of the dense peak reached (1: the roofline bound).",
)
@click.option(
    "--bandwidth-efficiency",
    type=_efficiency("--bandwidth-efficiency"),
    default=DEFAULT_SERVE_BANDWIDTH_EFFICIENCY,
    show_default=True,
    help="Share of HBM and NVLink bandwidth reached (1: the roofline bound).",
)
@click.option(
    "--price",
    type=PRICE_TYPE,
    default=DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
    show_default=True,
    help="USD per GPU-hour, for $ per million tokens.",
)
@click.option(
    "--prefill-chunk",
    type=Count("--prefill-chunk", maximum=MAX_SEQ_LEN),
    help="Tokens per prefill forward (chunked prefill).  [default: the whole batch's prompts at once]",
)
@click.option("--format", "fmt", type=Choice("--format", FORMATS), default="table", show_default=True)
def serve(
    preset,
    config_path,
    overrides,
    gpu,
    batch,
    prompt,
    output,
    tp,
    gpus,
    weight_dtype,
    kv_dtype,
    activation_dtype,
    attention,
    compute_efficiency,
    bandwidth_efficiency,
    price,
    prefill_chunk,
    fmt,
):
    """Serving on the roofline: time to first token, time per output token, tokens/s, $/M tokens.

    Prefill FLOPs (causal by default) over the batch's prompts; each decode step reads the
    weights it touches and the KV cache (MoE: the experts the batch routes to, under uniform
    routing). Time = max(FLOPs / (peak x efficiency), bytes / (bandwidth x efficiency)) + the
    TP all-reduces; the larger term is the bound. Memory per GPU: weights + KV cache + the
    prefill activation peak.

    \b
    Example:
      sizing serve --preset llama2-7b --gpu h100 --batch 1 --prompt 4096 --output 256
      sizing serve --preset llama2-70b --gpu h100 --tp 4 --batch 32 --prompt 2048 --output 512
      sizing serve --preset mixtral-8x7b --gpu h100 --tp 2 --batch 16 --prompt 1024 --output 256 --format json
    """
    model = resolve_model(preset, config_path, overrides)
    missing = [name for name, value in (("--prompt", prompt), ("--output", output)) if value is None]
    if missing:
        raise UserError(f"{' and '.join(missing)} needed, e.g. --prompt 4096 --output 256")
    gpu = gpu or default_gpu_for(model.preset.name if model.preset else None)
    try:
        result = serve_estimate(
            model.config,
            prompt,
            output,
            batch,
            gpu,
            tp,
            gpus,
            weight_dtype,
            kv_dtype,
            activation_dtype,
            attention,
            compute_efficiency,
            bandwidth_efficiency,
            price,
            prefill_chunk,
            name=model.name,
            trained_context=model.preset.context if model.preset else None,
        )
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_serve(result, fmt).rstrip("\n"))
