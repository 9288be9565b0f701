"""`sizing serve-layout`: which layout (TP, or EP with DP attention) serves an MoE best."""

from __future__ import annotations

import click

from sizing.cli.common import FORMATS, model_options, resolve_model
from sizing.cli.options import GPU_NAME, Choice, Count, Length
from sizing.memory import FORMATS as QUANT_FORMATS
from sizing.vocabulary import DEFAULT_GPU, DTYPE_BITS


@click.command("serve-layout")
@model_options
@click.option("--gpu", type=GPU_NAME, default=DEFAULT_GPU, show_default=True, help="GPU name (see `sizing gpus`).")
@click.option(
    "--context",
    "-C",
    type=Length("--context"),
    default=4096,
    show_default=True,
    help="Positions in each sequence's KV cache at the decode step.",
)
@click.option(
    "--weights",
    type=Choice("--weights", (*DTYPE_BITS, *QUANT_FORMATS)),
    default="fp8",
    show_default=True,
    help="A dtype or a deployed format (see `sizing memory --quant`).",
)
@click.option("--kv-dtype", type=Choice("--kv-dtype", DTYPE_BITS), default="bf16", show_default=True)
@click.option(
    "--gpus",
    "gpu_counts",
    type=Count("--gpus"),
    multiple=True,
    help="GPU counts to try (repeatable).  [default: 8 16 32]",
)
@click.option("--format", "fmt", type=Choice("--format", FORMATS), default="table", show_default=True)
def serve_layout(preset, config_path, overrides, gpu, context, weights, kv_dtype, gpu_counts, fmt):
    """Serving layouts: pure TP, EP with DP attention (MoE, DeepSeek-V3 style), TP x PP across nodes.

    For each layout and GPU count: the largest batch whose weights + KV fit 0.9 of each GPU,
    the decode step on the roofline with its all-reduces or all-to-alls, and tokens/s per GPU;
    best first, with why it beats pure TP.

    \b
    Example:
      sizing serve-layout --preset deepseek-v3 --gpu h200 --weights fp8-block128
      sizing serve-layout --preset llama3.1-405b --gpu h100 --weights bf16 --gpus 16 --gpus 32
      sizing serve-layout --preset gpt-oss-120b --gpu h100 --weights mxfp4-experts --gpus 1 --gpus 2 --gpus 4 --gpus 8
    """
    from sizing.render import render_layouts
    from sizing.serve import compare_layouts, why_best

    model = resolve_model(preset, config_path, overrides)
    steps = compare_layouts(model.config, gpu, context, weights, kv_dtype, tuple(gpu_counts) or (8, 16, 32))
    title = f"Serving {model.name} on {gpu}: decode at context {context}, weights {weights}, KV {kv_dtype}"
    click.echo(render_layouts(steps, why_best(steps, model.config), fmt, title).rstrip("\n"))
    if not steps:
        raise SystemExit(3)
