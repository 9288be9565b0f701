"""`sizing serve`: prefill and decode latency, tokens/s and $ per million tokens on the roofline."""

from __future__ import annotations

import click
from click.core import ParameterSource

from ..default_gpu import default_gpu_for
from ..memory.quant import FORMATS as QUANT_FORMATS
from ..render.serve import render_serve
from ..serve import serve as serve_estimate
from ..validate import MAX_SEQ_LEN, SizingError
from ..vocabulary import (
    ATTENTION_CONVENTIONS,
    DEFAULT_MLA_IMPL,
    DEFAULT_SERVE_ATTENTION,
    DEFAULT_SERVE_BANDWIDTH_EFFICIENCY,
    DEFAULT_SERVE_COMPUTE_EFFICIENCY,
    DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
    MLA_IMPLS,
    SERVE_ACTIVATION_DTYPES,
    STORAGE_DTYPES,
)
from .common import FORMATS, UserError, model_options, resolve_model
from .options import PRICE_TYPE, Choice, Count, Number

DEFAULT_TOKEN_BUDGET, DEFAULT_BLOCK_SIZE = 8192, 16  # = sizing.serve.batching's (kept light: no import)


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
    help="Share of the dense peak reached (1: the roofline bound).  [default: the GPU's calibrated value "
    f"(docs/serving.md), else {DEFAULT_SERVE_COMPUTE_EFFICIENCY}]",
)
@click.option(
    "--bandwidth-efficiency",
    type=_efficiency("--bandwidth-efficiency"),
    help="Share of HBM and NVLink bandwidth reached (1: the roofline bound).  [default: the GPU's calibrated "
    f"value (docs/serving.md), else {DEFAULT_SERVE_BANDWIDTH_EFFICIENCY}]",
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
@click.option(
    "--quant",
    type=Choice("--quant", QUANT_FORMATS),
    help="Weights in a deployed format (GPTQ/AWQ, MXFP4, NVFP4, fp8, GGUF; see `sizing memory --quant`) "
    "instead of --weight-dtype.",
)
@click.option(
    "--prefix-cached",
    "prefix",
    type=Count("--prefix-cached", minimum=1, maximum=MAX_SEQ_LEN),
    help="Prompt tokens every request shares and the engine caches (prefix caching): their prefill is "
    "skipped and their KV blocks stored once.",
)
# ---- i25: MLA implementation
@click.option(
    "--mla",
    type=Choice("--mla", MLA_IMPLS),
    default=DEFAULT_MLA_IMPL,
    show_default=True,
    help="Latent attention (DeepSeek): absorbed (attention over the cached latent) or naive (per-head K/V).",
)
# ---- i25: capacity planning (continuous batching)
@click.option(
    "--rate",
    type=Number("--rate", 0, 1e9, what="a number of requests per second > 0"),
    help="Requests/s to serve: answers replicas x (tp, pp), GPUs and $/M tokens, searching tp and dtypes.",
)
@click.option("--slo-ttft", metavar="DURATION", help="With --rate: time-to-first-token bound, e.g. 2s.")
@click.option("--slo-tpot", metavar="DURATION", help="With --rate: time-per-output-token bound, e.g. 50ms.")
@click.option(
    "--token-budget",
    type=Count("--token-budget", minimum=2),
    default=DEFAULT_TOKEN_BUDGET,
    show_default=True,
    help="With --rate: tokens per scheduler iteration (vLLM max_num_batched_tokens).",
)
@click.option(
    "--block-size",
    type=Count("--block-size"),
    default=DEFAULT_BLOCK_SIZE,
    show_default=True,
    help="With --rate: tokens per paged KV block.",
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
    quant,
    prefix,
    mla,
    rate,
    slo_ttft,
    slo_tpot,
    token_budget,
    block_size,
    fmt,
):
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
    model = resolve_model(preset, config_path, overrides)
    missing = [name for name, value in (("--prompt", prompt), ("--output", output)) if value is None]
    if missing:
        raise UserError(f"{' and '.join(missing)} needed, e.g. --prompt 4096 --output 256")
    gpu = gpu or default_gpu_for(model.preset.name if model.preset else None)
    if quant is not None:
        source = click.get_current_context().get_parameter_source("weight_dtype")
        if source is not None and source.name != "DEFAULT":
            raise UserError(f"--quant {quant} names the weight format; leave out --weight-dtype {weight_dtype}")
        weight_dtype = quant
    if rate is not None:
        effs = (compute_efficiency, bandwidth_efficiency)
        _capacity(model, rate, prompt, output, gpu, slo_ttft, slo_tpot, price, token_budget, block_size, mla, effs, fmt)
        return
    _refuse_without_rate(slo_ttft, slo_tpot)
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
            from ..serve.prefix import prefix_cache

            cached = prefix_cache(result, prefix)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    text = render_serve(result, fmt).rstrip("\n")
    if cached is not None:
        from ..render.prefix import with_prefix_cache

        text = with_prefix_cache(text, cached, fmt)
    click.echo(text)
    if not result.fits:
        _exit_not_fitting(result, fmt)


def _exit_not_fitting(result, fmt: str) -> None:
    """Exit 3, as `sizing memory` does, naming what would fit (on stderr for json/csv output)."""
    from ..serve.fit import not_fit_reason, would_fit

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


def _capacity(model, rate, prompt, output, gpu, slo_ttft, slo_tpot, price, token_budget, block_size, mla, effs, fmt):
    """--rate: the capacity plan. The layout options are what it searches, so they are refused."""
    from ..render.capacity import render_capacity
    from ..serve.capacity import parse_seconds, plan_capacity

    ctx = click.get_current_context()
    searched = [
        f"--{n.replace('_', '-')}"
        for n in ("batch", "tp", "gpus", "weight_dtype", "kv_dtype", "activation_dtype", "prefill_chunk")
        if ctx.get_parameter_source(n) not in (ParameterSource.DEFAULT, None)
    ]
    if searched:
        raise UserError(f"{', '.join(searched)} cannot be given with --rate: the capacity plan searches them")
    try:
        ttft = None if slo_ttft is None else parse_seconds(slo_ttft, "--slo-ttft")
        tpot = None if slo_tpot is None else parse_seconds(slo_tpot, "--slo-tpot")
        plan = plan_capacity(
            model.config, rate, prompt, output, gpu, ttft, tpot, price, model.name, token_budget, block_size, *effs, mla
        )
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_capacity(plan, fmt).rstrip("\n"))
