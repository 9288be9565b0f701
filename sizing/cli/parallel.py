"""`sizing parallel`: per-GPU memory, communication and step time of a parallel training layout,
or the smallest layout that fits.

With any of --dp/--tp/--pp/--cp/--ep/--etp the layout is evaluated as given (--gpus, if
given, must be dp x tp x pp x cp). Without them the command searches: on exactly --gpus GPUs,
or on the fewest GPUs up to --max-gpus; when nothing fits it says so and lists what would.
Exit codes: 0 fits or tight (within the allocator's band: sizing.memory.verdict), 3 a clear
"does not fit" (or a search that finds no layout), 2 bad input.
"""

from __future__ import annotations

import dataclasses

import click

from sizing.cli.any_model import answers_whole_models
from sizing.cli.common import UserError, resolve_model
from sizing.cli.emit import TRAINING_EMITS, answer_plan, lora_options
from sizing.cli.from_file import with_file
from sizing.cli.option_layer import model_options, option, options
from sizing.cli.options import Number
from sizing.cli.parallel_whole import parallel_of_whole_model, refuse_images
from sizing.inputs import default_gpu_for, get_gpu
from sizing.parallel import DEFAULT_BATCH_TOKENS, DEFAULT_STACK, LORA_TARGETS, ParallelLayout
from sizing.validate import SizingError, parse_int, require_choice, show
from sizing.vocabulary import DEFAULT_FINETUNE_SEQ_LEN, DEFAULT_MFU, DEFAULT_OPTIMIZER, DEFAULT_PRECISION

EXIT_DOES_NOT_FIT = 3
_DIMS = ("dp", "tp", "pp", "cp", "ep")  # the --overlap dimensions
_LAYOUT_DIMS = (*_DIMS, "etp")  # any of these given: evaluate the layout, do not search


_layout_options = options(
    option("gpus", help="GPUs in all: the product dp x tp x pp x cp, or the count to search."),
    option("dp", help="Data-parallel degree (default: --gpus / (tp x pp x cp))."),
    option("tp", help="Tensor-parallel degree (must divide heads and kv heads)."),
    option("pp", help="Pipeline stages (uneven when pp does not divide L; see --stage-layers)."),
    option("cp", help="Context-parallel degree (ring attention; flash only)."),
    option("ep", help="Expert-parallel degree (MoE; ep x etp must divide tp x cp x dp)."),
    option("etp"),
    option("zero", default=None, help="ZeRO stage over dp x cp (flat shards).  [default: 0]"),
    option("fsdp"),
    option("shard_group"),
    option("sp"),
    option("no_vocab_parallel"),
    option("schedule"),
    option("v"),
    option("micro_batches", help="Per step per dp rank (default: pp)."),
    option("micro_batch", help="Sequences per micro-batch.  [default: 1]"),
    option(
        "global_batch",
        help="Sequences per step: sets m = global / (dp b); fixed while searching.  "
        f"[search default: {DEFAULT_BATCH_TOKENS:,} tokens in sequences of T (Llama 2's 4M; 1,024 at T = 4,096), "
        "then rounded up to a multiple of --gpus if no layout divides it]",
    ),
    option("offload_optimizer"),
    option("offload_params"),
    option("finetune"),
    option("lora_rank"),
    option("lora_targets"),
    option("lora_base"),
    option("lora_trained"),
    option("stage_layers"),
)


@click.command()
@with_file
@model_options
@option(
    "seq_len",
    help="Tokens per sequence.  [default: the preset's training context; with --finetune, "
    f"{DEFAULT_FINETUNE_SEQ_LEN:,} (a fine-tuning context, as axolotl's and NeMo's SFT recipes use)]",
)
@_layout_options
@option("precision")
@option("optimizer")
@option("recompute", default=None, help="Default: none; searched when searching.")
@option("selective")
@option("recompute_modules")
@option("cross_entropy")
@option("attention_impl")
@option("gpu", help="GPU name (see `sizing gpus`).  [default: h100-sxm, or the preset's published run's GPU]")
@option(
    "mfu",
    help="Whole-run constant instead of the per-operation model: step = model FLOPs / (peak x MFU), "
    "communication and bubble included in it.",
)
@option(
    "compute_efficiency",
    help="Constant-efficiency mode: hardware FLOPs (recompute included) at this share of peak, plus exposed "
    f"communication and bubble (used, at {DEFAULT_MFU}, for GPUs without step-time constants).",
)
@option("fp8_recipe")
@option("fp8_param_gather")
@option("grad_reduce")
@option("calibration")
@option("stack", help="Training software: overlap, fusion, flash kernel, recompute policy (docs/step-time.md).  "
        f"[default: {DEFAULT_STACK}]")  # fmt: skip
@option("overlap")
@option("nvlink_gbs")
@option("network_gbs")
@option("tokens", help="Training tokens: adds the GPU-hours of the run (e.g. 2T).")
@option("max_gpus")
@option("images", default=None, help="A vision-language model: images in each training sequence.  [default: 1]")
@option("image_size", default=None, help="A vision-language model: HEIGHTxWIDTH in pixels.  [default: 896x896]")
@option("run_remote_code")
@option("format")
@option("verdict_only")
@option("emit", only=TRAINING_EMITS)
@option("out", help="With --emit: the file to write (atomically).  [default: stdout, instead of the answer]")
@answers_whole_models(  # a hybrid, vision-language or transformers-counted model
    lambda command, source, remote_code, kwargs: parallel_of_whole_model(source, remote_code, kwargs, run_parallel)
)
def parallel(preset, config_path, overrides, seq_len, **opts):
    """Per-GPU memory, communication and step time of a parallel layout, or the smallest that fits.

    Memory is the most-loaded GPU's, term by term: model states under ZeRO/FSDP, activations per
    TP/SP/CP shard and in-flight micro-batch, lm_head and loss on the last stage, experts per EP
    rank, LoRA/QLoRA, CPU offload, stored as --stack stores it. Exit code 0 when it fits or is
    tight (within the allocator's band), 3 when it clearly does not fit, 2 on bad input.

    \b
    Example:
      sizing parallel --preset llama2-70b --gpu h100 --gpus 8
      sizing parallel --preset llama2-70b --gpu h100 --tp 8 --dp 1 --finetune qlora
      sizing parallel --preset llama3.1-405b --gpu h100 --tp 8 --pp 16 --dp 4 --sp -m 16 --recompute full
      sizing parallel --preset llama3.1-405b --gpu h100 --gpus 16384 --global-batch 2048 -T 8192
    """
    model = resolve_model(preset, config_path, overrides)
    refuse_images(opts.pop("images"), opts.pop("image_size"))
    run_parallel(model, _seq_len(model, config_path, seq_len, opts.get("finetune")), opts)


def run_parallel(model, T: int, opts: dict) -> None:
    """The plan of `model` (a stack, a HybridConfig or a VisionConfig) at T tokens per sequence."""
    emit = (opts.pop("emit"), opts.pop("out"))
    fmt = opts.pop("fmt") or "table"
    opts.pop("calibration")  # applied when parsed (sizing.cli.common.use_calibration)
    try:
        gpu_key = get_gpu(opts.pop("gpu") or default_gpu_for(model.preset.name if model.preset else None)).key
        layout, search = _layout(opts)
        work = _workload(opts, T, search)
        plan_options = _plan_options(opts, gpu_key, work)
        model.config.check_context(T, "--seq-len")
        if search:
            if emit[0] == "torchtitan":  # torchtitan shards with FSDP: search only those layouts
                layout = dataclasses.replace(layout, fsdp="full")
            return _search(model, work, layout, opts, plan_options, fmt, emit)
        from sizing.parallel import parallel_plan

        plan = parallel_plan(model.config, layout, work, name=model.name, **plan_options)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    answer_plan(plan, fmt, *emit)
    if not plan.memory_verdict.may_fit:
        raise SystemExit(EXIT_DOES_NOT_FIT)


def _workload(opts: dict, seq_len: int, search: bool):
    """What is run, from the options (sizing.inputs.Workload): recompute left to a search when
    not given; the GPUs and global batch as given (a search fills them in)."""
    from sizing.inputs import Workload

    given_recompute = opts.pop("recompute")
    modules = _recompute_modules(opts.pop("recompute_modules"))  # Megatron's: under selective recompute
    adapters = opts.get("lora_rank") is not None or opts.get("lora_targets") is not None
    if adapters and opts.get("finetune") not in ("lora", "qlora"):  # as sizing memory: never ignored silently
        raise UserError("--lora-rank and --lora-targets apply to --finetune lora or qlora")
    return Workload(
        seq_len,
        precision=opts.pop("precision") or DEFAULT_PRECISION,
        optimizer=opts.pop("optimizer") or DEFAULT_OPTIMIZER,
        recompute=given_recompute or ("selective" if modules else None if search else "none"),
        attention_impl=opts.pop("attention_impl") or "flash",
        global_batch=opts.get("global_batch"),
        tokens=opts.pop("tokens"),
        gpus=opts.get("gpus"),
        finetune=opts.get("finetune") or "full",
        loss=opts.pop("cross_entropy"),
        selective=opts.pop("selective"),
        recompute_modules=modules,
    )


def _recompute_modules(text: str | None) -> tuple[str, ...] | None:
    """--recompute-modules as a tuple of names (sizing.inputs.Workload checks each)."""
    return None if text is None else tuple(part.strip() for part in text.split(","))


def _plan_options(opts: dict, gpu_key: str, work) -> dict:
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
        "mfu": opts.pop("mfu"),
        "compute_efficiency": opts.pop("compute_efficiency"),
        "overlap": overlap,
        "nvlink_gbs": opts.pop("nvlink_gbs"),
        "network_gbs": opts.pop("network_gbs"),
    }
    stack = opts.pop("stack")
    memory = {"fp8_recipe": opts.pop("fp8_recipe"), "grad_reduce": opts.pop("grad_reduce")}
    memory["fp8_params"] = opts.pop("fp8_param_gather")
    if (memory["fp8_recipe"] or memory["fp8_params"] is not None) and work.precision != "fp8":
        raise UserError("--fp8-recipe and --fp8-param-gather apply to --precision fp8")
    given = {k: v for k, v in memory.items() if v is not None}
    if stack is not None or work.precision == "fp8" or out["nvlink_gbs"] or out["network_gbs"] or given:
        from sizing.parallel import StepOptions

        out["step_options"] = StepOptions(
            stack=stack or DEFAULT_STACK,
            precision="fp8" if work.precision == "fp8" else "bf16",
            nvlink_gbs=out["nvlink_gbs"],
            network_gbs=out["network_gbs"],
            **given,
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
    dims = {d: opts.get(d) for d in _LAYOUT_DIMS}
    search = all(v is None for v in dims.values())
    gpus = opts.get("gpus")
    tp, pp, cp, ep, etp = (dims[d] or 1 for d in ("tp", "pp", "cp", "ep", "etp"))
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
        "etp": etp,
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
    }
    if opts.get("lora_rank") is not None:
        fields["lora_rank"] = opts["lora_rank"]
    if opts.get("stage_layers") is not None and not search:
        fields["stage_layers"] = _stage_layers(opts["stage_layers"], pp)
    targets = _targets(opts.get("lora_targets"))
    if targets is not None:
        fields["lora_targets"] = targets
    fields.update(lora_options(opts.get("lora_base"), opts.get("lora_trained")))
    if search:
        given = {"--zero": "zero", "--sp": "sequence_parallel", "--micro-batches": "micro_batches"}
        given.update({"--v": "v", "--schedule": "schedule", "--stage-layers": "stage_layers"})
        for option, name in given.items():
            if opts.get(name) not in (None, False):
                raise UserError(
                    f"{option} sets a layout: give --dp/--tp/--pp/--cp too, or leave the layout to the search"
                )
        fields.update(tp=1, pp=1, cp=1, ep=1, etp=1, dp=1, micro_batches=1)
    layout = ParallelLayout(**fields)
    if not search and gpus is not None:
        layout.check_world(gpus)
    return layout, search


def _seq_len(model, config_path, seq_len, finetune) -> int:
    """--seq-len, else a fine-tuning context with --finetune, else the model's training context."""
    from sizing.cli.estimate import default_seq_len

    if seq_len is None and finetune is not None:
        return DEFAULT_FINETUNE_SEQ_LEN
    return default_seq_len(model, config_path, seq_len)[0]


def _search(model, work, base, opts, plan_options, fmt, emit):
    from sizing.parallel import min_gpus_that_fit, predict_run, search_layout, would_fit
    from sizing.render import render_no_fit

    plan_options = {**plan_options, "name": model.name}
    max_gpus = opts.get("max_gpus") or 2**15
    first_fit = opts.get("verdict_only", False)  # the UI's fits-on list asks only whether a layout fits
    gpu = plan_options.pop("gpu")
    best = predict_run(model.config, work, gpu, base=base, max_gpus=max_gpus, first_fit=first_fit, **plan_options)
    if best is not None:  # the one answer: the same call as `sizing estimate --gpus N`
        answer_plan(best, fmt, *emit)
        return
    plan_options["gpu"] = gpu
    # what was searched, for the no-fit
    result = search_layout(model.config, work, max_gpus, base, first_fit=first_fit, **plan_options)
    if work.gpus is None or first_fit:
        click.echo(render_no_fit(model.name, result.gpus, plan_options["gpu"], [], fmt))
    else:
        alternatives = would_fit(model.config, work, base, more_gpus=False, **plan_options)
        fewest = min_gpus_that_fit(model.config, work, base=base, **plan_options)
        if fewest is not None and fewest.layout.world > work.gpus:  # the count `sizing memory` quotes too
            alternatives.append((f"{fewest.layout.world} GPUs", fewest))
        click.echo(render_no_fit(model.name, result.gpus, plan_options["gpu"], alternatives, fmt))
    raise SystemExit(EXIT_DOES_NOT_FIT)
