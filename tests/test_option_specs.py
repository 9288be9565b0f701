"""One option layer (issue 35): every option of every command is the shared one of
sizing/cli/spec_table.py, so a range, a parser or a default cannot drift between commands, and
the browser form offers exactly the CLI's options. The commands are enumerated from the click
group at run time: a command or option added later is covered without editing this test."""

import json

import click
import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.cli.option_layer import SPECS, option
from sizing.cli.specs import GROUP_KEYS, OptionSpec, SpecOption, command_options

# Flags two different options share, each with why (a rename would break what users type).
SAME_FLAG = {
    "--flops": ({"flops", "check_flops"}, "plan's compute budget; verify's FLOP check"),
    "--memory": ({"memory", "check_memory"}, "estimate/sweep: the memory columns; verify: the memory check"),
}


def _commands() -> dict[str, click.Command]:
    ctx = click.Context(main)
    return {name: main.get_command(ctx, name) for name in main.list_commands(ctx)}


def _options():
    for name, command in _commands().items():
        for param in command.params:
            if isinstance(param, click.Option) and param.name != "help":
                yield name, param


def test_every_option_of_every_command_is_the_shared_one():
    seen = 0
    for name, param in _options():
        assert isinstance(param, SpecOption), f"sizing {name} {param.opts[0]} is not built from an option spec"
        spec = param.spec
        assert SPECS[spec.key] is spec, (name, param.opts)
        assert param.opts[0] == spec.flag, (name, param.opts, spec.flag)
        stated = param.overrides
        if stated.get("as_list"):  # sweep: a comma list, each value checked by the question
            assert param.type is click.STRING, (name, spec.key)
        elif "only" in stated:  # a subset of the same choices, parsed by the same class
            assert type(param.type) is type(spec.type) and set(param.type.choices) <= set(spec.type.choices)
            assert param.type.option == spec.type.option
        elif spec.type is not None:
            assert param.type is spec.type, (name, spec.key)  # the very same parser object
        stated_keys = {"dest", "default", "help", "short", "multiple", "only", "as_list", "needs", "names"}
        assert set(stated) <= stated_keys, stated
        seen += 1
    assert seen > 150  # every command's options, not an empty walk


def test_each_flag_names_one_option_except_the_stated_pairs():
    by_flag: dict[str, set[str]] = {}
    for _, param in _options():
        by_flag.setdefault(param.opts[0], set()).add(param.spec.key)
    shared = {flag: keys for flag, keys in by_flag.items() if len(keys) > 1}
    assert shared == {flag: keys for flag, (keys, _) in SAME_FLAG.items()}


def test_every_declared_option_is_used_by_a_command():
    used = {param.spec.key for _, param in _options()}
    assert set(SPECS) - used == set()


def test_options_shared_by_several_commands_parse_alike():
    """The same bad value gets the same one line from every command that takes the option."""
    takers: dict[str, list[str]] = {}
    for name, param in _options():
        if not {"as_list", "only"} & set(param.overrides):  # a narrowed or listed form says less
            takers.setdefault(param.opts[0], []).append(name)
    runner = CliRunner()
    for flag, value in (("--seq-len", "-3"), ("--gpus", "0"), ("--tp", "1.5"), ("--context", "x"), ("--dtype", "f9")):
        lines = set()
        for name in takers[flag]:
            result = runner.invoke(main, [name, flag, value])
            assert result.exit_code == 2, (name, flag, result.output)
            lines.add(result.output)
        assert len(takers[flag]) >= 2 and len(lines) == 1, (flag, lines)


def test_the_table_agrees_with_the_packages_it_stands_in_for():
    from sizing.cli import spec_table
    from sizing.parallel.search import MAX_SEARCH_GPUS
    from sizing.serve.batching import DEFAULT_BLOCK_SIZE, DEFAULT_TOKEN_BUDGET

    assert (spec_table.DEFAULT_TOKEN_BUDGET, spec_table.DEFAULT_BLOCK_SIZE) == (
        DEFAULT_TOKEN_BUDGET,
        DEFAULT_BLOCK_SIZE,
    )
    assert spec_table.MAX_SEARCH_GPUS == MAX_SEARCH_GPUS


def test_the_specs_are_data_the_page_can_read():
    for name, command in _commands().items():
        data = command_options(command)
        json.dumps(data, allow_nan=False)  # strict JSON
        for item in data:
            assert item["group"] in GROUP_KEYS and item["kind"] in {
                "switch",
                "flag",
                "choice",
                "integer",
                "number",
                "quantity",
                "text",
            }, (name, item)
    seq_len = next(o for o in command_options(_commands()["parallel"]) if o["key"] == "seq-len")
    assert (seq_len["kind"], seq_len["min"], seq_len["group"], seq_len["flags"]) == (
        "integer",
        1,
        "data",
        ["--seq-len", "-T"],
    )
    zero = next(o for o in command_options(_commands()["memory"]) if o["key"] == "zero")
    assert zero["choices"] == [0, 1, 2, 3] and zero["default"] == 0


def test_the_ui_form_is_the_clis_options():
    from sizing.ui.api import ENDPOINTS, MODEL_KEYS, option_specs

    for endpoint in ENDPOINTS:
        form = option_specs(endpoint)
        # the page never names a file (--config and --from read one, --emit --out writes one, nor any
        # option whose metavar is a path) and never runs model code
        refused = ("format", "config", "from", "from-format", "emit", "out", "run-remote-code")
        cli = [
            o
            for o in command_options(_commands()[endpoint])
            if o["key"] not in (*MODEL_KEYS, *refused) and o["metavar"] not in ("PATH", "FILE", "DIR")
        ]
        assert form == cli, endpoint


def test_a_bad_declaration_is_refused():
    with pytest.raises(ValueError, match="group"):
        OptionSpec("x", ("--x",), "nowhere", "help").check()
    with pytest.raises(ValueError, match="long one"):
        OptionSpec("x", ("-x",), "data", "help").check()
    with pytest.raises(KeyError, match="no option"):
        option("no_such_option")
    with pytest.raises(ValueError, match="not among its choices"):
        option("format", only=("table", "yaml"))


def test_the_ui_serves_the_specs_and_their_groups():
    from sizing.ui.api import option_specs
    from sizing.ui.server import _lists

    lists = _lists()
    assert [g["key"] for g in lists["groups"]] == list(GROUP_KEYS)
    assert lists["options"]["parallel"] == option_specs("parallel")
