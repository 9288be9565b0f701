"""The README's CLI reference, generated from the commands' own help (so it cannot drift):

    python -m sizing.docs          # rewrite the section between the markers in README.md
    python -m sizing.docs --check  # exit 1 if README.md is stale (tests/test_docs.py does this)
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

START, END = "<!-- cli-reference:start -->", "<!-- cli-reference:end -->"
README = Path(__file__).resolve().parents[1] / "README.md"
WIDTH = 100


def cli_reference_markdown() -> str:
    from .cli import main

    parts = ["## CLI reference", "", "Generated from `sizing <command> --help` by `python -m sizing.docs`.", ""]
    # main's context_settings (-h as well as --help) reach every command, as when it runs
    settings = dict(main.context_settings, terminal_width=WIDTH, max_content_width=WIDTH)
    root = click.Context(main, info_name="sizing", **settings)
    for name in main.list_commands(root):
        command = main.get_command(root, name)
        ctx = click.Context(command, info_name=name, parent=root, **settings)
        parts += [f"### `sizing {name}`", "", "```text", command.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(parts).rstrip() + "\n"


def updated_readme(text: str) -> str:
    head, sep, rest = text.partition(START)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"README.md lacks the {START} ... {END} markers")
    return f"{head}{START}\n{cli_reference_markdown()}{END}{tail}"


def main(argv: list[str]) -> int:
    current = README.read_text()
    fresh = updated_readme(current)
    if "--check" in argv:
        if fresh != current:
            print("README.md's CLI reference is stale: run `python -m sizing.docs`", file=sys.stderr)
            return 1
        return 0
    if fresh != current:
        tmp = README.with_suffix(".md.tmp")
        tmp.write_text(fresh)
        tmp.replace(README)  # atomic: never a half-written README
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
