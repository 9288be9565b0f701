"""`sizing plan`: compute-optimal N and D for a budget under each scaling law, then shapes."""

from __future__ import annotations

import click

from sizing.cli.common import UserError
from sizing.cli.option_layer import option
from sizing.validate import SizingError
from sizing.vocabulary import DEFAULT_GPU, DEFAULT_MFU


@click.command()
@option("flops", needs=("!days",))
@option(
    "gpus",
    help="GPUs: with --days, the budget; always, the GPUs the shapes' layouts are searched on (with --mfu, "
    "the fit check's ZeRO-3 degree).  [default: the fewest each shape's layout needs]",
)
@option("days", needs=("gpus", "!flops"))
@option("gpu", default=DEFAULT_GPU)
@option(
    "mfu",
    help="A constant whole-run MFU in (0, 1] instead of the step model.  [default: each shape's step-model MFU on "
    f"the layout `sizing parallel` finds; {DEFAULT_MFU} where no layout fits or the GPU has no step-time constants]",
)
@option("law")
@option("like", default="llama3-8b")
@option("seq_len", default=4096, help="Context of the shapes.")
@option("inference_tokens")
@option("format")
@option("verdict_only")
def plan(flops, gpus, days, gpu, mfu, law, like, seq_len, inference_tokens, fmt, verdict_only):
    """Compute-optimal sizing: N_opt, D_opt and predicted loss for a budget, then shapes.

    The budget is --flops, or --gpus x --days on --gpu at --mfu (default: the step model's MFU of
    the balanced shape that budget gives). N_opt and D_opt come from
    Hoffmann et al. 2022 (Approach 1's projection, Approach 3's fitted law), the Epoch AI
    replication (Besiroglu et al. 2024) and the ~20 tokens per parameter rule, each with its
    coefficients and source. Then three shapes near N_opt, at the width-to-depth ratios of
    published families, with exact params, FLOPs, and, from the step model on the layout
    `sizing parallel` finds for each (on --gpus GPUs, else the fewest that fit), its MFU, GPU-hours
    and days with their band and the layout; --mfu X instead prices them at a constant MFU and
    checks the fit with ZeRO-3 over --gpus GPUs.

    \b
    Example:
      sizing plan --flops 1e23
      sizing plan --gpus 1024 --days 30 --gpu h100 --mfu 0.4
      sizing plan --flops 5.76e23 --inference-tokens 10T --format json
    """
    from sizing.plan import plan as run_plan
    from sizing.render import render_plan

    if (flops is None) == (days is None):
        raise UserError("give a budget: --flops C, or --gpus N --days D (not both)")
    if days is not None and gpus is None:
        raise UserError("--days needs --gpus (the budget is GPUs x days x peak x MFU)")
    try:
        result = run_plan(
            flops,
            gpus=gpus,
            days=days,
            gpu=gpu,
            mfu=mfu,
            law=law,
            like=like,
            seq_len=seq_len,
            inference_tokens=inference_tokens,
        )
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_plan(result, fmt, like), nl=False)
