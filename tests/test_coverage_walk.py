"""Every model_type docs/coverage.md lists as native-exact answers the four questions through the one
door: `estimate`, `memory`, `parallel` and `serve` take its config (transformers' own defaults for the
type, tools/hf_coverage.py's fix-ups) and answer with finite numbers. Exit 3 is an answer too: the
model does not fit the GPU or GPUs asked (most of these defaults are the family's full-size model),
said with the numbers that show it. The types over 100B parameters are in the slow set."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing.cli import main

REPO = Path(__file__).resolve().parents[1]
ROWS = json.loads((REPO / "tests" / "fixtures" / "hf_coverage.json").read_text())["rows"]
NATIVE = sorted(row["model_type"] for row in ROWS if row["status"] == "native-exact")
# Over 100B parameters the "does not fit" answers search many layouts before they say so (seconds
# each): those types run with the slow set (CI runs it), the rest by default (about 10 s together).
LARGE = {row["model_type"] for row in ROWS if row["status"] == "native-exact" and row["transformers_total"] >= 10**11}
QUESTIONS = {
    "estimate": ["--seq-len", "1024"],
    "memory": ["--seq-len", "1024"],
    "parallel": ["--seq-len", "1024", "--gpus", "8"],
    "serve": ["--prompt", "512", "--output", "64"],
}


def _coverage():
    spec = importlib.util.spec_from_file_location("hf_coverage", REPO / "tools" / "hf_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _numbers(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers(item)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield value


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    pytest.importorskip("transformers")
    coverage, folder = _coverage(), tmp_path_factory.mktemp("coverage")
    paths = {}
    for model_type in NATIVE:
        paths[model_type] = folder / f"{model_type}.json"
        paths[model_type].write_text(json.dumps(coverage.default_config(model_type), default=str))
    return paths


def test_the_native_list_is_the_pages():
    rows = [line for line in (REPO / "docs" / "coverage.md").read_text().splitlines() if "| native-exact |" in line]
    assert sorted(line.split("`")[1] for line in rows) == NATIVE and len(NATIVE) >= 30


@pytest.mark.parametrize("model_type", [pytest.param(t, marks=pytest.mark.slow) if t in LARGE else t for t in NATIVE])
def test_every_native_type_answers_every_question(configs, model_type):
    for command, args in QUESTIONS.items():
        out = CliRunner().invoke(main, [command, "--config", str(configs[model_type]), *args, "--format", "json"])
        assert out.exit_code in (0, 3), f"{command}: {out.output[-400:]}"
        result = json.loads(out.stdout)
        numbers = list(_numbers(result))
        assert numbers and all(math.isfinite(n) for n in numbers), command
