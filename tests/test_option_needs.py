"""The form's rules (`needs` on an option spec, sizing/cli/specs.py) are the CLI's: for every
option of every command that states when it applies, breaking any one term of its rule while
keeping the others is refused by the command with one `Error:` line (exit 2), and keeping them
all is not refused for that reason. The commands and rules are read from the click group, so a
rule added later is checked without editing this test."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from sizing.cli import command_options, main
from sizing.cli.specs import NEED_TERM

# what each command needs to answer at all (its required options), besides a model
# serve: one layout (tp 1, bf16), so a capacity question (--rate) searches one layout, not twenty (seconds, not minutes)
BASE = {
    "serve": ["--prompt", "512", "--output", "64", "--tp", "1", "--weight-dtype", "bf16", "--kv-dtype", "bf16"],
    "plan": [],
    "memory": [],
}
MODEL = ["--preset", "llama2-7b"]
# options that answer for some models only: the model their rule is checked on
MODEL_OF = {"images": "qwen2.5-vl-7b", "image-size": "qwen2.5-vl-7b"}
# a valid value of a text option (the others are drawn from their kind, choices or range)
SAMPLES = {"slo-ttft": "2s", "slo-tpot": "50ms", "lora-targets": "q,v", "rate": "2", "flops": "1e21", "days": "3",
           "image-size": "896x896"}  # fmt: skip


def _commands() -> dict[str, click.Command]:
    ctx = click.Context(main)
    return {name: main.get_command(ctx, name) for name in main.list_commands(ctx)}


def sample(option: dict) -> str | None:
    """A value the option takes (None for a switch: the flag alone)."""
    if option["flag"]:
        return None
    if option["key"] in SAMPLES:
        return SAMPLES[option["key"]]
    if option["choices"]:
        return str(option["choices"][-1])
    if option["kind"] == "integer":
        return "2"
    if option["kind"] == "number":
        return "0.5" if (option["max"] or 2) <= 1 else "2"
    return "1"


def given(option: dict, value: str | None = None) -> list[str]:
    flag = option["flags"][0]
    if option["flag"]:
        return [flag]
    return [flag, value if value is not None else sample(option)]


def holding(term: str, by_key: dict[str, dict]) -> list[str]:
    """Arguments that make one term hold."""
    neg, key, eq, values, gt, number = NEED_TERM.match(term).groups()
    if neg:
        return []
    if eq:
        return given(by_key[key], values.split("|")[0])
    if gt:
        return given(by_key[key], str(int(float(number)) + 1))
    return given(by_key[key])


def breaking(term: str, by_key: dict[str, dict]) -> list[str]:
    """Arguments that make one term fail (an option given that must not be, or given out of its set)."""
    neg, key, eq, values, gt, number = NEED_TERM.match(term).groups()
    if neg:
        return given(by_key[key])
    if eq:
        other = [str(c) for c in by_key[key]["choices"] if str(c) not in values.split("|")]
        return given(by_key[key], other[0])
    if gt:
        return given(by_key[key], str(int(float(number))))
    if by_key[key]["kind"] == "switch":  # on unless turned off: its off spelling (--no-prefix-caching)
        return [by_key[key]["flags"][-1]]
    return []


def rules():
    for name, command in _commands().items():
        options = command_options(command)
        by_key = {o["key"]: o for o in options}
        for option in options:
            if option["needs"]:
                yield pytest.param(name, option, by_key, id=f"{name}-{option['key']}")


@pytest.mark.parametrize(("name", "option", "by_key"), list(rules()))
def test_each_term_of_a_rule_is_a_cli_refusal(name, option, by_key):
    runner = CliRunner()
    model = ["--preset", MODEL_OF[option["key"]]] if option["key"] in MODEL_OF else MODEL
    base = [name, *model, *BASE.get(name, [])] if "preset" in by_key else [name, *BASE.get(name, [])]
    if name == "plan" and option["key"] != "flops":
        base = [name]
    terms = option["needs"]
    for broken in terms:
        kept = [arg for term in terms if term != broken for arg in holding(term, by_key)]
        args = base + kept + breaking(broken, by_key) + given(option)
        out = runner.invoke(main, args)
        assert out.exit_code == 2, (args, out.output)
        errors = [line for line in out.output.splitlines() if line.startswith("Error: ")]
        assert len(errors) == 1 and "Traceback" not in out.output, out.output  # one line (beside any note)
    args = base + [arg for term in terms for arg in holding(term, by_key)] + given(option)
    out = runner.invoke(main, [*args, "--format", "json"])
    flag = re.escape(option["flags"][0])
    assert out.exit_code != 2 or not re.search(rf"{flag}\b.*(applies|needs|with)", out.output), (args, out.output)


def test_the_rules_read_as_terms():
    for name, command in _commands().items():
        for option in command_options(command):
            keys = {o["key"] for o in command_options(command)}
            for term in option["needs"]:
                assert NEED_TERM.match(term).group(2) in keys, (name, option["key"], term)
