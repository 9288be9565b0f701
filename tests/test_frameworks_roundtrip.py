"""--emit: what is emitted reads back (--from) to the same question and the same answer: the
layout, memory, step and MFU of `sizing parallel`, the engine settings of `sizing serve`; and every
flag of an emitted engine command is one the engine's own parser takes
(sizing/data/engine_flags.json, read from vLLM's and SGLang's released source)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.frameworks import read_settings
from sizing.frameworks.engine_flags import engine_version, unknown_engine_flags

EX = Path(__file__).resolve().parents[1] / "examples" / "files"


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _plan(*args) -> dict:
    out = _run("parallel", *args, "--format", "json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    return {k: data[k] for k in ("layout", "per_gpu", "step") if k in data} | {"mfu": data.get("mfu")}


LAYOUTS = {
    "torchtitan": ("--preset", "llama3.1-8b", "--gpus", "64", "--tp", "2", "--sp", "--fsdp", "full", "-T", "8192",
                   "--global-batch", "512", "--recompute", "selective", "--selective", "op", "--stack",
                   "torchtitan-compile", "--tokens", "1T"),
    "megatron": ("--preset", "llama3-70b", "--gpus", "64", "--tp", "8", "--pp", "4", "--sp", "--zero", "1", "-T",
                 "8192", "--global-batch", "256", "--recompute", "selective", "--tokens", "15T"),
    "deepspeed": ("--preset", "llama3-8b", "--gpus", "8", "--dp", "8", "--zero", "3", "--offload-optimizer",
                  "--micro-batch", "2", "--global-batch", "64", "-T", "4096", "--recompute", "full"),
}  # fmt: skip
# what the emitted file cannot carry, given again when it is read back: DeepSpeed's JSON names no model,
# sequence length or activation checkpointing (the training script sets them; its _comment states them)
AGAIN = {"torchtitan": (), "megatron": (), "deepspeed": ("--preset", "llama3-8b", "-T", "4096", "--recompute", "full")}


@pytest.mark.parametrize("fmt", sorted(LAYOUTS))
def test_an_emitted_training_file_reads_back_to_the_same_answer(tmp_path, fmt):
    args = LAYOUTS[fmt]
    stack = () if "--stack" in args or fmt != "deepspeed" else ("--stack", "megatron-deepspeed")
    path = tmp_path / {"torchtitan": "t.toml", "megatron": "run.sh", "deepspeed": "ds.json"}[fmt]
    out = _run("parallel", *args, *stack, "--gpu", "h100", "--emit", fmt, "--out", path)
    assert out.exit_code == 0, out.output
    text = path.read_text()
    assert "transformer-sizing" in text  # the header: what was sized, by which version
    original = _plan(*args, *stack, "--gpu", "h100")
    again = _plan("--from", path, *AGAIN[fmt], "--gpu", "h100")
    assert again == original or _same_but_tokens(again, original)


def _same_but_tokens(a: dict, b: dict) -> bool:
    """Megatron counts a run in whole iterations: the tokens round up to a step, nothing else moves."""

    def strip(d: dict) -> dict:
        step = {k: v for k, v in d["step"].items() if "hours" not in k and "days" not in k and "tokens" not in k}
        return {k: v for k, v in d.items() if k != "step"} | {"step": step}

    return strip(a) == strip(b)


def test_a_searched_layout_emits_and_reads_back():
    out = _run("parallel", "--preset", "llama3-8b", "--gpus", "16", "--gpu", "h100", "--emit", "megatron")
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("# Sized by transformer-sizing")  # without --out the file alone is printed
    assert "--tensor-model-parallel-size" in out.stdout


def test_emit_torchtitan_searches_only_the_layouts_torchtitan_runs():
    out = _run("parallel", "--preset", "llama3.1-8b", "--gpus", "16", "--gpu", "h100", "--emit", "torchtitan")
    assert out.exit_code == 0, out.output
    assert "(FSDP full)" in out.stdout.splitlines()[1] and 'flavor = "8B"' in out.stdout


def test_a_layout_a_framework_cannot_run_is_refused_naming_what_it_lacks():
    out = _run("parallel", "--preset", "llama3-8b", "--tp", "2", "--dp", "4", "--emit", "deepspeed")
    assert out.exit_code == 2 and "--emit deepspeed: its JSON holds ZeRO and batch settings only" in out.output
    out = _run("parallel", "--preset", "llama3-8b", "--dp", "8", "--zero", "1", "--emit", "torchtitan")
    assert out.exit_code == 2 and "ZeRO-1 (flat shards), which torchtitan does not run" in out.output


SERVES = {
    "vllm": ("--preset", "llama3.1-8b", "--tp", "2", "--gpus", "4", "--batch", "64", "--kv-dtype", "fp8"),
    "sglang": ("--preset", "qwen3-8b", "--batch", "32", "--quant", "fp8"),
    "trtllm": ("--preset", "llama3.1-8b", "--tp", "2", "--batch", "16"),
}


@pytest.mark.parametrize("engine", sorted(SERVES))
def test_an_emitted_serve_command_reads_back_and_uses_only_the_engines_flags(tmp_path, engine):
    args = (*SERVES[engine], "--prompt", "1000", "--output", "200", "--gpu", "h100")
    path = tmp_path / "serve.sh"
    out = _run("serve", *args, "--emit", engine, "--out", path)
    assert out.exit_code == 0, out.output
    text = path.read_text()
    assert text.startswith("# Sized by transformer-sizing")
    words = shlex.split(" ".join(line.rstrip("\\") for line in text.splitlines() if not line.startswith("#")))
    assert unknown_engine_flags(engine, words) == [], engine_version(engine)
    settings = read_settings(str(path))
    assert settings.format == engine
    again = _run("serve", "--from", path, "--prompt", "1000", "--output", "200", "--gpu", "h100", "--format", "json")
    first = _run("serve", *args, "--format", "json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == json.loads(first.stdout)


def test_a_capacity_plan_emits_its_best_row():
    out = _run("serve", "--preset", "llama3-8b", "--rate", "5", "--prompt", "1000", "--output", "200", "--gpu", "h100",
               "--emit", "vllm")  # fmt: skip
    assert out.exit_code == 0, out.output
    words = shlex.split(out.stdout.replace("\\\n", " ").split("\n", 3)[-1])
    assert words[:3] == ["vllm", "serve", "meta-llama/Meta-Llama-3-8B"]
    assert unknown_engine_flags("vllm", words) == []


def test_the_examples_read_flags_the_engines_take():
    for name, engine in (("vllm_serve.sh", "vllm"), ("sglang_launch.sh", "sglang")):
        text = (EX / name).read_text()
        words = shlex.split(" ".join(line.rstrip("\\") for line in text.splitlines() if not line.startswith("#")))
        assert unknown_engine_flags(engine, words) == []
