"""Issue 34, options and the Python API: values are checked where they are validated (the shared
option types and sizing.validate), so every command and function agrees. Each test names its item."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sizing import estimate, get_preset
from sizing.cli import main
from sizing.inputs import Workload, parse_length, parse_quantity
from sizing.parallel import ParallelLayout, StepOptions, parallel_plan
from sizing.serve import serve
from sizing.validate import SizingError


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def one_error(*args: str) -> str:
    result = run(*args)
    assert result.exit_code == 2, (args, result.output)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in result.output, result.output
    return lines[0]


def strict_json(text: str):
    def refuse(name):
        raise AssertionError(f"non-finite JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


SERVE = ["serve", "--preset", "llama2-7b", "--prompt", "512", "--output", "64"]


# ---- items 3, 4, 5: a minimum for efficiencies, rates and link speeds keeps results finite
@pytest.mark.parametrize(
    "args, words",
    [
        (
            [*SERVE, "--compute-efficiency", "1e-320"],
            "--compute-efficiency (1e-320) must be a number in (0, 1], at least 1e-06",
        ),
        ([*SERVE, "--bandwidth-efficiency", "1e-320"], "--bandwidth-efficiency (1e-320)"),
        ([*SERVE, "--compute-efficiency", "1e-320", "--rate", "5"], "--compute-efficiency (1e-320)"),
        (
            ["parallel", "--preset", "llama2-7b", "--gpus", "8", "--nvlink-gbs", "1e-320"],
            "--nvlink-gbs (1e-320) must be GB/s",
        ),
        (["parallel", "--preset", "llama2-7b", "--gpus", "8", "--network-gbs", "5e-324"], "--network-gbs (5e-324)"),
        ([*SERVE, "--rate", "1e-320", "--format", "json"], "--rate (1e-320) must be requests per second between 1e-06"),
        ([*SERVE, "--rate", "5e-324"], "--rate (5e-324)"),
    ],
)
def test_items_3_4_5_tiny_rates_are_refused_in_one_line(args, words):
    """Items 3-5: each was a traceback (NaN in a format, ZeroDivisionError, inf in JSON), `$inf` in
    the table, or 0 replicas, 0 GPUs and $0 for --rate 5e-324."""
    assert words in one_error(*args)


def test_items_3_4_5_the_smallest_values_allowed_answer_finitely():
    """At the minimum, every number stays finite: strict JSON, at least one replica."""
    low = run(*SERVE, "--compute-efficiency", "1e-6", "--bandwidth-efficiency", "1e-6", "--format", "json")
    assert low.exit_code == 0 and strict_json(low.output)
    rate = run(*SERVE, "--rate", "1e-6", "--format", "json")
    assert rate.exit_code == 0 and strict_json(rate.output)["best"]["replicas"] == 1
    link = run("parallel", "--preset", "llama2-7b", "--gpus", "8", "--nvlink-gbs", "1e-3", "--format", "json")
    assert link.exit_code in (0, 3) and strict_json(link.output)
    with pytest.raises(SizingError, match="compute_efficiency"):  # the API checks the same minimum
        serve("llama2-7b", 512, 64, compute_efficiency=1e-320)
    with pytest.raises(SizingError, match="nvlink_gbs"):
        parallel_plan("llama2-7b", ParallelLayout(dp=8), Workload(4096), nvlink_gbs=1e-320)


# ---- item 19: one rule for ZeRO over one rank
def test_item_19_memory_and_parallel_agree_on_zero_3_over_one_rank():
    """Item 19: `memory --zero 3 --dp 1` was refused while `parallel --zero 3 --dp 1` answered.
    The rule now: ZeRO over one rank is accepted everywhere (it shards nothing; DeepSpeed runs
    it on one GPU, e.g. with CPU offload), and equals no sharding."""
    zero3 = run("memory", "--preset", "llama2-7b", "--zero", "3", "--dp", "1", "--format", "json")
    plain = run("memory", "--preset", "llama2-7b", "--format", "json")
    assert zero3.exit_code == plain.exit_code == 3
    assert json.loads(zero3.output)["per_gpu"] == json.loads(plain.output)["per_gpu"]
    assert (
        run("parallel", "--preset", "llama2-7b", "--zero", "3", "--dp", "1").exit_code == 3
    )  # an answer: does not fit


# ---- item 20: digits are ASCII, and an empty name is not "not given"
@pytest.mark.parametrize("value", ["٣", "３", "١.٥", "𝟑"])
def test_item_20_float_options_take_ascii_digits_only(value):
    """Item 20: `--pue ٣` was read as 3 (float() reads any Unicode digit) while integer options refused it."""
    assert f"--pue ('{value}') must be a number (digits 0-9)" in one_error("estimate", "-p", "gpt2", "--pue", value)
    assert "must be" in one_error("estimate", "-p", "gpt2", "--gpus", value)


@pytest.mark.parametrize(
    "args, words",
    [
        (["estimate", "-p", "gpt2", "--gpu", ""], "--gpu ('') names nothing"),
        (["serve", "-p", "gpt2", "--prompt", "8", "--output", "8", "--gpu", " "], "--gpu (' ') names nothing"),
        (["parallel", "-p", "gpt2", "--gpus", "8", "--gpu", ""], "--gpu ('') names nothing"),
        (["estimate", "--config", ""], "--config ('') names nothing"),
        (["memory", "--preset", ""], "--preset ('') names nothing"),
        (["hybrid", "--config", ""], "--config ('') names nothing"),
        (["vision", "--preset", " "], "--preset (' ') names nothing"),
    ],
)
def test_item_20_an_empty_name_is_refused(args, words):
    """Item 20: `--gpu ''` and `--config ''` were treated as not given (the default GPU, no model)."""
    assert words in one_error(*args)


# ---- item 21: K = 1024 for lengths, SI for token budgets, said in --help
def test_item_21_lengths_are_binary_and_token_budgets_si():
    """Item 21: `256K` meant 256,000; as model cards use it, 128K = 131,072 for a sequence or
    context length; 15T stays 15 x 10^12 tokens."""
    assert parse_length("128K") == 131_072 and parse_length("256K") == 262_144 and parse_length("10M") == 10_485_760
    assert parse_length("1.5K") == 1536 and parse_quantity("15T") == 15 * 10**12 and parse_quantity("1K") == 1000
    seq = json.loads(run("estimate", "-p", "llama3-8b", "-T", "8K", "--format", "json").output)["flops"]["seq_len"]
    hybrid = json.loads(run("hybrid", "-p", "jamba-v0.1", "--context", "256K", "--format", "json").output)["context"]
    assert seq == 8192 and hybrid == 262_144
    assert estimate("llama3-8b", seq_len="8K", memory=False).flops.seq_len == 8192
    serve_json = json.loads(
        run("serve", "-p", "llama2-7b", "--prompt", "1K", "--output", "64", "--format", "json").output
    )
    assert serve_json["settings"]["prompt_tokens"] == 1024
    for words in ("0.1K", "1.5"):
        assert "whole number of tokens" in one_error("estimate", "-p", "gpt2", "-T", words)


@pytest.mark.parametrize("command", ["estimate", "memory", "parallel", "plan", "serve", "hybrid", "speculate"])
def test_item_21_help_says_which_k(command):
    """Item 21: --help says K = 1024 beside every length, and SI beside every token budget."""
    text = " ".join(run(command, "--help").output.split())
    assert "K = 1024: 128K = 131,072" in text
    if command in ("estimate", "parallel"):
        assert "SI: 15T = 15 x 10^12" in text


# ---- item 26: the API refuses bad input as ValueError / TypeError, never AttributeError
@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: get_preset("gpt2").config.with_overrides(["n_layers"]), "must look like FIELD=VALUE"),
        (lambda: get_preset("gpt2").config.with_overrides(5), "overrides (5) must be a dict"),
        (
            lambda: parallel_plan(get_preset("gpt2").config, ParallelLayout(), Workload(128), {"overlap": 5}),
            "gpu ({'overlap': 5})",
        ),
        (lambda: parallel_plan("gpt2", ParallelLayout(), Workload(128), overlap=5), "overlap (5) must be a dict"),
        (
            lambda: parallel_plan("gpt2", ParallelLayout(), Workload(128), step_options=5),
            "step_options (5) must be a StepOptions",
        ),
        (
            lambda: parallel_plan("gpt2", ParallelLayout(), Workload(128), fused="x"),
            "fused ('x') must be true or false",
        ),
    ],
)
def test_item_26_bad_api_input_is_a_value_error_with_the_message(call, words):
    """Item 26: with_overrides(['n_layers']) and parallel_plan(..., {'overlap': 5}) raised AttributeError."""
    with pytest.raises(SizingError) as info:
        call()
    assert words in str(info.value)


def test_item_26_with_overrides_takes_the_clis_set_strings():
    cfg = get_preset("gpt2").config
    assert cfg.with_overrides(["n_layers=3"]) == cfg.with_overrides({"n_layers": 3})
    assert parallel_plan("gpt2", ParallelLayout(), Workload(128), step_options=StepOptions()).fits


@pytest.mark.parametrize(
    "args, words",
    [
        (
            ["vision", "-p", "gemma-3-4b", "--image-size", "٣x٣"],
            "--image-size ('٣x٣') must be HEIGHTxWIDTH in pixels (digits 0-9)",
        ),
        (["vision", "-p", "gemma-3-4b", "--image-size", "9" * 5000 + "x1"], "--image-size height"),
        (
            ["parallel", "-p", "llama2-7b", "--pp", "2", "--dp", "4", "--stage-layers", "١٦,١٦"],
            "--stage-layers ('١٦,١٦')",
        ),
        (["parallel", "-p", "llama2-7b", "--pp", "2", "--dp", "4", "--stage-layers", "9" * 5000 + ",1"], "at most"),
    ],
)
def test_item_20_integer_lists_take_ascii_digits_only(args, words):
    """Item 20's class in the options parsed by hand: str.isdigit() accepted '٣', and int() of
    5,000 digits raised Python's own ValueError."""
    assert words in one_error(*args)
