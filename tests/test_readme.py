"""The README stays short and true: its install commands are the ones CI runs, every light
command of "What you type" runs, and the Python snippet's commented values are computed."""

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing import estimate
from sizing.cli import main

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
# verify, report and profile are tested in their own files
LIGHT = ("estimate", "presets", "gpus", "memory", "parallel", "compare", "sweep", "plan")
HF_CONFIG = REPO / "tests" / "fixtures" / "hf_configs" / "meta-llama__Llama-2-7b-hf.json"


def section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def block(text: str, language: str) -> str:
    return text.split(f"```{language}\n", 1)[1].split("```", 1)[0]


COMMANDS = [
    line.split("#", 1)[0].strip()
    for line in block(section("What you type"), "bash").splitlines()
    if line.startswith("sizing ") and line.split()[1] in LIGHT
]


def test_readme_is_short():
    assert len(README.splitlines()) <= 200


def test_install_commands_are_the_documented_ones():
    install = section("Install")
    assert "python3 -m venv .venv && . .venv/bin/activate" in install
    assert "python3 -m venv" in block(install, "bash")  # the first command: the environment
    assert "pip install . && sizing estimate --preset llama2-7b" in install
    assert "pip install torch==2.13.0 -e '.[test]' && python -m pytest" in install
    # the CPU-only torch, from PyTorch's own index, then the rest
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in install
    assert "pip install -e '.[test]' && python -m pytest" in install
    assert "pip install torch==2.13.0 -e '.[test]'" in (REPO / ".ci" / "run").read_text()


def test_quick_start_figures():
    """The Llama-2-7B figures the install section quotes."""
    est = estimate("llama2-7b")
    assert f"{est.params.total:,}" in section("Install")
    assert round(est.training.gpu_hours_6n, -4) == 180_000 and "~180,000" in section("Install")


@pytest.mark.parametrize("command", COMMANDS)
def test_what_you_type(command):
    args = shlex.split(command)[1:]
    if "--config" in args:  # the README's placeholder path: use a real HF config.json
        args[args.index("--config") + 1] = str(HF_CONFIG)
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 3), result.output  # 3: `sizing memory` says it does not fit
    assert result.output.strip()


def test_what_you_type_covers_every_command():
    listed = {
        line.split()[1] for line in block(section("What you type"), "bash").splitlines() if line.startswith("sizing ")
    }
    assert listed == set(main.list_commands(None))


def test_python_snippet_values():
    # the README's placeholder path: a real HF config.json
    snippet = block(section("From Python"), "python").replace("path/to/config.json", str(HF_CONFIG))
    namespace: dict = {}
    exec(compile(snippet, "README.md", "exec"), namespace)
    checked = 0
    for expression, expected in re.findall(r"^(\S.*?)\s+# (\d+)\b", snippet, flags=re.MULTILINE):
        value = eval(expression, namespace)
        assert int(value) == int(expected), expression
        checked += 1
    assert checked >= 5
