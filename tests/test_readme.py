"""The README's examples run as written: the light commands of "What you type" and the Python
snippet (keep the README true)."""

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing.cli import main

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
SECTION = README.split("## What you type", 1)[1].split("\n## ", 1)[0]
BASH = SECTION.split("```bash", 1)[1].split("```", 1)[0]
LIGHT = ("estimate", "presets", "gpus", "memory")  # verify, report and profile are tested in their own files
COMMANDS = [line.split("#", 1)[0].strip() for line in BASH.splitlines()
            if line.startswith("sizing ") and line.split()[1] in LIGHT]


def test_quick_start_commands_are_the_documented_ones():
    assert "pip install . && sizing estimate --preset llama2-7b" in README
    assert "pip install torch==2.13.0 -e '.[test]' && python -m pytest" in README
    assert "pip install torch==2.13.0 -e '.[test]'" in (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()


@pytest.mark.parametrize("command", COMMANDS)
def test_what_you_type(command):
    args = shlex.split(command)[1:]
    if "--config" in args:  # the README's placeholder path: use a real HF config.json
        args[args.index("--config") + 1] = str(Path(__file__).parent / "fixtures" / "hf_configs" /
                                                "meta-llama__Llama-2-7b-hf.json")
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 3), result.output  # 3: `sizing memory` says it does not fit
    assert result.output.strip()


def test_python_snippet_values():
    block = SECTION.split("```python", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)  # the snippet itself must run
    checked = 0
    for expression, expected in re.findall(r"^(\S.*?)\s+# (\d+)\b", block, flags=re.M):
        value = eval(expression, namespace)
        assert int(value) == int(expected), expression
        checked += 1
    assert checked >= 5
