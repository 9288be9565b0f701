"""`sizing verify`: check the analytic formulas against the PyTorch reference model.

The command parses options and renders; the checks live in reference_model/verify/registry.py.
torch is imported only inside the command body, so `sizing --help` and every other
command work without it.
"""

from __future__ import annotations

import click
from click.core import ParameterSource

from sizing.cli.common import UserError, resolve_model
from sizing.cli.option_layer import option, options
from sizing.cli.progress import download_progress
from sizing.cli.spec_table_commands import VERIFY_CHECKS
from sizing.inputs import PRESETS, format_int
from sizing.render import csv_text, heading, table
from sizing.validate import SizingError

INSTALL_HINT = "sizing verify needs torch: pip install 'transformer-sizing[verify]'"

# ---- checks hook -------------------------------------------------------------------------
# One boolean flag per check, in run order, declared in sizing/cli/spec_table_commands.py
# (VERIFY_CHECKS); with no flag, every check listed there runs. To add one: append it there and
# register a function of the same name in reference_model.verify.registry.CHECKS; check-specific
# options (--seq-len, --counter: the FLOP check's) are passed on to every check as keyword
# arguments (`check_options` below) and given on the command line only when their check runs.
CHECK_FLAGS = VERIFY_CHECKS


# --preset is repeatable here (several models in one run): the shared option, `multiple`.
@click.command()
@options(*(option(f"check_{name}") for name, _ in CHECK_FLAGS))
@option("preset", dest="presets", multiple=True, help="A preset name (see `sizing presets`); repeatable.")
@option("all")
@option("config")
@option("set", help="Override a config field, e.g. --set n_layers=48 (repeatable; applies to every model).")
@option(
    "seq_len",
    help="FLOP check: tokens per sequence at full size (default: the preset's training context, else 2048; at "
    "most a learned position table).",
)
@option("counter")
@option("check_parallel")
@option("check_hybrid")
@option("format")
@click.pass_context
def verify(
    ctx, presets, all_presets, config_path, overrides, seq_len, counter, fmt, check_parallel, check_hybrid, **flags
):
    """Check the formulas against the PyTorch reference model (needs torch).

    Prints component | formula | counted | difference for each model and exits 1 on any
    difference. With no check flag, every available check runs.

    \b
    Example:
      sizing verify --params --preset gpt2 --preset mixtral-8x7b
      sizing verify --all --format markdown
      sizing verify --params --config config.json --set n_layers=4
    """
    standalone = [name for name, on in (("parallel", check_parallel), ("hybrid", check_hybrid or all_presets)) if on]
    if standalone and not (presets or all_presets or config_path or any(flags.values())):
        models, checks = [], []  # --parallel and/or --hybrid alone: no model needed
    else:
        with download_progress(fmt):  # a hub id's config.json: the hub's own bar on a terminal
            models = _models(presets, all_presets, config_path, overrides)
        checks = [name for name, _ in CHECK_FLAGS if flags.get(f"check_{name}")] or [name for name, _ in CHECK_FLAGS]
    given = [
        option
        for option, name in (("--seq-len", "seq_len"), ("--counter", "counter"))
        if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE
    ]
    if given and "flops" not in checks:
        raise UserError(
            f"{' and '.join(given)} {'applies' if len(given) == 1 else 'apply'} to the FLOP check only: add --flops"
        )
    # --all: each preset's full-size FLOP count at one period of its blocks (reference_model/verify/flops.py)
    check_options: dict = {"seq_len": seq_len, "counter": counter, "shallow": bool(all_presets)}

    from reference_model.counting import full_size_seq_len  # torch-free: checked before torch loads

    if "flops" in checks:  # a T beyond a learned position table, or too long to size on meta: before any check runs
        for name, cfg in models:
            try:
                full_size_seq_len(name, cfg, seq_len, option="--seq-len")
            except SizingError as exc:
                raise UserError(str(exc)) from None
    try:
        import torch  # noqa: F401  (only to say how to install it: the reference model needs it)
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    from reference_model.verify import check_units

    results = _run(check_units(models, checks, standalone, **check_options), fmt)
    click.echo(_render(results, fmt), nl=False)
    if not all(r.ok for r in results):
        raise SystemExit(1)


def _run(units, fmt) -> list:
    """Every unit on every CPU (reference_model/verify/runner.py), the results in the serial
    order; on a terminal a bar counts the checks and a mismatch is written as it is found."""
    from reference_model.verify import iter_checks, ordered
    from sizing.cli.progress import progress_bar

    finished = []
    with progress_bar(sum(unit.size for unit in units), "verify", fmt) as bar:
        for unit, results in iter_checks(units):
            finished.append((unit, results))
            for r in results:
                if not r.ok:
                    bar.note(f"MISMATCH {r.model} ({r.check})")
            bar.advance(unit.size, unit.label)
    return ordered(finished)


def _models(presets, all_presets, config_path, overrides):
    if all_presets and (presets or config_path):
        raise UserError("give --all alone, or --preset NAME ... / --config PATH")
    if config_path and presets:
        raise UserError("give either --preset or --config, not both")
    names = list(PRESETS) if all_presets else list(presets)
    if config_path:
        choice = resolve_model(None, config_path, overrides)
        return [(choice.name, choice.config)]
    if not names:
        raise UserError("no model given: use --preset NAME (repeatable), --all, or --config PATH")
    out = []
    for name in names:
        choice = resolve_model(name, None, overrides)
        out.append((choice.name, choice.config))
    return out


def _cell(value, fmt):
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    if fmt in ("table", "markdown"):
        return format_int(value)
    return value


def _render(results, fmt) -> str:
    if fmt == "json":
        import json

        return (
            json.dumps({"ok": all(r.ok for r in results), "results": [r.to_dict() for r in results]}, indent=2) + "\n"
        )
    if fmt == "csv":
        blocks, last = [], None
        for r in results:
            headers = ["model", "check"] + r.headers
            text = csv_text(headers, [[r.model, r.check] + row for row in r.rows])
            blocks.append(text if headers != last else text.split("\n", 1)[1])
            last = headers
        return "".join(blocks)
    parts = []
    for r in results:
        status = "OK" if r.ok else "MISMATCH"
        parts.append(heading(f"{r.model}: {r.check} {status}", fmt, level=2))
        if fmt == "markdown":
            parts.append("")
        parts.append(table(r.headers, [[_cell(c, fmt) for c in row] for row in r.rows], fmt))
        parts.extend(r.notes)
        parts.append("")
    bad = [f"{r.model} ({r.check})" for r in results if not r.ok]
    models = len({r.model for r in results})
    parts.append(
        f"{len(bad)} mismatch(es): {', '.join(bad)}"
        if bad
        else f"all {len(results)} check(s) on {models} model(s) match"
    )
    return "\n".join(parts) + "\n"
