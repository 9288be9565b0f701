"""`sizing ui`: the calculator in a browser, served from this machine (sizing/ui/)."""

from __future__ import annotations

import click

from sizing.cli.option_layer import option


@click.command()
@option("host")
@option("port")
@option("open")
@option("allow_remote")
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
