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


def hybrid_preset_named(preset: str | None) -> bool:
    """A state-space / linear-attention hybrid (sizing.hybrid): its inference memory is the
    KV cache of its attention layers plus a fixed state, which `sizing hybrid` computes."""
    if preset is None:
        return False
    from sizing.hybrid import HYBRID_PRESETS

    return preset.strip().lower() in {p.name for p in HYBRID_PRESETS}


def vision_preset_named(preset: str | None) -> bool:
    from sizing.vision import VISION_PRESETS

    return preset is not None and preset.strip().lower() in {p.name for p in VISION_PRESETS}


def vlm_inference(preset: str, overrides, fmt: str, **options) -> None:
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
        result = serve_vlm(
            preset.strip().lower(), context, 2, options["batch"] or 1, options["gpu"] or "h100", options["tp"] or 1,
            weights, kv, images, size,
        )  # fmt: skip
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_other_serve(result, fmt, memory_only=True).rstrip("\n"))
    if not result.fits:
        raise SystemExit(EXIT_DOES_NOT_FIT)


def hybrid_inference(preset: str, overrides, fmt: str, **options) -> None:
    """`memory --inference` of a hybrid preset: `sizing hybrid`'s answer (weights, KV cache of the
    attention layers, conv and SSM state, beside an all-attention model of the same shape)."""
    from sizing.cli.hybrid import hybrid

    unsupported = {"--set": overrides or None, "--quant": options["quant"], "--engine": options["engine"]}
    unsupported |= {"--tp": options["tp"], "--prefill-chunk": options["prefill_chunk"], "--images": options["images"]}
    refuse_given(unsupported, "to transformer models (a hybrid's memory is `sizing hybrid`'s)")
    context = options["context"] or options["seq_len"] or 4096
    click.get_current_context().invoke(
        hybrid,
        preset=preset,
        config_path=None,
        context=context,
        batch=options["batch"] or 1,
        weight_dtype=options["weight_dtype"] or "bf16",
        kv_dtype=options["kv_dtype"] or "bf16",
        ssm_dtype="fp32",
        gpu=options["gpu"],
        fmt=fmt,
    )
