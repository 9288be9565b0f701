"""The README's CLI reference is generated from the commands' help; it must be fresh."""

from sizing import docs


def test_readme_cli_reference_is_fresh():
    current = docs.README.read_text()
    assert docs.updated_readme(current) == current, "README CLI reference is stale: run `python -m sizing.docs`"


def test_reference_lists_every_command():
    from sizing.cli import main

    text = docs.cli_reference_markdown()
    for name in main.list_commands(None):
        assert f"### `sizing {name}`" in text
