"""The workload options the planning commands share (compare, plan): context, attention and
recompute conventions, GPU, dtype, MFU, GPUs and price. Each takes one value: a second
occurrence is an error (sizing.cli.single)."""

from __future__ import annotations

from sizing.cli.common import FORMATS
from sizing.cli.options import GPU_NAME, MFU_TYPE, PRICE_TYPE, Choice, Count, Length
from sizing.cli.single import one_value_option
from sizing.vocabulary import (
    ATTENTION_CONVENTIONS,
    COMPUTE_DTYPES,
    DEFAULT_ATTENTION,
    DEFAULT_GPU,
    DEFAULT_MFU,
    DEFAULT_RECOMPUTE,
    RECOMPUTE_MODES,
)


def format_option(func):
    return one_value_option(
        "--format", "fmt", type=Choice("--format", FORMATS), default="table", help="Output format."
    )(func)


def conventions_options(func):
    """--seq-len, --attention, --recompute."""
    for option in reversed(
        (
            one_value_option("--seq-len", "-T", type=Length("--seq-len"), help="Tokens per sequence."),
            one_value_option(
                "--attention",
                type=Choice("--attention", ATTENTION_CONVENTIONS),
                default=DEFAULT_ATTENTION,
                help="full: T keys per query; causal: T(T+1)/2 pairs per sequence.",
            ),
            one_value_option(
                "--recompute",
                type=Choice("--recompute", RECOMPUTE_MODES),
                default=DEFAULT_RECOMPUTE,
                help="Activation recomputation: full adds one forward of the blocks.",
            ),
        )
    ):
        func = option(func)
    return func


def hardware_options(func):
    """--gpu, --dtype, --mfu, --gpus, --price."""
    for option in reversed(
        (
            one_value_option("--gpu", type=GPU_NAME, default=DEFAULT_GPU, help="GPU name (see `sizing gpus`)."),
            one_value_option(
                "--dtype", type=Choice("--dtype", COMPUTE_DTYPES), help="Peak rate to use (default: bf16)."
            ),
            one_value_option("--mfu", type=MFU_TYPE, default=DEFAULT_MFU, help="Model FLOPs utilisation, in (0, 1]."),
            one_value_option("--gpus", "num_gpus", type=Count("--gpus"), default=1, help="GPUs, for wall-clock days."),
            one_value_option("--price", type=PRICE_TYPE, metavar="USD", help="Price per GPU-hour, for the cost."),
        )
    ):
        func = option(func)
    return func
