"""`sizing plan`: compute-optimal N and D for a budget under each scaling law, then shapes."""

from __future__ import annotations

import click

from sizing.cli.common import UserError
from sizing.cli.option_layer import option
from sizing.validate import SizingError
from sizing.vocabulary import DEFAULT_GPU, DEFAULT_MFU


@click.command()
@option("flops")
@option("gpus", help="GPUs: with --days, the budget; always, the fit check's ZeRO-3 degree.")
@option("days")
@option("gpu", default=DEFAULT_GPU)
@option("mfu", default=DEFAULT_MFU, help="Model FLOPs utilisation, in (0, 1].")
@option("law")
@option("like", default="llama3-8b")
@option("seq_len", default=4096, help="Context of the shapes.")
@option("inference_tokens")
@option("format")
@option("verdict_only")
def plan(flops, gpus, days, gpu, mfu, law, like, seq_len, inference_tokens, fmt, verdict_only):
    """Compute-optimal sizing: N_opt, D_opt and predicted loss for a budget, then shapes.

    The budget is --flops, or --gpus x --days at --mfu on --gpu. N_opt and D_opt come from
    Hoffmann et al. 2022 (Approach 1's projection, Approach 3's fitted law), the Epoch AI
    replication (Besiroglu et al. 2024) and the ~20 tokens per parameter rule, each with its
    coefficients and source. Then three shapes near N_opt, at the width-to-depth ratios of
    published families, with exact params, FLOPs, GPU-hours and whether they fit for training
    (ZeRO-3 over --gpus GPUs).

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
            fewest_gpus_hint=not verdict_only,
        )
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_plan(result, fmt, like), nl=False)
