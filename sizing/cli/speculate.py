"""`sizing speculate`: what speculative decoding (a draft model or MTP heads) buys, on the roofline."""

from __future__ import annotations

import click

from sizing.cli.common import FORMATS, UserError, model_options, resolve_model
from sizing.cli.options import GPU_NAME, Choice, Count, Length, Number
from sizing.serve import WEIGHT_CHOICES
from sizing.vocabulary import DEFAULT_GPU, STORAGE_DTYPES


@click.command()
@model_options
@click.option("--draft", metavar="PRESET", help="A draft model preset (same vocabulary); default: MTP heads.")
@click.option("--k", "k", type=Count("--k", maximum=64), default=4, show_default=True, help="Tokens proposed per step.")
@click.option(
    "--acceptance",
    type=Number("--acceptance", 0, 1, exclusive_minimum=False, what="a number in [0, 1]"),
    default=0.7,
    show_default=True,
    help="Probability each proposed token is accepted.",
)
@click.option("--context", "-C", type=Length("--context"), default=4096, show_default=True)
@click.option("--batch", "-b", type=Count("--batch"), default=1, show_default=True)
@click.option("--gpu", type=GPU_NAME, default=DEFAULT_GPU, show_default=True, help="GPU name (see `sizing gpus`).")
@click.option(
    "--weight-dtype",
    type=Choice("--weight-dtype", WEIGHT_CHOICES),
    default="bf16",
    show_default=True,
    help="A dtype or a deployed format (see `sizing memory --quant`).",
)
@click.option("--kv-dtype", type=Choice("--kv-dtype", STORAGE_DTYPES), default="bf16", show_default=True)
@click.option("--format", "fmt", type=Choice("--format", FORMATS), default="table", show_default=True)
def speculate(preset, config_path, overrides, draft, k, acceptance, context, batch, gpu, weight_dtype, kv_dtype, fmt):
    """Speculative decoding: expected tokens per target step, speedup and the break-even acceptance rate.

    A drafter (--draft PRESET, or MTP/EAGLE-style heads: one block of the target sharing its
    embedding and lm_head) proposes --k tokens; the target verifies them in one forward of
    k + 1 tokens. E = (1 - a^(k+1)) / (1 - a) tokens per step (Leviathan et al. 2023).

    \b
    Example:
      sizing speculate --preset llama2-70b --draft llama2-7b --k 4 --acceptance 0.7 --gpu h200
      sizing speculate --preset deepseek-v3 --k 1 --acceptance 0.85 --batch 256 --weight-dtype fp8
    """
    from sizing.inputs import get_preset
    from sizing.render import render_speculation
    from sizing.serve import speculate as run

    model = resolve_model(preset, config_path, overrides)
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
