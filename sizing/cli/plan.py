"""`sizing plan`: compute-optimal N and D for a budget under each scaling law, then shapes."""

from __future__ import annotations

import click

from sizing.cli.common import UserError
from sizing.cli.options import GPU_NAME, MFU_TYPE, VERDICT_ONLY, Choice, Count, Length, Number, Quantity
from sizing.cli.single import one_value_option
from sizing.cli.workload import format_option
from sizing.validate import SizingError
from sizing.vocabulary import DEFAULT_GPU, DEFAULT_MFU


@click.command()
@one_value_option(
    "--flops",
    type=Number("--flops", 1e10, 1e30, exclusive_minimum=False, what="a FLOP budget between 1e10 and 1e30"),
    help="The compute budget C in FLOPs, e.g. 1e23.",
)
@one_value_option(
    "--gpus", type=Count("--gpus"), help="GPUs: with --days, the budget; always, the fit check's ZeRO-3 degree."
)
@one_value_option(
    "--days",
    type=Number("--days", 0, 1e6, what="a number of days in (0, 1e6]"),
    help="Days of training on --gpus GPUs (the budget is GPUs x days x peak x MFU).",
)
@one_value_option("--gpu", type=GPU_NAME, default=DEFAULT_GPU, help="GPU name (see `sizing gpus`).")
@one_value_option("--mfu", type=MFU_TYPE, default=DEFAULT_MFU, help="Model FLOPs utilisation, in (0, 1].")
@one_value_option(
    "--law",
    type=Choice("--law", ("epoch", "hoffmann-a3", "hoffmann-a1", "20-tokens")),
    default="epoch",
    help="The law whose N_opt the shapes are built around.",
)
@one_value_option(
    "--like", metavar="PRESET", default="llama3-8b", help="The family of the shapes (vocab, MLP, norm, FFN ratio)."
)
@one_value_option("--seq-len", "-T", type=Length("--seq-len"), default=4096, help="Context of the shapes.")
@one_value_option(
    "--inference-tokens",
    metavar="N",
    type=Quantity("--inference-tokens"),
    help="Tokens to be served (e.g. 10T): adds Sardana et al.'s inference-aware optimum.",
)
@format_option
@VERDICT_ONLY
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
