"""`sizing memory --inference` of a state-space / linear-attention hybrid preset: `sizing hybrid`'s answer."""

from __future__ import annotations

import click

from sizing.cli.common import UserError


def hybrid_preset(preset: str | None) -> bool:
    """A state-space / linear-attention hybrid (sizing.hybrid): its inference memory is the
    KV cache of its attention layers plus a fixed state, which `sizing hybrid` computes."""
    if preset is None:
        return False
    from sizing.hybrid import HYBRID_PRESETS

    return preset.strip().lower() in {p.name for p in HYBRID_PRESETS}


def hybrid_inference(preset: str, overrides, fmt: str, **options) -> None:
    """`memory --inference` of a hybrid preset: `sizing hybrid`'s answer (weights, KV cache of the
    attention layers, conv and SSM state, beside an all-attention model of the same shape)."""
    from sizing.cli.hybrid import hybrid

    unsupported = {"--set": overrides or None, "--quant": options["quant"], "--engine": options["engine"]}
    unsupported |= {"--tp": options["tp"], "--prefill-chunk": options["prefill_chunk"]}
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


def refuse_given(options: dict, applies: str) -> None:
    """A UserError naming the options given (not None) that apply only elsewhere."""
    given = [name for name, value in options.items() if value is not None]
    if given:
        raise UserError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} {applies}")
