"""Hostile input at the edges (issue 11): each case of the issue as a regression test.

Every bad input ends in under a second with one `Error:` line and exit code 2, never a
traceback, a hang or a NaN; the Python API raises SizingError (a ValueError) naming the
field. Cases that once hung or ate memory (a FIFO, /dev/zero) run in a child process with a
timeout and a memory limit, so a regression fails the test instead of the test machine."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import click
import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs.hardware import GPUS, get_gpu
from sizing.inputs.hf.config_file import load_config_file
from sizing.inputs.hf.read import from_hf_config
from sizing.inputs.presets import PRESETS, get_preset
from sizing.inputs.units import QuantityError, parse_quantity
from sizing.validate import MAX_TOKENS, SizingError, UnknownName, parse_int

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "hf_configs")


def _hf(name: str) -> dict:
    with open(os.path.join(FIXTURES, name)) as handle:
        return json.load(handle)


def _reject_constant(name: str):
    raise AssertionError(f"non-finite JSON constant {name}")


def one_error(*args: str, within: float = 1.0) -> str:
    """Run `sizing ARGS`; assert exit 2 with exactly one line, `Error: ...`, no traceback,
    within `within` seconds. Returns the line."""
    start = time.perf_counter()
    result = CliRunner().invoke(main, list(args))
    elapsed = time.perf_counter() - start
    assert result.exit_code == 2, (args, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, result.exception)
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error:"), (args, result.output)
    assert elapsed < within, f"{args} took {elapsed:.2f} s"
    return lines[0]


def run_ok(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, (args, result.output)
    return result.output


@pytest.fixture(scope="module", autouse=True)
def _warm():
    """Load the command modules once, so the timings below time the input handling."""
    run_ok("estimate", "-p", "gpt2", "--format", "json")


# ---- hangs and unbounded work: bounded before any big integer is built
@pytest.mark.parametrize(
    "args, words",
    [
        (["--tokens", "1e999999"], ["--tokens ('1e999999')", "at most 1e30"]),
        (["--tokens", "1e99999999"], ["at most 1e30"]),
        (["--tokens", "1e300"], ["at most 1e30"]),
        (["--tokens", "1" + "0" * 5000], ["at most 1e30"]),
        (["--tokens", "1.5"], ["whole number"]),
        (["--tokens", "1e-999999"], ["whole number"]),
        (["--seq-len", "1" + "0" * 160], ["--seq-len", "at most"]),
        (["--gpus", "9" * 400], ["--gpus", "at most"]),
        (["--gpus", "2.5"], ["--gpus ('2.5')", "integer"]),
        (["--gpus", "0x10"], ["integer"]),
    ],
)
def test_huge_numbers_are_refused_at_once(args, words):
    line = one_error("estimate", "-p", "gpt2", *args)
    for word in words:
        assert word in line


def test_quantities_are_exact():
    digits29 = "12345678901234567890123456789"
    assert parse_quantity(digits29) == int(digits29)  # a 28-digit Decimal context would round it
    assert parse_quantity("1.2345678901234567890123456789e28") == 12345678901234567890123456789
    assert parse_quantity("2T") == 2 * 10**12 and parse_quantity("1.5K") == 1500 and parse_quantity("2t") == 2 * 10**12
    assert parse_quantity("1e30") == MAX_TOKENS
    with pytest.raises(QuantityError, match="at most 1e30"):
        parse_quantity("1000000000000000000000000000001")
    data = json.loads(run_ok("estimate", "-p", "gpt2", "--tokens", digits29, "--format", "json"))
    assert data["training"]["tokens"] == int(digits29)


def test_integers_are_parsed_exactly():
    assert parse_int("n", "9007199254740993", maximum=2**60) == 9007199254740993  # float() gives ...992
    line = one_error("estimate", "-p", "gpt2", "--set", "n_layers=9007199254740993")
    assert "n_layers ('9007199254740993')" in line and "at most" in line


# ---- no NaN or Infinity in, none out
@pytest.mark.parametrize(
    "args, words",
    [
        (["--price", "nan"], ["--price (nan)"]),
        (["--price", "inf"], ["--price (inf)"]),
        (["--price", "-1"], ["--price (-1)", ">= 0"]),
        (["--mfu", "1e-320"], ["--mfu (1e-320)", "at least 1e-06"]),
        (["--mfu", "nan"], ["--mfu (nan)"]),
        (["--mfu", "1.5"], ["--mfu (1.5) must be in (0, 1]"]),
        (["--set", "rope_theta=inf"], ["rope_theta ('inf')", "finite"]),
        (["--set", "norm_eps=Infinity"], ["norm_eps ('Infinity')", "finite"]),
        (["--set", "rope_theta=1e400"], ["rope_theta ('1e400')", "finite"]),
        (["--set", "rotary_fraction=true"], ["rotary_fraction ('true')"]),
        (["--set", "qkv_bias=maybe"], ["qkv_bias ('maybe')", "true or false"]),
    ],
)
def test_non_finite_and_mistyped_values(args, words):
    line = one_error("estimate", "-p", "llama2-7b", *args)
    for word in words:
        assert word in line


def test_extreme_valid_values_give_strict_json():
    out = run_ok(
        "estimate",
        "-p",
        "llama2-7b",
        "--seq-len",
        str(2**40),
        "--tokens",
        "1e30",
        "--mfu",
        "1e-6",
        "--price",
        "1e12",
        "--gpus",
        str(2**40),
        "--recompute",
        "full",
        "--format",
        "json",
    )
    data = json.loads(out, parse_constant=_reject_constant)
    assert data["training"]["tokens"] == 10**30 and data["flops"]["seq_len"] == 2**40


# ---- a context beyond a learned position table
def test_seq_len_beyond_the_position_table_names_max_positions():
    line = one_error("estimate", "-p", "gpt2", "--seq-len", "1025")
    assert "--seq-len (1025)" in line and "max_positions 1024" in line
    run_ok("estimate", "-p", "gpt2", "--seq-len", "1025", "--set", "max_positions=1025")
    run_ok("estimate", "-p", "llama2-7b", "--seq-len", "100000")  # RoPE: no table
    line = one_error("estimate", "-p", "gpt2", "--set", "max_positions=512")  # the preset's context, 1024
    assert "max_positions 512" in line


# ---- one model per command
@pytest.mark.parametrize("command", ["estimate", "memory", "profile"])
def test_a_repeated_preset_is_an_error(command):
    line = one_error(command, "--preset", "gpt2", "--preset", "llama2-7b")
    assert "--preset given 2 times" in line and "'gpt2'" in line and "'llama2-7b'" in line


def test_a_repeated_config_is_an_error():
    path = os.path.join(FIXTURES, "openai-community__gpt2.json")
    assert "--config given 2 times" in one_error("estimate", "--config", path, "--config", path)


def test_verify_still_takes_several_presets():
    from sizing.cli.verify import verify

    option = next(p for p in verify.params if p.name == "presets")
    assert option.multiple and option.callback is None


# ---- raw values are escaped: a newline cannot forge a second Error line
@pytest.mark.parametrize(
    "args",
    [
        ["estimate", "--preset", "gpt2\nError: forged"],
        ["estimate", "--config", "/no/such\nError: forged", "--seq-len", "8"],
        ["estimate", "-p", "gpt2", "--set", "mlp=gelu\nError: forged"],
        ["estimate", "-p", "gpt2", "--set", "n_layers\nError: forged=1"],
        ["estimate", "-p", "gpt2", "--set", "oops\nError: forged"],
        ["estimate", "-p", "gpt2", "--tokens", "1\nError: forged"],
        ["estimate", "-p", "gpt2", "--gpus", "1\nError: forged"],
        ["estimate", "-p", "gpt2", "--mfu", "1\nError: forged"],
        ["estimate", "-p", "gpt2", "--gpu", "h100\nError: forged"],
        ["estimate", "-p", "gpt2", "--format", "json\nError: forged"],
        ["memory", "--preset", "x\nError: forged"],
    ],
)
def test_newlines_in_values_are_escaped(args):
    assert "\\n" in one_error(*args)


# ---- choices and names: one line, not click's usage block
@pytest.mark.parametrize(
    "args, words",
    [
        (["estimate", "-p", "gpt2", "--format", "x"], ["--format ('x')", "json"]),
        (["estimate", "-p", "gpt2", "--attention", "x"], ["--attention ('x')", "causal"]),
        (["estimate", "-p", "gpt2", "--recompute", "x"], ["--recompute ('x')", "selective"]),
        (["estimate", "-p", "gpt2", "--dtype", "x"], ["--dtype ('x')", "fp8"]),
        (["estimate", "-p", "gpt2", "--gpu", "a100", "--dtype", "fp8"], ["a100-80gb has no fp8 peak"]),
        (["estimate", "-p", "gpt2", "--gpu", "x"], ["unknown gpu 'x'"]),
        (["estimate", "-p", "nope"], ["unknown preset 'nope'"]),
        (["presets", "--format", "x"], ["--format ('x')"]),
        (["gpus", "--format", "x"], ["--format ('x')"]),
    ],
)
def test_bad_choices_and_names(args, words):
    line = one_error(*args)
    for word in words:
        assert word in line


# ---- config files
def _config_error(tmp_path, content: str | bytes, *words: str) -> str:
    path = tmp_path / "config.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    line = one_error("estimate", "--config", str(path), "--seq-len", "8")
    assert f"'{path}'" in line
    for word in words:
        assert word in line
    return line


def _own(**fields) -> str:
    return json.dumps(dict(PRESETS["gpt2"].config.to_dict(), **fields))


@pytest.mark.parametrize(
    "fields, words",
    [
        ({"qkv_bias": "false"}, ["qkv_bias ('false')", "true or false"]),
        ({"tied_embeddings": "no"}, ["tied_embeddings ('no')"]),
        ({"rotary_fraction": True}, ["rotary_fraction (True)"]),
        ({"n_layers": 12.0}, ["n_layers (12.0)"]),
        ({"n_layers": [12]}, ["n_layers ([12])"]),
    ],
)
def test_own_json_fields_are_type_checked(tmp_path, fields, words):
    _config_error(tmp_path, _own(**fields), *words)


def test_json_numbers_that_overflow_are_refused(tmp_path):
    _config_error(tmp_path, _own(rope_theta=1).replace('"rope_theta": 1', '"rope_theta": 1e400'), "1e400", "overflows")
    _config_error(tmp_path, _own(n_layers=1).replace('"n_layers": 1', '"n_layers": ' + "9" * 5000), "5000 digits")
    _config_error(tmp_path, _own(rope_theta=1).replace('"rope_theta": 1', '"rope_theta": Infinity'), "Infinity")


def test_deep_nesting_is_refused(tmp_path):
    _config_error(tmp_path, '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nests deeper")
    _config_error(tmp_path, '{"a": ' + "[" * 40 + "]" * 40 + "}", "nests deeper")


def test_a_huge_file_is_refused(tmp_path):
    _config_error(tmp_path, '{"a": "' + "x" * (5 * 2**20) + '"}', "bytes")


@pytest.mark.parametrize(
    "name, changes, words",
    [
        ("meta-llama__Llama-2-7b-hf.json", {"model_type": ["llama"]}, ["model_type (['llama'])", "supported"]),
        ("meta-llama__Llama-2-7b-hf.json", {"model_type": {"a": 1}}, ["model_type ({'a': 1})"]),
        (
            "Qwen__Qwen2-7B.json",
            {"use_sliding_window": True, "layer_types": 5},
            ["'layer_types' (5)", "full_attention"],
        ),
        ("Qwen__Qwen2-7B.json", {"use_sliding_window": True, "layer_types": ["x"] * 28}, ["'layer_types'"]),
        ("Qwen__Qwen2-7B.json", {"use_sliding_window": True, "num_hidden_layers": 1e9}, ["'num_hidden_layers'"]),
        ("Qwen__Qwen2-7B.json", {"use_sliding_window": True, "num_hidden_layers": 10**15}, ["'num_hidden_layers'"]),
        (
            "Qwen__Qwen2-7B.json",
            {"use_sliding_window": True, "num_hidden_layers": 10**9},
            ["of 1000000000 layers slide"],
        ),
        ("openai-community__gpt2.json", {"n_inner": 0}, ["'n_inner' (0)", "positive integer"]),
        ("tiiuae__falcon-40b.json", {"ffn_hidden_size": 0}, ["'ffn_hidden_size' (0)"]),
        ("tiiuae__falcon-40b.json", {"num_ln_in_parallel_attn": 0}, ["'num_ln_in_parallel_attn' (0)"]),
        ("meta-llama__Llama-2-7b-hf.json", {"rope_theta": float("inf")}, ["'rope_theta' (inf)"]),
    ],
)
def test_hf_fields_are_checked(name, changes, words):
    start = time.perf_counter()
    with pytest.raises(SizingError) as info:
        from_hf_config(dict(_hf(name), **changes))
    assert time.perf_counter() - start < 1  # 1e9 layers are counted, never listed
    for word in words:
        assert word in str(info.value)


def test_hf_n_inner_null_is_4d():
    assert from_hf_config(dict(_hf("openai-community__gpt2.json"), n_inner=None)).d_ff == 4 * 768


def test_a_fifo_does_not_block(tmp_path):
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    with pytest.raises(SizingError, match="not a regular file"):
        load_config_file(str(fifo))  # stat first: never opened


def _child(*args: str, seconds: float = 20) -> subprocess.CompletedProcess:
    """`python -m sizing ARGS` in a child limited to 1 GiB of memory and `seconds`."""

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))

    return subprocess.run(
        [sys.executable, "-m", "sizing", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=seconds,
        preexec_fn=limit_memory,
    )


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "fifo"])
def test_special_files_are_one_error_line(tmp_path, device):
    if device == "fifo":
        device = str(tmp_path / "fifo")
        os.mkfifo(device)
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    result = _child("estimate", "--config", device, "--seq-len", "8")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        (f"Error: config file '{device}' is not a regular file (a FIFO, a device or a socket is not read)")
    ]


# ---- the Python API: one exception type, naming the field
@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: get_preset("nope"), ["unknown preset 'nope'"]),
        (lambda: get_preset("llama2-7c"), ["did you mean llama2-7b"]),
        (lambda: get_preset(None), ["preset (None)"]),
        (lambda: get_gpu("x"), ["unknown gpu 'x'", "h100-sxm"]),
        (lambda: get_gpu(3), ["gpu (3)"]),
        (lambda: get_gpu("a100").peak_flops_per_second("fp8"), ["a100-80gb has no fp8 peak", "bf16"]),
        (lambda: GPUS["h100-sxm"].peak_flops_per_second("int3"), ["dtype ('int3')", "fp8"]),
    ],
)
def test_unknown_names_raise_sizing_error(call, words):
    with pytest.raises(SizingError) as info:
        call()
    error = info.value
    assert isinstance(error, UnknownName) and isinstance(error, ValueError)
    assert isinstance(error, KeyError)  # `except KeyError` callers keep working
    assert not str(error).startswith(("'", '"'))  # KeyError's str() would quote the message
    for word in words:
        assert word in str(error)


def test_a_sizing_error_escaping_a_command_is_one_error_line():
    @click.command()
    def boom():
        raise SizingError("depth (0) must be a positive integer")

    main.add_command(boom, "boom-test")
    try:
        assert one_error("boom-test") == "Error: depth (0) must be a positive integer"
    finally:
        main.commands.pop("boom-test")


# ---- the Python API: run options are checked even when no training cost is asked for
@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"gpu": "x"}, ["unknown gpu 'x'"]),  # gpt2 has no published tokens: nothing is costed
        ({"gpu": "a100", "dtype": "fp8"}, ["a100-80gb has no fp8 peak"]),
        ({"price_per_gpu_hour": "2"}, ["price_per_gpu_hour ('2')"]),
        ({"mfu": 2}, ["mfu (2)", "(0, 1]"]),
        ({"num_gpus": 0}, ["num_gpus (0)"]),
        ({"seq_len": True}, ["seq_len (True)"]),
    ],
)
def test_estimate_checks_every_option(kwargs, words):
    from sizing import estimate

    with pytest.raises(SizingError) as info:
        estimate("gpt2", **kwargs)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("model", [None, 42, ["gpt2"]])
def test_estimate_of_something_that_is_not_a_model(model):
    from sizing import estimate

    with pytest.raises(SizingError, match=r"must be a preset name, a config file path, a Preset or a ModelConfig"):
        estimate(model)


def test_estimate_of_a_bare_config_needs_seq_len():
    from sizing import ModelConfig, estimate

    cfg = ModelConfig(vocab_size=100, d_model=64, n_layers=2, n_heads=4, d_ff=256, position="rope")
    with pytest.raises(SizingError, match="seq_len must be given"):
        estimate(cfg)


# ---- sizing report --out: an unusable folder is one line, before anything is built
def test_report_out_unusable(tmp_path):
    a_file = tmp_path / "presets"
    a_file.write_text("not a folder")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "README.md").write_text("# my project\n")
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "presets").write_text("a file where a folder goes")
    cases = {
        "": "--out ('') must name a folder",
        "/dev/null": "'/dev/null' exists and is not a folder",
        str(a_file / "sub"): f"'{a_file}' is not a folder",
        "/proc/x": "--out ('/proc/x'): cannot create it",
        str(tmp_path / "proj"): "holds a README.md that `sizing report` did not write",
        str(tmp_path / "odd"): "presets' exists and is not a folder",
    }
    for out, words in cases.items():
        for extra in ([], ["--check"]):
            if extra and out in ("/proc/x",):
                continue  # --check creates nothing, so a missing folder is simply stale
            line = one_error("report", "--out", out, *extra)
            assert line.startswith("Error: ") and words in line, (out, extra, line)
    assert (tmp_path / "proj" / "README.md").read_text() == "# my project\n"  # never overwritten


def test_report_cleans_and_flags_temporaries_of_a_killed_run(tmp_path, monkeypatch):
    from sizing.report import build

    # two small pages stand in for the whole build (seconds): the writing and checking are what is tested
    pages = {"README.md": build.GENERATED_MARK + b" -->\n# Reports\n", "presets/gpt2.md": b"# gpt2\n"}
    monkeypatch.setattr(build, "build_reports", lambda *args, **kwargs: dict(pages))
    quiet = {"echo": lambda line: None}
    build.write_reports(tmp_path, **quiet)
    dead = 2**31 - 2  # above every system's pid_max: the run that left these was killed
    strays = [tmp_path / f".sizing-tmp-{dead}-k9k9k9k9", tmp_path / "presets" / f".sizing-tmp-{dead}-k9k9k9k9"]
    for path in strays:
        path.write_bytes(b"half a file")
    assert build.check_reports(tmp_path, **quiet) == [
        f".sizing-tmp-{dead}-k9k9k9k9: temporary file of an interrupted run",
        f"presets/.sizing-tmp-{dead}-k9k9k9k9: temporary file of an interrupted run",
    ]
    build.write_reports(tmp_path, **quiet)
    assert not any(path.exists() for path in strays)
    assert build.check_reports(tmp_path, **quiet) == []
    assert (tmp_path / "presets" / "gpt2.md").read_bytes() == pages["presets/gpt2.md"]


def test_verify_refuses_an_impossible_seq_len_before_torch_loads():
    code = (
        "import sys; from click.testing import CliRunner; from sizing.cli import main; "
        "r = CliRunner().invoke(main, ['verify', '--flops', '--preset', 'llama2-7b', '--set', 'n_layers=1', "
        "'--seq-len', '1000000000']); print(r.exit_code, 'torch' in sys.modules); print(r.output)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert out.startswith("2 False\n") and "at most 268,435,455" in out


# ---- a single-value option given twice is an error in every command (click keeps the last)
@pytest.mark.parametrize(
    "args, words",
    [
        (["estimate", "-p", "gpt2", "--seq-len", "8", "--seq-len", "16"], "--seq-len given twice (8, 16)"),
        (["estimate", "-p", "gpt2", "-T8", "-T", "9"], "--seq-len given twice (8, 9)"),
        (["estimate", "-p", "gpt2", "--gpu", "h100", "--gpu=a100"], "--gpu given twice (h100, a100)"),
        (["memory", "-p", "gpt2", "--zero", "1", "--zero", "2"], "--zero given twice (1, 2)"),
        (["gpus", "--format", "json", "--format", "csv"], "--format given twice (json, csv)"),
        (["presets", "--format", "json", "--format", "json"], "--format given twice (json, json)"),
        (["report", "--out", "a", "--out", "b"], "--out given twice (a, b)"),
        (["profile", "-p", "gpt2", "--compile", "--no-compile"], "--compile given twice (--compile, --no-compile)"),
        (["verify", "--flops", "-p", "gpt2", "--seq-len", "8", "--seq-len", "9"], "--seq-len given twice (8, 9)"),
    ],
)
def test_a_repeated_single_value_option_is_an_error(args, words):
    assert words in one_error(*args)


def test_options_that_may_repeat_still_repeat():
    assert "2 model(s) match" in run_ok("verify", "--params", "-p", "gpt2", "-p", "gpt2-medium")
    out = run_ok("estimate", "-p", "gpt2", "--set", "n_layers=2", "--set", "d_model=1536", "--format", "json")
    assert json.loads(out)["model"]["config"]["n_layers"] == 2
    # a value that happens to spell an option is a value, not a second option
    assert "--seq-len" in one_error("estimate", "-p", "gpt2", "--seq-len", "--seq-len")
