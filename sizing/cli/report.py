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
    from sizing.report import ReportFolderError, check_reports, write_reports

    def echo(line):
        click.echo(line, err=True)

    try:
        _run(out_dir, check, with_verification, echo, check_reports, partial(write_reports, force=force))
    except ReportFolderError as exc:
        raise UserError(str(exc)) from None


def _run(out_dir, check, with_verification, echo, check_reports, write_reports):
    if check:
        stale = check_reports(out_dir, with_verification, echo=echo)
        if stale:
            click.echo(f"{out_dir}/ is stale ({len(stale)} file(s)); regenerate with `sizing report`:")
            for line in stale:
                click.echo(f"  {line}")
            sys.exit(1)
        click.echo(f"{out_dir}/ is fresh")
        return
    written = write_reports(out_dir, with_verification, echo=echo)
    click.echo(f"wrote {len(written)} files to {out_dir}/")


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
