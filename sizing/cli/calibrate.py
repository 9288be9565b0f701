"""`sizing calibrate`: fit the step model's per-stack overheads to your own measured steps and
write a calibration file that `sizing parallel` and `sizing estimate` take with --calibration."""

from __future__ import annotations

import json
from pathlib import Path

import click

from sizing.cli.common import UserError
from sizing.cli.option_layer import option
from sizing.validate import SizingError


def _summary(s: dict) -> str:
    return f"median |error| {s['median_abs']:.1%}, worst {s['worst']:+.1%}, {s['too_fast']:.0%} too fast"


@click.command("calibrate")
@click.argument("measured", metavar="FILE")
@option(
    "out",
    default="calibration.json",
    help="Where to write the calibration (atomically; nothing is written when a row is bad).  "
    "[default: calibration.json]",
)
@option("format", only=("table", "json"))
def calibrate(measured: str, out: str, fmt: str) -> None:
    """Fit the step model's per-stack overheads to measured steps (JSONL, JSON or CSV rows: preset or
    config, gpu, gpus, seq_len, global_batch, layout fields, precision, recompute, stack, and one of
    step_seconds, tokens_per_second, tokens_per_second_per_gpu or a torchtitan / Megatron log line).
    Prints the error on those steps before and after, cross-validated, and writes a calibration
    file for --calibration."""
    from sizing.parallel import calibrate as fit
    from sizing.report import write_bytes_atomic

    if not Path(measured).is_file():
        raise UserError(f"FILE ({measured}): no such file")
    try:
        result = fit(measured)
    except SizingError as exc:
        raise UserError(str(exc).replace("\n", "\nError: ")) from None
    data = result.to_dict()
    write_bytes_atomic(Path(out), (json.dumps(data, indent=1) + "\n").encode("utf-8"))
    if fmt == "json":
        click.echo(json.dumps(data, indent=1))
        return
    click.echo(f"{result.runs} measured steps from {measured} ({result.sources} source(s))")
    for stack, v in result.fitted.items():
        click.echo(f"  {stack}: overhead {v['before']:+.3f} (built in) -> {v['overhead']:+.3f} ({v['runs']} runs)")
    click.echo(f"before (built-in overheads): {_summary(result.before)}")
    click.echo(f"after (fitted, in sample):   {_summary(result.after)}")
    click.echo(f"after ({result.cv_unit}): {_summary(result.cross_validated)}")
    click.echo(f"wrote {out}: pass it to `sizing parallel` or `sizing estimate` with --calibration {out}")
