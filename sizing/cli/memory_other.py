"""`sizing memory --inference` of the presets that are not attention + MLP stacks: a hybrid
(`sizing hybrid`'s answer) and a vision-language model (its language model with the image tokens
and the tower's weights, sizing.serve.hybrid_vlm), and the one-line refusal of options that do not
apply (cli/memory.py uses it too)."""

from __future__ import annotations

import click

from sizing.cli.common import UserError
from sizing.validate import SizingError

EXIT_DOES_NOT_FIT = 3  # = cli/memory.py's: the report is printed, the model does not fit


def refuse_given(options: dict, applies: str) -> None:
    """A UserError naming the options given (not None) that apply only to the other mode."""
    given = [name for name, value in options.items() if value is not None]
    if given:
        raise UserError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} {applies}")


def other_inference(source, kwargs: dict) -> None:
    """`memory --inference` of a hybrid or vision-language preset or config (sizing.cli.any_model's
    WholeSource): `sizing hybrid`'s answer, or the VLM's language model with the image tokens."""
    options = {k: v for k, v in kwargs.items() if k not in ("preset", "config_path", "overrides", "inference", "fmt")}
    preset, config_path = kwargs.get("preset"), kwargs.get("config_path")
    if source.kind == "hybrid":
        return hybrid_inference(preset, kwargs.get("overrides"), kwargs["fmt"], config_path=config_path, **options)
    model = preset
    if preset is None:
        from sizing.inputs.hf import resolve_model_type
        from sizing.vision import VISION_TYPES, vlm_from_hf_config

        try:
            model = vlm_from_hf_config(dict(source.data, model_type=resolve_model_type(source.data, VISION_TYPES)))
        except SizingError as exc:
            raise UserError(str(exc)) from None
    return vlm_inference(model, kwargs.get("overrides"), kwargs["fmt"], name=source.name, **options)


def vlm_inference(preset, overrides, fmt: str, name: str | None = None, **options) -> None:
    """`memory --inference` of a vision-language preset: the language model's weights and KV cache
    at --context text tokens plus the image tokens, the prefill peak, and the tower's and
    projector's weights (sizing.serve.hybrid_vlm, the same numbers `sizing serve` prints)."""
    from sizing.render import render_other_serve
    from sizing.serve import serve_vlm
    from sizing.vision import parse_image_size

    unsupported = {"--set": overrides or None, "--quant": options["quant"], "--engine": options["engine"]}
    refuse_given(unsupported | {"--prefill-chunk": options["prefill_chunk"]}, "to transformer models")
    context = options["context"] or options["seq_len"] or 4096
    try:
        size = parse_image_size(options["image_size"] or "896x896")
        images = 1 if options["images"] is None else options["images"]
        weights, kv = options["weight_dtype"] or "bf16", options["kv_dtype"] or "bf16"
        model = preset.strip().lower() if isinstance(preset, str) else preset  # a preset, or a config's pair
        result = serve_vlm(
            model, context, 2, options["batch"] or 1, options["gpu"] or "h100", options["tp"] or 1,
            weights, kv, images, size, name=name,
        )  # fmt: skip
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_other_serve(result, fmt, memory_only=True).rstrip("\n"))
    if not result.fits:
        raise SystemExit(EXIT_DOES_NOT_FIT)


def hybrid_inference(preset: str | None, overrides, fmt: str, config_path: str | None = None, **options) -> None:
    """`memory --inference` of a hybrid preset or config: `sizing hybrid`'s answer (weights, KV cache
    of the attention layers, conv and SSM state, beside an all-attention model of the same shape)."""
    from sizing.cli.hybrid import hybrid

    unsupported = {"--set": overrides or None, "--quant": options["quant"], "--engine": options["engine"]}
    unsupported |= {"--tp": options["tp"], "--prefill-chunk": options["prefill_chunk"], "--images": options["images"]}
    refuse_given(unsupported, "to transformer models (a hybrid's memory is `sizing hybrid`'s)")
    context = options["context"] or options["seq_len"] or 4096
    click.get_current_context().invoke(
        hybrid,
        preset=preset,
        config_path=config_path,
        context=context,
        batch=options["batch"] or 1,
        weight_dtype=options["weight_dtype"] or "bf16",
        kv_dtype=options["kv_dtype"] or "bf16",
        ssm_dtype="fp32",
        gpu=options["gpu"],
        fmt=fmt,
    )
