"""`sizing sweep`: a grid over config and run fields, one row per point."""

from __future__ import annotations

import click

from sizing.cli.common import UserError
from sizing.cli.option_layer import option, options
from sizing.validate import SizingError, show

MAX_POINTS = 1_000_000  # a grid past this is a typo (16:65536:1), not a question
SHOWN_SKIPPED = 20  # the text and markdown outputs list this many skipped points, then a count
# (option, run field): the options that give a run field's values
RUN_OPTIONS = (
    ("seq_len", "seq_len"),
    ("attention", "attention"),
    ("recompute", "recompute"),
    ("tokens", "tokens"),
    ("gpu", "gpu"),
    ("dtype", "dtype"),
    ("mfu", "mfu"),
    ("gpus", "num_gpus"),
    ("price", "price_per_gpu_hour"),
)
VIEW_AFTER = [
    "params_total",
    "params_active",
    "training_flops_per_token",
    "training_flops",
    "gpu_hours",
    "days",
    "cost_usd",
]
MEMORY_VIEW = ["inference_memory_bytes", "training_memory_bytes", "training_fits"]


# run fields that have their own option: --tokens 1T,2T is --set tokens=1T,2T (each value is
# checked by the question, sizing.plan.sweep_values, with the same checks as the option's parser)
_run_options = options(*(option(key, dest=field, as_list=True) for key, field in RUN_OPTIONS))


@click.command()
@option("preset", help="The base model: a preset (see `sizing presets`).")
@option("config", help="The base model: a config.json or this tool's JSON.")
@option(
    "set",
    dest="axes",
    help="A grid axis: a config or run field and its values, e.g. n_layers=24,32,48 or n_layers=16:64:8 "
    "(start:stop:step, stop included). Repeatable, one field each.",
)
@_run_options
@option("memory", default=False, help="Add one GPU's memory columns (the full sizing.memory path: ~100 points/s).")
@option("sort")
@option("format")
def sweep(preset, config_path, axes, with_memory, sort, fmt, **run_values):
    """A grid over config and run fields: one row of params, FLOPs, GPU-hours, days and cost
    per point. Points whose config is invalid (heads not dividing d_model) are listed as
    skipped, with the reason.

    \b
    Example:
      sizing sweep -p llama2-7b --set n_layers=24,32,48 --set d_model=4096,5120 --tokens 1T,2T --gpu h100,b200
      sizing sweep -p llama2-7b --set n_layers=16:64:8 --format csv
    """
    from sizing.cli.progress import download_progress, progress_bar
    from sizing.plan import HEADLINE_COLUMNS, MEMORY_COLUMNS, grid_size, sweep_rows
    from sizing.render import render_rows

    if bool(preset) == bool(config_path):
        raise UserError("give one base model: --preset NAME or --config PATH")
    grid = _grid(axes, run_values)
    try:
        size = grid_size(grid)
        if size > MAX_POINTS:
            raise UserError(f"the grid has {size:,} points, more than {MAX_POINTS:,}; narrow an axis")
        # a bar on a terminal when the grid can take a second or more (~20,000 points/s; ~100/s with --memory)
        bar_steps = size if size > (100 if with_memory else 10_000) else 0
        with download_progress(fmt), progress_bar(bar_steps, "sweep", fmt) as bar:
            rows, skipped = sweep_rows(preset or config_path, grid, memory=with_memory, progress=bar.advance)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    columns = list(grid) + [c for c in HEADLINE_COLUMNS + (MEMORY_COLUMNS if with_memory else []) if c not in grid]
    rows = [{c: r.get(c) for c in columns} for r in rows]
    if sort is not None:
        if sort not in columns:
            raise UserError(f"--sort ({show(sort)}) must be one of the columns: {', '.join(columns)}")
        rows.sort(key=lambda r: (r[sort] is None, r[sort] if r[sort] is not None else 0))
    view = list(grid) + [c for c in VIEW_AFTER + (MEMORY_VIEW if with_memory else []) if c not in grid]
    notes = [f"{len(rows):,} of {size:,} points; base {preset or config_path}"]
    if skipped:
        notes.append(f"skipped {len(skipped):,} point(s):")
        notes += [f"  {_point(s.point)}: {s.reason}" for s in skipped[:SHOWN_SKIPPED]]
        if len(skipped) > SHOWN_SKIPPED:
            notes.append(f"  ... and {len(skipped) - SHOWN_SKIPPED:,} more (--format json lists them all)")
    if fmt == "csv":
        if skipped:  # CSV stays one row per point: the skipped ones go to stderr
            click.echo("\n".join(notes[1:]), err=True)
        notes = []
    extra = {"grid": {k: str(v) for k, v in grid.items()}, "skipped": [s.to_dict() for s in skipped]}
    click.echo(render_rows(rows, fmt, view, notes, extra=extra), nl=False)


def _grid(axes: tuple[str, ...], run_values: dict) -> dict[str, str]:
    grid: dict[str, str] = {}
    for item in axes:
        field, sep, values = item.partition("=")
        field = field.strip()
        if not sep or not field or not values.strip():
            raise UserError(f"--set ({show(item)}) must look like FIELD=V1,V2,... e.g. --set n_layers=24,32,48")
        if field in grid:
            raise UserError(f"--set {field} given twice; give all its values once, e.g. {field}=24,32,48")
        grid[field] = values
    for key, field in RUN_OPTIONS:
        value = run_values.get(field)
        if value is not None:
            if field in grid:
                flag = "--" + key.replace("_", "-")
                raise UserError(f"{field} given both as {flag} and as --set {field}=...; give it once")
            grid[field] = value
    return grid


def _point(point: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())
