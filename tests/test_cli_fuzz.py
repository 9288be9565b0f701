"""Fuzz the light commands' argument space (issue 11): whatever a user types, a command ends
quickly with a result (exit 0, or 3 when `sizing memory` says it does not fit) or with one
`Error:` line and exit 2. Never a traceback, never NaN or Infinity in JSON.

Bounded: a fixed number of examples, no deadline (CI machines are slow), a few seconds."""

from __future__ import annotations

import json
import time

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sizing.cli import main

HOSTILE_NUMBERS = [
    "0",
    "-1",
    "1",
    "2",
    "1e300",
    "1e-320",
    "nan",
    "inf",
    "-inf",
    "Infinity",
    "1" + "0" * 160,
    "9" * 400,
    "9007199254740993",
    "0.5",
    "1.5",
    "abc",
    "",
    " ",
    "1_000",
    "4096",
    "2T",
    "1e999999",
    "12345678901234567890123456789",
    "true",
    "\nError: forged",
    "None",
    "0x10",
]
PRESETS = ["gpt2", "llama2-7b", "mixtral-8x7b", "mistral-7b", "nope", "GPT2", "llama2-7b\nError: forged"]
SET_FIELDS = [
    "n_layers",
    "d_model",
    "n_heads",
    "n_kv_heads",
    "rope_theta",
    "norm_eps",
    "qkv_bias",
    "tied_embeddings",
    "sliding_window",
    "rotary_fraction",
    "nope",
    "max_positions",
    "top_k",
]

ESTIMATE_OPTIONS = {
    "--seq-len": HOSTILE_NUMBERS,
    "--tokens": HOSTILE_NUMBERS,
    "--mfu": HOSTILE_NUMBERS,
    "--gpus": HOSTILE_NUMBERS,
    "--price": HOSTILE_NUMBERS,
    "--gpu": ["h100", "a100", "x", "tpu-v4", "v100"],
    "--dtype": ["fp8", "bf16", "fp32", "x"],
    "--attention": ["full", "causal", "x"],
    "--recompute": ["none", "full", "selective", "x"],
    "--format": ["json", "table", "csv", "markdown", "x"],
}
MEMORY_OPTIONS = {
    "--seq-len": HOSTILE_NUMBERS,
    "--micro-batch": HOSTILE_NUMBERS,
    "--dp": HOSTILE_NUMBERS,
    "--zero": ["0", "1", "2", "3", "4", "x"],
    "--precision": ["fp32", "bf16-mixed", "bf16", "mixed", "x"],
    "--optimizer": ["adamw", "sgd", "adam8bit", "x"],
    "--recompute": ["none", "full", "x"],
    "--attention-impl": ["math", "flash", "sdpa", "x"],
    "--gpu": ["h100", "a100", "x"],
    "--context": HOSTILE_NUMBERS,
    "--batch": HOSTILE_NUMBERS,
    "--weight-dtype": ["int4", "bf16", "x"],
    "--kv-dtype": ["fp8", "x"],
    "--format": ["json", "table", "csv", "x"],
}


def _args(command: str, options: dict, flags: tuple[str, ...] = ()):
    option = st.sampled_from(sorted(options)).flatmap(
        lambda name: st.tuples(st.just(name), st.sampled_from(options[name]))
    )
    setting = st.tuples(
        st.just("--set"),
        st.builds(lambda f, v: f"{f}={v}", st.sampled_from(SET_FIELDS), st.sampled_from(HOSTILE_NUMBERS)),
    )
    model = st.tuples(st.just("--preset"), st.sampled_from(PRESETS))
    extra = st.lists(st.one_of(option, option, setting, st.tuples(st.sampled_from(flags or ("--format",)))), max_size=4)
    return st.builds(lambda m, rest: [command, *m, *[x for item in rest for x in item]], model, extra)


def _check(args: list[str]) -> None:
    start = time.perf_counter()
    result = CliRunner().invoke(main, args)
    elapsed = time.perf_counter() - start
    assert elapsed < 5, f"{args} took {elapsed:.1f} s"
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, result.exception)
    assert "Traceback" not in result.output, args
    assert result.exit_code in (0, 2, 3), (args, result.exit_code, result.output)
    if result.exit_code == 2:
        errors = [line for line in result.stderr.splitlines() if line.startswith("Error")]
        assert len(errors) == 1 and len(result.stderr.strip().splitlines()) == 1, (args, result.stderr)
    elif "json" in args and args[args.index("json") - 1] == "--format":
        json.loads(result.stdout, parse_constant=_reject)


def _reject(name: str):
    raise AssertionError(f"non-finite JSON constant {name}")


FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@FUZZ
@given(_args("estimate", ESTIMATE_OPTIONS, ("--no-memory",)))
def test_estimate_arguments(args):
    _check(args)


@FUZZ
@given(_args("memory", MEMORY_OPTIONS, ("--inference",)))
def test_memory_arguments(args):
    _check(args)


SERVE_OPTIONS = {
    "--prompt": HOSTILE_NUMBERS,
    "--output": HOSTILE_NUMBERS,
    "--batch": HOSTILE_NUMBERS,
    "--tp": ["1", "2", "3", "8", "0", "x"],
    "--gpus": HOSTILE_NUMBERS,
    "--price": HOSTILE_NUMBERS,
    "--compute-efficiency": HOSTILE_NUMBERS,
    "--bandwidth-efficiency": HOSTILE_NUMBERS,
    "--prefill-chunk": HOSTILE_NUMBERS,
    "--gpu": ["h100", "a100", "rtx4090", "x"],
    "--weight-dtype": ["int4", "fp8", "bf16", "x"],
    "--kv-dtype": ["fp8", "int8", "x"],
    "--activation-dtype": ["fp8", "bf16", "int8"],
    "--attention": ["full", "causal", "x"],
    "--format": ["json", "table", "csv", "markdown", "x"],
}


def _valued_format(args: list[str]) -> bool:
    """No bare --format (serve has no flag to stand in for it: a bare one eats the next option)."""
    return all(x != "--format" or (i + 1 < len(args) and not args[i + 1].startswith("--")) for i, x in enumerate(args))


@FUZZ
@given(_args("serve", SERVE_OPTIONS).filter(_valued_format))
def test_serve_arguments(args):
    _check([*args[:3], "--prompt", "64", "--output", "8", *args[3:]])
