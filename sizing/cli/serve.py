"""`sizing serve`: prefill and decode latency, tokens/s and $ per million tokens on the roofline."""

from __future__ import annotations

import click
from click.core import ParameterSource

from sizing.cli.common import UserError, resolve_model
from sizing.cli.option_layer import model_options, option
from sizing.cli.serve_options import capacity_options, deployment_options, dtype_options, rate_options, workload_options
from sizing.inputs import default_gpu_for
from sizing.render import render_serve
from sizing.serve import serve as serve_estimate
from sizing.validate import SizingError


@click.command()
@model_options
@workload_options
@dtype_options
@rate_options
@deployment_options
@capacity_options
@option("format")
def serve(preset, config_path, overrides, fmt, **options):
    """Serving on the roofline: time to first token, time per output token, tokens/s, $/M tokens.

    Prefill FLOPs (causal by default) over the batch's prompts; each decode step reads the
    weights it touches and the KV cache (MoE: the experts the batch routes to, under uniform
    routing). Time = max(FLOPs / (peak x efficiency), bytes / (bandwidth x efficiency)) + the
    TP all-reduces (bandwidth + NCCL latency); the larger term is the bound. Memory per GPU:
    weights + KV cache + the prefill activation peak. Exit code 0 when it fits, 3 when it
    does not (the report says what would), 2 on bad input.

    \b
    Example:
      sizing serve --preset llama2-7b --gpu h100 --batch 1 --prompt 4096 --output 256
      sizing serve --preset llama2-70b --gpu h100 --tp 4 --batch 32 --prompt 2048 --output 512
      sizing serve --preset mixtral-8x7b --gpu h100 --tp 2 --batch 16 --prompt 1024 --output 256 --format json
      sizing serve --preset llama3-70b --gpu h100 --rate 10 --prompt 1000 --output 200 --slo-tpot 50ms

    With --rate: the capacity plan instead (continuous batching; replicas x (tp, pp), GPUs, $/M
    tokens), searching tp, the weight and KV dtypes and the batch.
    """
    missing = [f"--{name}" for name in ("prompt", "output") if options[name] is None]
    if missing:
        raise UserError(f"{' and '.join(missing)} needed, e.g. --prompt 4096 --output 256")
    if _other_model_answered(preset, fmt, **options):
        return
    _refuse_images(options["images"], options["image_size"])
    model = resolve_model(preset, config_path, overrides)
    options["gpu"] = options["gpu"] or default_gpu_for(model.preset.name if model.preset else None)
    options["weight_dtype"] = _weight_format(options["quant"], options["weight_dtype"])
    if options["rate"] is not None:
        _capacity(model, fmt, **options)
        return
    _refuse_without_rate(options["slo_ttft"], options["slo_tpot"])
    if _layout_answered(model, fmt, **options):
        return
    _estimate(model, fmt, **options)


def _other_model_answered(preset: str | None, fmt: str, **options) -> bool:
    """A hybrid or vision-language preset: served on the same step model by sizing.serve.hybrid_vlm
    (True, printed; exit 3 when it does not fit); any other model: False."""
    from sizing.hybrid import HYBRID_PRESETS
    from sizing.vision import VISION_PRESETS, parse_image_size

    name = (preset or "").strip().lower()
    kind = (
        "hybrid"
        if name in {p.name for p in HYBRID_PRESETS}
        else "vlm"
        if name in {p.name for p in VISION_PRESETS}
        else None
    )
    if kind is None:
        return False
    from sizing.render import render_other_serve
    from sizing.serve import serve_hybrid, serve_vlm

    args = (name, options["prompt"], options["output"], options["batch"], options["gpu"] or "h100", options["tp"])
    dtypes = {"weight_dtype": options["weight_dtype"], "kv_dtype": options["kv_dtype"]}
    try:
        if kind == "hybrid":
            _refuse_images(options["images"], options["image_size"])
            result = serve_hybrid(*args, **dtypes)
        else:
            size = parse_image_size(options["image_size"] or "896x896")
            images = 1 if options["images"] is None else options["images"]
            result = serve_vlm(*args, **dtypes, images=images, image_size=size)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_other_serve(result, fmt).rstrip("\n"))
    if not result.fits:
        raise SystemExit(3)
    return True


def _refuse_images(images, image_size) -> None:
    if images is not None or image_size is not None:
        raise UserError("--images and --image-size apply to a vision-language preset (see `sizing vision`)")


def _layout_answered(model, fmt: str, *, gpus, tp: int, **options) -> bool:
    """--gpus N without --tp: the best layout on N GPUs as `serve-layout` ranks them (TP groups of
    1..N GPUs as replicas, EP with DP attention, TP x PP), by tokens/s per GPU at the largest batch
    that fits. Pure TP of t GPUs runs the estimate at --tp t with N/t replicas (False: it goes on);
    EP + DP attention or a pipeline prints the layout table (True)."""
    ctx = click.get_current_context()
    if gpus is None or gpus == 1 or ctx.get_parameter_source("tp") not in (ParameterSource.DEFAULT, None):
        return False
    from sizing.render import render_layouts
    from sizing.serve import compare_layouts, why_best

    counts = tuple(g for g in (1, 2, 4, 8, 16, 32, 64, 128) if g <= gpus and gpus % g == 0)
    context = options["prompt"] + options["output"]
    try:
        steps = compare_layouts(
            model.config, options["gpu"], context, options["weight_dtype"], options["kv_dtype"], counts
        )
    except SizingError as exc:
        raise UserError(str(exc)) from None
    if steps and steps[0].layout == "tp":
        ctx.params["tp"] = steps[0].gpus
        _estimate(model, fmt, gpus=gpus, tp=steps[0].gpus, **options)
        return True
    title = (
        f"Serving {model.name} on {gpus} x {options['gpu']}: the best layout at context {context}, weights "
        f"{options['weight_dtype']}, KV {options['kv_dtype']} (decode; --tp picks pure tensor parallelism)"
    )
    click.echo(render_layouts(steps, why_best(steps, model.config), fmt, title).rstrip("\n"))
    if not steps:
        raise SystemExit(3)
    return True


def _weight_format(quant: str | None, weight_dtype: str) -> str:
    """--quant names the weight format in place of --weight-dtype; both typed is an error."""
    if quant is None:
        return weight_dtype
    source = click.get_current_context().get_parameter_source("weight_dtype")
    if source is not None and source.name != "DEFAULT":
        raise UserError(f"--quant {quant} names the weight format; leave out --weight-dtype {weight_dtype}")
    return quant


def _estimate(
    model,
    fmt: str,
    *,
    prompt: int,
    output: int,
    batch: int,
    gpu: str,
    tp: int,
    gpus,
    weight_dtype: str,
    kv_dtype: str,
    activation_dtype: str,
    attention: str,
    compute_efficiency,
    bandwidth_efficiency,
    price: float,
    prefill_chunk,
    prefix,
    mla: str,
    **_,
) -> None:
    """One static batch on the roofline (sizing.serve), with prefix caching when asked; exit 3
    when it does not fit."""
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
            mla=mla,
            served_context=model.preset.serving_context if model.preset else None,
        )
        cached = None
        if prefix is not None:
            from sizing.serve import prefix_cache

            cached = prefix_cache(result, prefix)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    _echo(result, cached, fmt)


def _echo(result, cached, fmt: str) -> None:
    """The estimate, with the prefix cache's figures when asked; exit 3 when it does not fit."""
    text = render_serve(result, fmt).rstrip("\n")
    if cached is not None:
        from sizing.render import with_prefix_cache

        text = with_prefix_cache(text, cached, fmt)
    click.echo(text)
    if not result.fits:
        _exit_not_fitting(result, fmt)


def _exit_not_fitting(result, fmt: str) -> None:
    """Exit 3, as `sizing memory` does, naming what would fit (on stderr for json/csv output)."""
    from sizing.serve import not_fit_reason, would_fit

    lines = [f"{not_fit_reason(result)}"] + [f"would fit: {w}" for w in would_fit(result)]
    click.echo("\n".join(lines), err=fmt in ("json", "csv"))
    raise SystemExit(3)


def _refuse_without_rate(slo_ttft, slo_tpot) -> None:
    given = [n for n, v in (("--slo-ttft", slo_ttft), ("--slo-tpot", slo_tpot)) if v is not None]
    ctx = click.get_current_context()
    given += [
        f"--{n.replace('_', '-')}"
        for n in ("token_budget", "block_size")
        if ctx.get_parameter_source(n) not in (ParameterSource.DEFAULT, None)
    ]
    if given:
        raise UserError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to capacity planning: add --rate")


def _capacity(
    model,
    fmt: str,
    *,
    rate: float,
    prompt: int,
    output: int,
    gpu: str,
    slo_ttft,
    slo_tpot,
    price: float,
    token_budget: int,
    block_size: int,
    mla: str,
    compute_efficiency,
    bandwidth_efficiency,
    **_,
) -> None:
    """--rate: the capacity plan. The layout options are what it searches, so they are refused."""
    from sizing.render import render_capacity
    from sizing.serve import parse_seconds, plan_capacity

    ctx = click.get_current_context()
    searched = [
        f"--{n.replace('_', '-')}"
        for n in ("batch", "tp", "gpus", "weight_dtype", "kv_dtype", "activation_dtype", "prefill_chunk")
        if ctx.get_parameter_source(n) not in (ParameterSource.DEFAULT, None)
    ]
    if searched:
        raise UserError(f"{', '.join(searched)} cannot be given with --rate: the capacity plan searches them")
    effs = (compute_efficiency, bandwidth_efficiency)
    try:
        ttft = None if slo_ttft is None else parse_seconds(slo_ttft, "--slo-ttft")
        tpot = None if slo_tpot is None else parse_seconds(slo_tpot, "--slo-tpot")
        contexts = (model.preset.context, model.preset.serving_context) if model.preset else (None, None)
        plan = plan_capacity(
            model.config, rate, prompt, output, gpu, ttft, tpot, price, model.name,
            token_budget, block_size, *effs, mla, *contexts,
        )  # fmt: skip
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_capacity(plan, fmt).rstrip("\n"))
    if plan.best is None:  # no layout serves the rate within the bounds: exit 3, as not fitting does everywhere
        raise SystemExit(3)
