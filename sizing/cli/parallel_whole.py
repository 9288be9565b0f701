"""`sizing parallel` of a model that is not one stack of attention + MLP blocks (sizing.cli.any_model's
one door): a hybrid is laid out as sizing.parallel lays out a stack, its layers by kind
(sizing.hybrid.HybridConfig: the state mixers' tensors, activations and time per rank); a
vision-language model as its language model with the tower and projector on the first stage
(sizing.vision.VisionConfig, with --images and --image-size per training sequence); Gemma 3n and any
model counted by transformers are trained data-parallel with ZeRO / FSDP (sizing.whole.parallel)."""

from __future__ import annotations

import click

from sizing.cli.common import ModelChoice, UserError
from sizing.cli.from_file import given as option_given
from sizing.validate import SizingError

EXIT_DOES_NOT_FIT = 3
# what a data-parallel plan of a whole model honours; any other option given is refused, never ignored
_HONOURED = ("gpu", "gpus", "zero", "micro_batch", "global_batch", "precision", "optimizer", "tokens")
_HONOURED += ("compute_efficiency", "max_gpus", "seq_len", "fmt", "run_remote_code", "preset", "config_path")
_HONOURED += ("overrides", "from_file", "from_format")


def refuse_images(images, image_size) -> None:
    if images is not None or image_size is not None:
        raise UserError("--images and --image-size apply to a vision-language model")


def native_choice(source, images, image_size) -> ModelChoice:
    """A hybrid's HybridConfig or a vision-language model's VisionConfig, as the stack path takes a model."""
    from sizing.hybrid import HYBRID_CONVERTERS, hybrid_config, hybrid_from_hf_config
    from sizing.inputs.hf import resolve_model_type
    from sizing.vision import VISION_TYPES, parse_image_size, vision_config, vlm_from_hf_config

    try:
        if source.kind == "hybrid":
            refuse_images(images, image_size)
            data = dict(source.data, model_type=resolve_model_type(source.data, HYBRID_CONVERTERS))
            cfg = hybrid_config(hybrid_from_hf_config(dict(data, _name_or_path=source.name)))
        else:
            data = dict(source.data, model_type=resolve_model_type(source.data, VISION_TYPES))
            size = parse_image_size(image_size or "896x896")
            cfg = vision_config(*vlm_from_hf_config(data), images=1 if images is None else images, image_size=size)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    return ModelChoice(source.name, cfg, None)


def parallel_of_whole_model(source, run_remote_code: bool, kwargs: dict, run_parallel) -> None:
    """`sizing parallel` of a WholeSource (module docstring); `run_parallel(model, T, opts)` is the
    command's own plan of a stack, which takes a HybridConfig or a VisionConfig as well."""
    from sizing.cli.any_model import whole_model
    from sizing.whole import default_context

    opts = {k: v for k, v in kwargs.items() if k not in ("preset", "config_path", "overrides", "seq_len")}
    images, image_size = opts.pop("images"), opts.pop("image_size")
    seq_len = kwargs.get("seq_len")
    if source.kind in ("hybrid", "vision-language"):
        if seq_len is None:
            try:
                seq_len, _ = default_context(source.data, source.name)
            except SizingError as exc:
                raise UserError(str(exc)) from None
        return run_parallel(native_choice(source, images, image_size), seq_len, opts)
    refuse_images(images, image_size)
    ctx = click.get_current_context()
    given = [p.opts[0] for p in ctx.command.params if p.name not in _HONOURED and option_given(ctx, p.name)]
    if given:
        raise UserError(
            f"{', '.join(given)}: {source.name} is trained data-parallel with ZeRO / FSDP at a constant compute "
            "efficiency (no per-operation model of its layers): give --gpus, --zero, --micro-batch, --global-batch, "
            "--precision, --optimizer, --compute-efficiency"
        )
    model = whole_model(source, seq_len, "full", run_remote_code)
    _whole_plan(model, opts)


def _whole_plan(model, opts: dict) -> None:
    from sizing.inputs import default_gpu_for, get_gpu
    from sizing.render import render_whole_parallel
    from sizing.whole import whole_parallel_plan

    try:
        gpu = get_gpu(opts.get("gpu") or default_gpu_for(None)).key
        plan = whole_parallel_plan(
            model,
            opts.get("gpus"),
            gpu,
            zero=opts.get("zero"),
            micro_batch=opts.get("micro_batch") or 1,
            global_batch=opts.get("global_batch"),
            precision=opts.get("precision") or "bf16-mixed",
            optimizer=opts.get("optimizer") or "adamw",
            tokens=opts.get("tokens"),
            efficiency=opts.get("compute_efficiency"),
            max_gpus=opts.get("max_gpus"),
        )
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_whole_parallel(plan, opts.get("fmt") or "table").rstrip("\n"))
    if plan.memory["fits"] is False:
        raise SystemExit(EXIT_DOES_NOT_FIT)
