"""`sizing ui`: the calculator in a browser, served from this machine (sizing/ui/)."""

from __future__ import annotations

import click

from sizing.cli.options import Count


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (this machine only by default).")
@click.option(
    "--port",
    type=Count("--port", minimum=0, maximum=65535),
    default=8765,
    show_default=True,
    help="TCP port to listen on (0: any free port).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the default browser.")
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
