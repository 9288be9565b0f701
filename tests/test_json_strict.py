"""Every command's JSON is strict JSON (issue 11): no NaN, Infinity or -Infinity, which strict
parsers (JavaScript's JSON.parse, jq, Go) reject. Python's json.loads accepts them unless told
not to; parse_constant makes any of them fail the test."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sizing.cli import main


def _strict(text: str):
    def reject(name):
        raise AssertionError(f"non-finite JSON constant {name}")

    return json.loads(text, parse_constant=reject)


LIGHT = [
    ["presets"],
    ["gpus"],
    ["estimate", "--preset", "llama2-7b"],
    ["estimate", "--preset", "mixtral-8x7b", "--attention", "causal", "--recompute", "full", "--price", "0"],
    [
        "estimate",
        "--preset",
        "mistral-7b",
        "--seq-len",
        "32768",
        "--attention",
        "causal",
        "--tokens",
        "1e30",
        "--mfu",
        "0.000001",
        "--price",
        "1e12",
    ],
    ["estimate", "--preset", "gpt2", "--tokens", "1", "--gpus", "1099511627776"],
    ["memory", "--preset", "llama2-70b"],
    ["memory", "--preset", "llama2-70b", "--zero", "3", "--dp", "1099511627776"],
    ["memory", "--preset", "llama2-70b", "--inference", "--context", "4096", "--batch", "8", "--weight-dtype", "int4"],
    ["serve", "--preset", "mixtral-8x7b", "--prompt", "1", "--output", "2", "--batch", "1099511627776", "--price", "0"],
    ["serve", "--preset", "mistral-7b", "--prompt", "8192", "--output", "1000000", "--compute-efficiency", "1e-6"],
]


@pytest.mark.parametrize("args", LIGHT, ids=lambda a: " ".join(a))
def test_light_commands_print_strict_json(args):
    result = CliRunner().invoke(main, [*args, "--format", "json"])
    assert result.exit_code in (0, 3), result.output
    assert _strict(result.stdout)


def test_verify_prints_strict_json():
    pytest.importorskip("torch")
    result = CliRunner().invoke(main, ["verify", "--params", "--preset", "gpt2", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert _strict(result.stdout)


def test_profile_prints_strict_json(one_torch_thread):
    pytest.importorskip("torch")
    result = CliRunner().invoke(
        main,
        [
            "profile",
            "--preset",
            "gpt2",
            "--set",
            "n_layers=1",
            "--set",
            "d_model=64",
            "--set",
            "n_heads=2",
            "--seq-len",
            "16",
            "--steps",
            "1",
            "--warmup",
            "0",
            "--device",
            "cpu",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert _strict(result.stdout)
