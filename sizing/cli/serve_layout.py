"""`sizing serve-layout`: which layout (TP, or EP with DP attention) serves an MoE best."""

from __future__ import annotations

import click

from sizing.cli.common import resolve_model
from sizing.cli.option_layer import model_options, option
from sizing.vocabulary import DEFAULT_GPU


@click.command("serve-layout")
@model_options
@option("gpu", default=DEFAULT_GPU)
@option("context", default=4096, help="Positions in each sequence's KV cache at the decode step.")
@option("weights")
@option("kv_dtype", default="bf16")
@option("gpus", dest="gpu_counts", multiple=True, help="GPU counts to try (repeatable).  [default: 8 16 32]")
@option("format")
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
