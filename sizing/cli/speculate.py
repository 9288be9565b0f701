"""`sizing speculate`: what speculative decoding (a draft model or MTP heads) buys, on the roofline."""

from __future__ import annotations

import click

from sizing.cli.common import UserError, resolve_model
from sizing.cli.option_layer import model_options, option
from sizing.vocabulary import DEFAULT_GPU


@click.command()
@model_options
@option("draft")
@option("k")
@option("acceptance")
@option("context", default=4096)
@option("batch", default=1, short="-b")
@option("gpu", default=DEFAULT_GPU)
@option("weight_dtype", default="bf16")
@option("quant", help="Weights in a deployed format (see `sizing memory --quant`) instead of --weight-dtype.")
@option("kv_dtype", default="bf16")
@option("format")
def speculate(
    preset, config_path, overrides, draft, k, acceptance, context, batch, gpu, weight_dtype, quant, kv_dtype, fmt
):
    """Speculative decoding: expected tokens per target step, speedup and the break-even acceptance rate.

    A drafter (--draft PRESET, or MTP/EAGLE-style heads: one block of the target sharing its
    embedding and lm_head) proposes --k tokens; the target verifies them in one forward of
    k + 1 tokens. E = (1 - a^(k+1)) / (1 - a) tokens per step (Leviathan et al. 2023).

    \b
    Example:
      sizing speculate --preset llama2-70b --draft llama2-7b --k 4 --acceptance 0.7 --gpu h200
      sizing speculate --preset deepseek-v3 --k 1 --acceptance 0.85 --batch 256 --weight-dtype fp8
      sizing speculate --preset gpt-oss-120b --k 2 --quant mxfp4-experts
    """
    from sizing.inputs import get_preset
    from sizing.render import render_speculation
    from sizing.serve import speculate as run

    model = resolve_model(preset, config_path, overrides)
    if quant is not None:  # --quant names the weight format in place of --weight-dtype
        if click.get_current_context().get_parameter_source("weight_dtype").name != "DEFAULT":
            raise UserError(f"--quant {quant} names the weight format; leave out --weight-dtype {weight_dtype}")
        weight_dtype = quant
    draft_cfg = None
    if draft is not None:
        try:
            draft_cfg = get_preset(draft).config
        except KeyError as exc:
            raise UserError(f"--draft: {exc.args[0] if exc.args else draft}") from None
    result = run(model.config, k, acceptance, draft_cfg, context, batch, gpu, weight_dtype, kv_dtype, draft_name=draft)
    drafter = f"draft {draft}" if draft else "MTP heads"
    title = f"Speculative decoding of {model.name} with {drafter} on {gpu}: batch {batch}, context {context}"
    click.echo(render_speculation(result, fmt, title).rstrip("\n"))
