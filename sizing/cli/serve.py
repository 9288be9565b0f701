"""`sizing serve`: prefill and decode latency, tokens/s and $ per million tokens on the roofline."""

from __future__ import annotations

import click
from click.core import ParameterSource

from sizing.cli.any_model import answers_whole_models
from sizing.cli.common import UserError, resolve_model
from sizing.cli.emit import SERVING_EMITS
from sizing.cli.from_file import given as option_given
from sizing.cli.from_file import with_file
from sizing.cli.option_layer import model_options, option
from sizing.cli.serve_options import capacity_options, deployment_options, dtype_options, rate_options, workload_options
from sizing.cli.serve_whole import serve_of_whole_model
from sizing.inputs import default_gpu_for
from sizing.render import render_serve
from sizing.serve import serve as serve_estimate
from sizing.validate import SizingError


@click.command()
@with_file
@model_options
@workload_options
@dtype_options
@rate_options
@deployment_options
@capacity_options
@option("prefix_caching")
@option("format")
@option("emit", only=SERVING_EMITS)
@option("out", help="With --emit: the file to write (atomically).  [default: stdout, instead of the answer]")
@option("run_remote_code")
@option("verdict_only")
@answers_whole_models(serve_of_whole_model)  # a hybrid, vision-language or transformers-counted model
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
      sizing serve --preset llama3-8b --rate 20 --prompt 1000 --output 200 --slo-tpot 40ms --tp 1 --disaggregated

    With --rate: the capacity plan instead (continuous batching, Poisson arrivals): replicas x
    (tp, pp), GPUs and $/M tokens so that the SLOs hold at --percentile (p99 by default), with
    p50/p90/p99 TTFT, TPOT and latency at that load. It searches tp and the weight and KV dtypes;
    --weight-dtype, --quant, --kv-dtype and --tp narrow the search to what they name. --trace
    reads request lengths from a file; --disaggregated also sizes prefill and decode pools.
    """
    emitting = (options.pop("emit"), options.pop("out"), options.pop("prefix_caching"), config_path)
    first_fit = options.pop("verdict_only", False)  # the UI's fits-on list: whether some layout serves the rate
    if emitting[2] is False and options["prefix"] is not None:
        raise UserError("--prefix-cached needs the engine's prefix cache: leave out --no-prefix-caching")
    traced = options["rate"] is not None and options["trace"] is not None
    missing = [f"--{name}" for name in ("prompt", "output") if options[name] is None and not traced]
    if missing:
        raise UserError(f"{' and '.join(missing)} needed, e.g. --prompt 4096 --output 256")
    _refuse_images(options["images"], options["image_size"])
    model = resolve_model(preset, config_path, overrides)
    options["emitting"] = emitting
    options["gpu"] = options["gpu"] or default_gpu_for(model.preset.name if model.preset else None)
    options["weight_dtype"] = _weight_format(options["quant"], options["weight_dtype"])
    if options["rate"] is not None:
        _capacity(model, fmt, first_fit=first_fit, **options)
        return
    _refuse_without_rate(options["slo_ttft"], options["slo_tpot"])
    if _layout_answered(model, fmt, **options):
        return
    _estimate(model, fmt, **options)


def _refuse_images(images, image_size) -> None:
    if images is not None or image_size is not None:
        raise UserError("--images and --image-size apply to a vision-language model")


def _layout_answered(model, fmt: str, *, gpus, tp: int, **options) -> bool:
    """--gpus N without --tp: the best layout on N GPUs as `serve-layout` ranks them (TP groups of
    1..N GPUs as replicas, EP with DP attention, TP x PP), by tokens/s per GPU at the largest batch
    that fits. Pure TP of t GPUs runs the estimate at --tp t with N/t replicas (False: it goes on);
    EP + DP attention or a pipeline prints the layout table (True)."""
    ctx = click.get_current_context()
    if gpus is None or gpus == 1 or option_given(ctx, "tp"):
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
    **rest,
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
    _echo(model, result, cached, fmt, rest["emitting"])


def _echo(model, result, cached, fmt: str, emitting) -> None:
    """The estimate, with the prefix cache's figures when asked (or, with --emit, the engine's
    command); exit 3 when it does not fit."""
    from sizing.cli.emit import answer_serving, serving_plan_of_estimate

    text = render_serve(result, fmt).rstrip("\n")
    if cached is not None:
        from sizing.render import with_prefix_cache

        text = with_prefix_cache(text, cached, fmt)
    emit, out, caching, config_path = emitting
    plan = serving_plan_of_estimate(model, config_path, result, caching) if emit else None
    answer_serving(text, emit, out, lambda engine: _emitted(plan, engine))
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
        for n in ("token_budget", "block_size", "percentile", "trace", "disaggregated", "kv_link")
        if ctx.get_parameter_source(n) not in (ParameterSource.DEFAULT, None)
    ]
    if given:
        raise UserError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to capacity planning: add --rate")


def _capacity(model, fmt: str, first_fit: bool = False, **options) -> None:
    """--rate: the capacity plan. The dtypes, --quant and --tp the user gives narrow the search
    (the precision is theirs); --batch, --gpus and --prefill-chunk are what it answers."""
    from sizing.render import render_capacity, render_disaggregated
    from sizing.serve import capacity_question, parse_seconds, plan_capacity, plan_disaggregated, read_trace

    ctx = click.get_current_context()

    def given(name: str) -> bool:
        return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)

    answered = [f"--{n.replace('_', '-')}" for n in ("batch", "gpus", "prefill_chunk", "prefix") if given(n)]
    if answered:
        raise UserError(f"{', '.join(answered)} cannot be given with --rate: the capacity plan answers them")
    from_file = [f"--{n.replace('_', '-')}" for n in ("batch", "gpus", "prefill_chunk") if option_given(ctx, n)]
    if from_file:  # set by --from FILE: the plan answers them all the same, and says so
        click.echo(f"note: with --rate the capacity plan answers {', '.join(from_file)}: the file's not used", err=True)
    o = options
    narrowed = {  # given by a flag or by --from FILE
        "weight_dtypes": (o["weight_dtype"],) if option_given(ctx, "weight_dtype") or o["quant"] is not None else None,
        "kv_dtypes": (o["kv_dtype"],) if option_given(ctx, "kv_dtype") else None,
        "tps": (o["tp"],) if option_given(ctx, "tp") else None,
    }
    try:
        mix = None if o["trace"] is None else read_trace(o["trace"])
        ttft = None if o["slo_ttft"] is None else parse_seconds(o["slo_ttft"], "--slo-ttft")
        tpot = None if o["slo_tpot"] is None else parse_seconds(o["slo_tpot"], "--slo-tpot")
        contexts = (model.preset.context, model.preset.serving_context) if model.preset else (None, None)
        args = (model.config, o["rate"], o["prompt"], o["output"], o["gpu"], ttft, tpot, o["price"], model.name)
        kwargs = dict(
            token_budget=o["token_budget"], block_size=o["block_size"], compute_efficiency=o["compute_efficiency"],
            bandwidth_efficiency=o["bandwidth_efficiency"], mla=o["mla"], percentile=o["percentile"], mix=mix,
            activation_dtype=o["activation_dtype"], trained_context=contexts[0], served_context=contexts[1],
            **{k: v for k, v in narrowed.items() if v is not None},
        )  # fmt: skip
        plan = plan_capacity(*args, **kwargs, first_fit=first_fit)
        split = None
        if o["disaggregated"] and not first_fit:  # the verdict is whether the co-located plan serves
            engine = ("token_budget", "block_size", "compute_efficiency", "bandwidth_efficiency", "mla", "percentile")
            q = capacity_question(*args[:8], *(o[k] for k in engine), mix, o["activation_dtype"])
            split = plan_disaggregated(q, link=o["kv_link"], **{k: v for k, v in narrowed.items() if v is not None})
    except SizingError as exc:
        raise UserError(str(exc)) from None
    text = render_capacity(plan, fmt) if split is None else render_disaggregated(plan, split, fmt)
    from sizing.cli.emit import answer_serving, serving_plan_of_capacity

    emit, out, caching, config_path = o["emitting"]
    plan_of = lambda engine: _emitted(serving_plan_of_capacity(model, config_path, plan, caching), engine)  # noqa: E731
    answer_serving(text.rstrip("\n"), emit, out, plan_of)
    if plan.best is None:  # no layout serves the rate within the bounds: exit 3, as not fitting does everywhere
        raise SystemExit(3)


def _emitted(plan, engine: str) -> str:
    from sizing.frameworks import emit_serving

    return emit_serving(plan, engine)
