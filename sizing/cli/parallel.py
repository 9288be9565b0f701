"""`sizing parallel`: per-GPU memory, communication and step time of a parallel training layout,
or the smallest layout that fits.

With any of --dp/--tp/--pp/--cp/--ep the layout is evaluated as given (--gpus, if given,
must be their product). Without them the command searches: on exactly --gpus GPUs, or on
the fewest GPUs up to --max-gpus; when nothing fits it says so and lists what would.
Exit codes: 0 fits, 3 does not fit, 2 bad input.
"""

from __future__ import annotations

import click

from sizing.cli.common import FORMATS, UserError, model_options, resolve_model
from sizing.cli.options import (
    GPU_NAME,
    MFU_TYPE,
    MIN_MFU,
    VERDICT_ONLY,
    Choice,
    Count,
    Length,
    Number,
    Quantity,
    link_gbs_type,
)
from sizing.inputs import default_gpu_for, get_gpu
from sizing.memory import OPTIMIZER_ALIASES, OPTIMIZERS
from sizing.parallel import (
    DEFAULT_GLOBAL_BATCH,
    DEFAULT_STACK,
    FINETUNE_MODES,
    FSDP_MODES,
    LORA_TARGETS,
    PP_SCHEDULES,
    STACKS,
    ParallelLayout,
)
from sizing.validate import SizingError, parse_int, require_choice, show
from sizing.vocabulary import (
    ATTENTION_IMPL_ALIASES,
    ATTENTION_IMPLS,
    DEFAULT_MFU,
    DEFAULT_OPTIMIZER,
    DEFAULT_PRECISION,
    PRECISION_ALIASES,
    PRECISION_POLICIES,
    RECOMPUTE_MODES,
)

EXIT_DOES_NOT_FIT = 3
_DIMS = ("dp", "tp", "pp", "cp", "ep")


def _once(ctx, param, values):
    """Single-value options are declared multiple so a second one is refused, not silently kept."""
    if isinstance(values, tuple) and len(values) > 1:
        raise UserError(f"{param.opts[0]} given {len(values)} times; give it once")
    return values[0] if isinstance(values, tuple) and values else (None if isinstance(values, tuple) else values)


def _one(*decls, **kw):
    return click.option(*decls, multiple=True, callback=_once, **kw)


def _layout_options(func):
    opts = [
        _one(
            "--gpus", type=Count("--gpus"), help="GPUs in all: the product dp x tp x pp x cp, or the count to search."
        ),
        _one("--dp", type=Count("--dp"), help="Data-parallel degree (default: --gpus / (tp x pp x cp))."),
        _one("--tp", type=Count("--tp"), help="Tensor-parallel degree (must divide heads and kv heads)."),
        _one(
            "--pp",
            type=Count("--pp"),
            help="Pipeline stages (uneven when pp does not divide L; see --stage-layers).",
        ),
        _one("--cp", type=Count("--cp"), help="Context-parallel degree (ring attention; flash only)."),
        _one("--ep", type=Count("--ep"), help="Expert-parallel degree (MoE; must divide experts and dp x cp)."),
        _one(
            "--zero", type=Choice("--zero", (0, 1, 2, 3)), help="ZeRO stage over dp x cp (flat shards).  [default: 0]"
        ),
        _one("--fsdp", type=Choice("--fsdp", FSDP_MODES), help="FSDP2 per-parameter sharding: full or hybrid (HSDP)."),
        _one("--shard-group", type=Count("--shard-group"), help="HSDP: ranks one shard spans."),
        click.option("--sp", "sequence_parallel", is_flag=True, help="Sequence parallelism (needs --tp 2 or more)."),
        click.option("--no-vocab-parallel", is_flag=True, help="Replicate the embedding and lm_head over tp."),
        _one("--schedule", type=Choice("--schedule", PP_SCHEDULES), help="Pipeline schedule.  [default: 1f1b]"),
        _one("--v", "v", type=Count("--v"), help="Interleaved: model chunks per pipeline rank.  [default: 1]"),
        _one("--micro-batches", "-m", type=Count("--micro-batches"), help="Per step per dp rank (default: pp)."),
        _one("--micro-batch", "-b", type=Count("--micro-batch"), help="Sequences per micro-batch.  [default: 1]"),
        _one(
            "--global-batch",
            type=Count("--global-batch"),
            help="Sequences per step: sets m = global / (dp b); fixed while searching.  "
            f"[search default: {DEFAULT_GLOBAL_BATCH}]",
        ),
        click.option("--offload-optimizer", is_flag=True, help="Optimizer states in CPU memory."),
        click.option("--offload-params", is_flag=True, help="Weights and gradients in CPU memory too."),
        _one("--finetune", type=Choice("--finetune", FINETUNE_MODES), help="full, lora or qlora.  [default: full]"),
        _one("--lora-rank", type=Count("--lora-rank"), help="LoRA rank r.  [default: 16]"),
        _one("--lora-targets", metavar="q,k,v,o,up,gate,down", help="Projections with adapters.  [default: all]"),
        _one(
            "--stage-layers",
            metavar="N,N,...",
            help="Layers per pipeline stage, e.g. 7,8,...,8,7 (default: L/pp, or first and last lighter).",
        ),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


@click.command()
@model_options
@_one("--seq-len", "-T", type=Length("--seq-len"), help="Tokens per sequence (default: preset's).")
@_layout_options
@_one("--precision", type=Choice("--precision", PRECISION_POLICIES, PRECISION_ALIASES), help="[default: bf16-mixed]")
@_one("--optimizer", type=Choice("--optimizer", OPTIMIZERS, OPTIMIZER_ALIASES), help="[default: adamw]")
@_one("--recompute", type=Choice("--recompute", RECOMPUTE_MODES), help="Default: none; searched when searching.")
@_one(
    "--attention-impl",
    type=Choice("--attention-impl", ATTENTION_IMPLS, ATTENTION_IMPL_ALIASES),
    help="[default: flash]",
)
@_one(
    "--gpu",
    type=GPU_NAME,
    help="GPU name (see `sizing gpus`).  [default: h100-sxm, or the preset's published run's GPU]",
)
@_one(
    "--mfu",
    type=MFU_TYPE,
    help="Whole-run constant instead of the per-operation model: step = model FLOPs / (peak x MFU), "
    "communication and bubble included in it.",
)
@_one(
    "--compute-efficiency",
    type=Number("--compute-efficiency", MIN_MFU, 1, exclusive_minimum=False),
    help="Constant-efficiency mode: hardware FLOPs (recompute included) at this share of peak, plus exposed "
    f"communication and bubble (used, at {DEFAULT_MFU}, for GPUs without step-time constants).",
)
@_one(
    "--stack",
    type=Choice("--stack", STACKS),
    help="Training software: overlap, fusion, flash kernel, recompute policy (docs/step-time.md).  "
    f"[default: {DEFAULT_STACK}]",
)
@click.option(
    "--overlap", "overlap", metavar="DIM=SHARE", multiple=True, help="Comm hidden under compute, e.g. dp=0.5."
)
@_one("--nvlink-gbs", type=link_gbs_type("--nvlink-gbs"), help="Override the GPU's NVLink GB/s per direction.")
@_one("--network-gbs", type=link_gbs_type("--network-gbs"), help="Override the GPU's network GB/s per direction.")
@_one("--tokens", type=Quantity("--tokens"), help="Training tokens: adds the GPU-hours of the run (e.g. 2T).")
@_one("--max-gpus", type=Count("--max-gpus", maximum=2**15), help="Search: at most this many GPUs.  [default: 32768]")
@_one("--format", "fmt", type=Choice("--format", FORMATS), help="table, markdown, json or csv.  [default: table]")
@VERDICT_ONLY
def parallel(preset, config_path, overrides, seq_len, **opts):
    """Per-GPU memory, communication and step time of a parallel layout, or the smallest that fits.

    Memory is the most-loaded GPU's, term by term: model states under ZeRO/FSDP, activations per
    TP/SP/CP shard and in-flight micro-batch, lm_head and loss on the last stage, experts per EP
    rank, LoRA/QLoRA, CPU offload. Exit code 0 when it fits, 3 when it does not, 2 on bad input.

    \b
    Example:
      sizing parallel --preset llama2-70b --gpu h100 --gpus 8
      sizing parallel --preset llama2-70b --gpu h100 --tp 8 --dp 1 --finetune qlora
      sizing parallel --preset llama3.1-405b --gpu h100 --tp 8 --pp 16 --dp 4 --sp -m 16 --recompute full
      sizing parallel --preset llama3.1-405b --gpu h100 --gpus 16384 --global-batch 2048 -T 8192
    """
    model = resolve_model(preset, config_path, overrides)
    if model.preset is None and seq_len is None:
        raise UserError("--seq-len is needed for a model that is not a preset (e.g. --seq-len 4096)")
    T = seq_len or model.preset.context
    fmt = opts.pop("fmt") or "table"
    try:
        gpu_key = get_gpu(opts.pop("gpu") or default_gpu_for(model.preset.name if model.preset else None)).key
        plan_options = _plan_options(opts, gpu_key)
        layout, search = _layout(opts)
        model.config.check_context(T, "--seq-len")
        if search:
            return _search(model, T, layout, opts, plan_options, fmt)
        from sizing.parallel import parallel_plan
        from sizing.render import render_parallel_plan

        recompute = opts.get("recompute") or "none"
        plan = parallel_plan(model.config, layout, T, recompute=recompute, name=model.name, **plan_options)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_parallel_plan(plan, fmt))
    if not plan.fits:
        raise SystemExit(EXIT_DOES_NOT_FIT)


def _plan_options(opts: dict, gpu_key: str) -> dict:
    overlap = {}
    for item in opts.pop("overlap"):
        dim, sep, share = item.partition("=")
        if not sep:
            raise UserError(f"--overlap ({item!r}) must look like DIM=SHARE, e.g. --overlap dp=0.5")
        dim = require_choice("--overlap dimension", dim.strip(), _DIMS)
        if dim in overlap:
            raise UserError(f"--overlap {dim} given twice")
        overlap[dim] = Number(f"--overlap {dim}", 0, 1, exclusive_minimum=False).convert(share, None, None)
    out = {
        "gpu": gpu_key,
        "precision": opts.pop("precision") or DEFAULT_PRECISION,
        "optimizer": opts.pop("optimizer") or DEFAULT_OPTIMIZER,
        "attention_impl": opts.pop("attention_impl") or "flash",
        "mfu": opts.pop("mfu"),
        "compute_efficiency": opts.pop("compute_efficiency"),
        "overlap": overlap,
        "nvlink_gbs": opts.pop("nvlink_gbs"),
        "network_gbs": opts.pop("network_gbs"),
        "tokens": opts.pop("tokens"),
    }
    stack = opts.pop("stack")
    if stack is not None or out["precision"] == "fp8" or out["nvlink_gbs"] or out["network_gbs"]:
        from sizing.parallel import StepOptions

        out["step_options"] = StepOptions(
            stack=stack or DEFAULT_STACK,
            precision="fp8" if out["precision"] == "fp8" else "bf16",
            nvlink_gbs=out["nvlink_gbs"],
            network_gbs=out["network_gbs"],
        )
    return out


def _targets(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    if not names:
        raise UserError(f"--lora-targets ({text!r}) must name projections: {', '.join(LORA_TARGETS)}")
    for name in names:
        require_choice("--lora-targets", name, LORA_TARGETS)
    return names


def _stage_layers(text: str, pp: int) -> tuple[int, ...]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != pp or not all(p.isascii() and p.isdigit() for p in parts):
        raise UserError(
            f"--stage-layers ({show(text)}) must be {pp} positive layer counts (one per pp stage), e.g. 7,8,7"
        )
    return tuple(parse_int("--stage-layers", p) for p in parts)  # exact and bounded, never int() of 5,000 digits


def _micro_batches(opts: dict, search: bool, dp: int, mb: int) -> int | None:
    """m as given, or global batch / (dp b) (gradient accumulation); the search sets it per layout."""
    m, global_batch = opts.get("micro_batches"), opts.get("global_batch")
    if global_batch is None:
        return m
    if m is not None:
        raise UserError("give --global-batch or --micro-batches, not both")
    if search:
        return None
    if global_batch % (dp * mb):
        raise UserError(f"--global-batch ({global_batch}) must be a multiple of dp x micro-batch ({dp * mb})")
    return global_batch // (dp * mb)


def _layout(opts: dict) -> tuple[ParallelLayout, bool]:
    """The layout the options describe, and whether to search (no dimension given)."""
    dims = {d: opts.get(d) for d in _DIMS}
    search = all(v is None for v in dims.values())
    gpus = opts.get("gpus")
    tp, pp, cp, ep = (dims[d] or 1 for d in ("tp", "pp", "cp", "ep"))
    dp = dims["dp"]
    if dp is None:
        dp = 1 if gpus is None else gpus // (tp * pp * cp) or 1
    schedule = opts.get("schedule") or ("interleaved" if (opts.get("v") or 1) > 1 else "1f1b")
    mb = opts.get("micro_batch") or 1
    m = _micro_batches(opts, search, dp, mb)
    fields = {
        "tp": tp,
        "pp": pp,
        "cp": cp,
        "ep": ep,
        "dp": dp,
        "zero": opts.get("zero") or 0,
        "fsdp": opts.get("fsdp"),
        "shard_group": opts.get("shard_group"),
        "sequence_parallel": opts.get("sequence_parallel", False),
        "vocab_parallel": not opts.get("no_vocab_parallel", False),
        "pp_schedule": schedule,
        "v": opts.get("v") or 1,
        "micro_batches": m or pp,
        "micro_batch": mb,
        "offload_optimizer": opts.get("offload_optimizer", False),
        "offload_params": opts.get("offload_params", False),
        "finetune": opts.get("finetune") or "full",
    }
    if opts.get("lora_rank") is not None:
        fields["lora_rank"] = opts["lora_rank"]
    if opts.get("stage_layers") is not None and not search:
        fields["stage_layers"] = _stage_layers(opts["stage_layers"], pp)
    targets = _targets(opts.get("lora_targets"))
    if targets is not None:
        fields["lora_targets"] = targets
    if search:
        given = {"--zero": "zero", "--fsdp": "fsdp", "--sp": "sequence_parallel", "--micro-batches": "micro_batches"}
        given.update({"--v": "v", "--schedule": "schedule", "--stage-layers": "stage_layers"})
        for option, name in given.items():
            if opts.get(name) not in (None, False):
                raise UserError(
                    f"{option} sets a layout: give --dp/--tp/--pp/--cp too, or leave the layout to the search"
                )
        fields.update(tp=1, pp=1, cp=1, ep=1, dp=1, micro_batches=1)
    layout = ParallelLayout(**fields)
    if not search and gpus is not None:
        layout.check_world(gpus)
    return layout, search


def _search(model, T, base, opts, plan_options, fmt):
    from sizing.parallel import min_gpus_that_fit, search_layout, would_fit
    from sizing.render import render_no_fit, render_parallel_plan

    global_batch = opts.get("global_batch") or DEFAULT_GLOBAL_BATCH
    gpus, max_gpus = opts.get("gpus"), opts.get("max_gpus") or 2**15
    recompute = opts.get("recompute")
    plan_options = {**plan_options, "name": model.name}
    first_fit = opts.get("verdict_only", False)  # the UI's fits-on list asks only whether a layout fits
    result = search_layout(
        model.config, T, global_batch, gpus, max_gpus, recompute, base, first_fit=first_fit, **plan_options
    )
    if result.best is not None:
        click.echo(render_parallel_plan(result.best, fmt))
        return
    if gpus is None or first_fit:
        click.echo(render_no_fit(model.name, result.gpus, plan_options["gpu"], [], fmt))
    else:
        alternatives = would_fit(model.config, T, global_batch, gpus, recompute, base, more_gpus=False, **plan_options)
        fewest = min_gpus_that_fit(model.config, T, global_batch, recompute=recompute, base=base, **plan_options)
        if fewest is not None and fewest.layout.world > gpus:  # the count `sizing memory` quotes too
            alternatives.append((f"{fewest.layout.world} GPUs", fewest))
        click.echo(render_no_fit(model.name, result.gpus, plan_options["gpu"], alternatives, fmt))
    raise SystemExit(EXIT_DOES_NOT_FIT)
