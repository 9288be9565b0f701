"""Fuzz every command of the `sizing` group (issue 23; hybrid and vision, their config files and
hub ids read offline: issue 34), enumerated from the click group at run time, so a command added
later is covered. Whatever is typed: no traceback, no NaN or Infinity
in JSON, an exit code in {0, 2, 3} (3: `sizing memory` says it does not fit), a one-line
`Error:` on exit 2, and no file touched outside the working folder (each run's cwd is a
temporary folder; a sentinel folder beside it must keep every byte).

Commands this test knows to be quick get random options, valid and not. The others (verify and
profile run the PyTorch model; a command added later might serve or block) get `--help` and a
value every strict option type refuses, which ends them before any work. `sizing report`'s page
builder is replaced by two small pages: its writing and checking are what is fuzzed (the pages
have their own tests). The exhaustive variant is marked slow (CI runs it with -m slow)."""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.cli import main
from sizing.cli.common import MAX_ERROR_CHARS
from sizing.cli.options import Choice, Count, Number, Quantity
from sizing.report import build

QUICK = {"compare", "estimate", "gpus", "hybrid", "memory", "parallel", "plan", "presets", "report", "serve", "sweep"}
QUICK |= {"vision"}
STRICT_TYPES = (Choice, Count, Number, Quantity, click.Choice)  # each refuses "nan"
FIXTURE_CONFIG = str(Path(__file__).parent / "fixtures" / "hf_configs" / "openai-community__gpt2.json")
FAMILY_CONFIGS = [str(p) for p in sorted((Path(__file__).parent / "fixtures" / "family_configs").glob("*.json"))]
# hub ids, read offline from an empty cache (the sandbox sets HF_HUB_OFFLINE): valid, refused by the hub's rules
HUB_IDS = [
    "meta-llama/Llama-3.1-8B",
    "a..b/c",
    "a--b/c",
    "org/name..",
    "o" * 97 + "/x",
    "org/name@../../etc",
    "x/y@main",
]
NUMBERS = ["0", "-1", "1", "2", "8", "1e300", "1e-320", "nan", "inf", "1" + "0" * 40, "0.5", "1.5", "abc", ""]
NUMBERS += ["1_000", "4096", "2T", "1e999999", "\nError: forged", "0x10", "1,2", "1T:3T:1T", "16:64:16"]
VALUES = {
    "--preset": ["gpt2", "llama2-7b", "mixtral-8x7b", "llama-4-scout", "nope", "GPT2", "jamba-v0.1", "gemma-3-4b"],
    "--like": ["llama2-7b", "phi-2", "gpt2", "mixtral-8x7b", "nope"],
    "--config": [FIXTURE_CONFIG, "nope.json", "/dev/null", ".", "", *FAMILY_CONFIGS, *HUB_IDS],
    "--gpu": ["h100", "a100", "x", "H100", "mi300x"],
    "--set": ["n_layers=2", "d_model=0", "attention_chunk=64", "n_layer=3", "rope_theta=nan", "x"],
    "--out": ["out", "out/sub", "", "/dev/null", "."],
    "--sort": ["gpu_hours", "x"],
    "--overlap": ["tp=0.5", "x=2", "dp=nan"],
    "--lora-targets": ["qkv", "x"],
}
RUNNER_KW = {} if "mix_stderr" not in CliRunner.__init__.__code__.co_varnames else {"mix_stderr": False}


def _commands() -> dict[str, click.Command]:
    ctx = click.Context(main)
    return {name: main.get_command(ctx, name) for name in main.list_commands(ctx)}


def _values(param: click.Option) -> list[str]:
    if param.opts[0] in VALUES:
        return VALUES[param.opts[0]]
    choices = getattr(param.type, "choices", None)
    if choices:
        return [str(c) for c in choices] + ["x", "JSON", ""]
    return NUMBERS


def _option(param: click.Option):
    if param.is_flag:
        return st.just([param.opts[0]])
    return st.sampled_from(_values(param)).map(lambda v: [param.opts[0], v])


def _arguments(name: str, command: click.Command):
    options = [p for p in command.params if isinstance(p, click.Option)]
    has_model = any(p.opts[0] == "--preset" for p in options)
    model = st.sampled_from(VALUES["--preset"]).map(lambda v: ["--preset", v]) if has_model else st.just([])
    rest = st.lists(st.sampled_from(options).flatmap(_option), max_size=4) if options else st.just([])
    return st.builds(lambda m, r: [name, *m, *[x for item in r for x in item]], model, rest)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """(work folder, sentinel folder, its snapshot), with report's page builder stood in for."""
    root = tmp_path_factory.mktemp("fuzz")
    work, sentinel = root / "work", root / "sentinel"
    work.mkdir()
    sentinel.mkdir()
    (sentinel / "notes.md").write_text("keep\n")
    (sentinel / ".draft.tmp").write_text("mine\n")
    pages = {"README.md": build.GENERATED_MARK + b" -->\n# Reports\n", "presets/gpt2.md": b"# gpt2\n"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build, "build_reports", lambda *args, **kwargs: dict(pages))
        patch.setenv("HF_HUB_OFFLINE", "1")  # hub ids are read from the cache only: no network in a test
        patch.setenv("HF_HUB_CACHE", str(root / "hub"))
        yield root, work, sentinel, _snapshot(sentinel)


@contextmanager
def _inside(folder: Path):
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _reject(name: str):
    raise AssertionError(f"non-finite JSON constant {name}")


def check(args: list[str], sandbox, limit_s: float = 5):
    root, work, sentinel, kept = sandbox
    start = time.perf_counter()
    with _inside(work):
        result = CliRunner(**RUNNER_KW).invoke(main, args)
    elapsed = time.perf_counter() - start
    assert elapsed < limit_s, f"{args} took {elapsed:.1f} s"
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert "Traceback" not in result.output, args
    assert result.exit_code in (0, 2, 3), (args, result.exit_code, result.output)
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), (args, result.stderr)
        assert len(lines[0]) <= len("Error: ") + MAX_ERROR_CHARS, (args, lines[0])
    elif "--format" in args and args[args.index("--format") + 1 :][:1] == ["json"] and result.exit_code == 0:
        json.loads(result.stdout, parse_constant=_reject)
    assert _snapshot(sentinel) == kept, args
    assert sorted(p.name for p in root.iterdir() if p.name != "hub") == ["sentinel", "work"], args
    assert not (root / "hub").exists() or not any((root / "hub").iterdir()), args  # an offline read writes nothing
    return result


FUZZ = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
COMMANDS = _commands()


@pytest.mark.parametrize("name", sorted(set(COMMANDS) & QUICK))
@FUZZ
@given(data=st.data())
def test_quick_commands(name, data, sandbox):
    check(data.draw(_arguments(name, COMMANDS[name])), sandbox)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_refuses_a_bad_value_in_one_line(name, sandbox):
    """Also the commands not fuzzed above: `--help` works, and a value every strict option type
    refuses ends the command with one line before it does any work."""
    check([name, "--help"], sandbox)
    strict = [p for p in COMMANDS[name].params if isinstance(p, click.Option) and isinstance(p.type, STRICT_TYPES)]
    for param in strict:
        if not param.is_flag:
            args = [name, param.opts[0], "nan"]
            assert check(args, sandbox).exit_code == 2, args
    check([name, "--no-such-option"], sandbox)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(COMMANDS) & QUICK))
@settings(FUZZ, max_examples=400)
@given(data=st.data())
def test_quick_commands_exhaustive(name, data, sandbox, request):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("exhaustive: run with -m slow")
    check(data.draw(_arguments(name, COMMANDS[name])), sandbox, limit_s=30)


def test_a_mistyped_command_gets_a_close_match(sandbox):
    result = CliRunner(**RUNNER_KW).invoke(main, ["estimat", "--preset", "gpt2"])
    assert result.exit_code == 2 and result.stderr == "Error: no command estimat; did you mean estimate?\n"
