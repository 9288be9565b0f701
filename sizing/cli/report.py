"""`sizing report`: generated markdown reports and plots (pandas, tabulate, matplotlib are
imported inside the command only)."""

from __future__ import annotations

import sys
from functools import partial

import click

from sizing.cli.common import UserError
from sizing.cli.option_layer import option


@click.command()
@option("out", dest="out_dir", default="reports", help="Folder to write (or, with --check, to check).")
@option("check")
@option("with_verification")
@option("force")
def report(out_dir, check, with_verification, force):
    """Write the reports: an index with every preset, one sheet per preset, published runs
    vs predictions, counting conventions and plots. Output is deterministic.

    \b
    Example:
      sizing report                 # regenerate reports/
      sizing report --check         # exit 1 if reports/ is stale
    """
    missing = [name for name in ("pandas", "tabulate", "matplotlib") if not _importable(name)]
    if missing:
        raise UserError(f"sizing report needs {', '.join(missing)}: pip install 'transformer-sizing[report]'")
    from sizing.cli.progress import progress_bar
    from sizing.report import ReportFolderError, report_steps

    # on a terminal a bar counts the pages as they are built, with the notes above it
    with progress_bar(report_steps(with_verification), "report") as bar:
        run = _check if check else partial(_write, force=force)
        try:
            result = run(out_dir, with_verification, echo=bar.say, on_step=bar.advance)
        except ReportFolderError as exc:
            raise UserError(str(exc)) from None
    _say(out_dir, check, result)


def _check(out_dir, with_verification, **options):
    from sizing.report import check_reports

    return check_reports(out_dir, with_verification, **options)


def _write(out_dir, with_verification, force, **options):
    from sizing.report import write_reports

    return write_reports(out_dir, with_verification, force=force, **options)


def _say(out_dir, check, stale_or_written):
    if check:
        stale = stale_or_written
        if stale:
            click.echo(f"{out_dir}/ is stale ({len(stale)} file(s)); regenerate with `sizing report`:")
            for line in stale:
                click.echo(f"  {line}")
            sys.exit(1)
        click.echo(f"{out_dir}/ is fresh")
        return
    click.echo(f"wrote {len(stale_or_written)} files to {out_dir}/")


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
