"""docs/cli.md, the CLI reference, generated from the commands' own help (so it cannot drift):

python tools/cli_reference.py          # rewrite docs/cli.md
python tools/cli_reference.py --check  # exit 1 if docs/cli.md is stale (tests/test_docs.py does this)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI_MD = ROOT / "docs" / "cli.md"
WIDTH = 100  # help is wrapped at a fixed width, so the file does not depend on the terminal

if str(ROOT) not in sys.path:  # document this checkout's commands, also when run as a script
    sys.path.insert(0, str(ROOT))

# imported after the path set-up above
import click  # noqa: E402

from sizing.cli import main as sizing_main  # noqa: E402
from sizing.report.files import write_bytes_atomic  # noqa: E402


def cli_reference_markdown() -> str:
    parts = [
        "# CLI reference",
        "",
        "Generated from `sizing <command> --help` by `python tools/cli_reference.py`; do not edit.",
        "",
    ]
    # main's context_settings (-h as well as --help) reach every command, as when it runs
    settings = dict(sizing_main.context_settings, terminal_width=WIDTH, max_content_width=WIDTH)
    root = click.Context(sizing_main, info_name="sizing", **settings)
    for name in sizing_main.list_commands(root):
        command = sizing_main.get_command(root, name)
        ctx = click.Context(command, info_name=name, parent=root, **settings)
        parts += [f"## `sizing {name}`", "", "```text", command.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(parts).rstrip() + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Write docs/cli.md from the commands' --help.")
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/cli.md is stale; write nothing")
    args = parser.parse_args(argv)
    fresh = cli_reference_markdown()
    current = CLI_MD.read_text() if CLI_MD.is_file() else None
    if args.check:
        if fresh != current:
            print("docs/cli.md is stale: run `python tools/cli_reference.py`", file=sys.stderr)
            return 1
        return 0
    if fresh != current:
        # a temporary file beside docs/cli.md, then os.replace: never a half-written file
        write_bytes_atomic(CLI_MD, fresh.encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
