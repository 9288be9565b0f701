"""`sizing ui`: the calculator in a browser, served from this machine (sizing/ui/)."""

from __future__ import annotations

import click

from sizing.cli.option_layer import option


@click.command()
@option("host")
@option("port")
@option("open")
def ui(host, port, open_browser):
    """The calculator in a browser: every question of the CLI on one page, with charts.

    Serves a static page and a JSON API (the same functions and JSON as --format json) until
    Ctrl+C. Nothing is loaded from the network; the page works offline.

    \b
    Example:
      sizing ui --open
      sizing ui --port 9000
    """
    from sizing.ui import serve_forever

    try:
        serve_forever(host, port, open_browser)
    except OSError as exc:
        from sizing.cli.common import UserError

        raise UserError(f"--host {host} --port {port}: cannot listen ({exc.strerror or exc})") from None
