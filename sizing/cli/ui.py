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
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow a --host other than this machine's (127.0.0.1, ::1, localhost; '' and 0.0.0.0 are every "
    "interface). It exposes the page and its JSON API, without authentication, to every machine that can "
    "reach that address: anyone there can run any calculation (and keep this machine's CPU busy).",
)
def ui(host, port, open_browser, allow_remote):
    """The calculator in a browser: every question of the CLI on one page, with charts.

    Serves a static page and a JSON API (the same functions and JSON as --format json) until
    Ctrl+C. Nothing is loaded from the network; the page works offline.

    \b
    Example:
      sizing ui --open
      sizing ui --port 9000
    """
    from sizing.cli.common import UserError
    from sizing.ui import is_loopback, serve_forever

    if not is_loopback(host) and not allow_remote:
        shown = "every interface" if host.strip() in ("", "0.0.0.0", "::") else "another machine's network"
        raise UserError(
            f"--host ({host!r}) would serve {shown}, not this machine only; add --allow-remote to expose the "
            "calculator there (no authentication), or leave --host out"
        )

    try:
        serve_forever(host, port, open_browser)
    except OSError as exc:
        raise UserError(f"--host {host} --port {port}: cannot listen ({exc.strerror or exc})") from None
