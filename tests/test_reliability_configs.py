"""Issue 34, config files and hub ids: every family reads its --config through the one safe reader
and checks its fields as `estimate --config` does. Each test names the item it guards.

A bad file or field is one `Error:` line and exit code 2, never a traceback, a hang or a silent
answer; the Python readers raise SizingError (a ValueError) naming the field."""

from __future__ import annotations

import copy
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.hybrid import hybrid_from_hf_config, hybrid_preset
from sizing.hybrid.model import total_params
from sizing.validate import SizingError
from sizing.vision import vision_preset, vlm_from_hf_config

ROOT = Path(__file__).resolve().parents[1]
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def one_error(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 2, (args, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), (args, result.output)
    return lines[0]


def hf(family: str, name: str) -> dict:
    preset = hybrid_preset(name) if family == "hybrid" else vision_preset(name)
    return copy.deepcopy(preset.hf_config)


def write(tmp_path: Path, data, name: str = "config.json") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def _child(*args: str, seconds: float = 30) -> subprocess.CompletedProcess:
    """`python -m sizing ARGS` limited to 1 GiB and `seconds`: a regression fails, never hangs."""

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))

    command = [sys.executable, "-m", "sizing", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=seconds, preexec_fn=limit_memory, cwd=ROOT)


# ---- item 1: hybrid and vision --config read through the safe reader
@pytest.mark.parametrize("command", ["hybrid", "vision"])
def test_item_1_a_fifo_and_dev_zero_are_refused_at_once(tmp_path, command):
    """Item 1: `mkfifo f; sizing hybrid --config f` hung for ever; `vision --config /dev/zero`
    read until MemoryError."""
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/zero"):
        result = _child(command, "--config", path)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert (
            result.stderr.strip()
            == f"Error: config file '{path}' is not a regular file (a FIFO, a device or a socket is not read)"
        )


@pytest.mark.parametrize("command", ["hybrid", "vision"])
@pytest.mark.parametrize(
    "text, words",
    [
        ("[" * 100_000 + "]" * 100_000, "nests deeper than 32 levels"),  # was a RecursionError traceback
        ('{"model_type": "jamba", "num_experts": NaN}', "has NaN, which is not a JSON number"),
        (
            '{"model_type": "jamba", "num_experts": Infinity}',
            "has Infinity in 'num_experts', which is not a JSON number",
        ),
        ('{"model_type": "jamba", "rms_norm_eps": 1e400}', "has '1e400', which overflows a float"),
        ('{"model_type": "jamba", "vocab_size": ' + "9" * 5000 + "}", "has an integer of 5000 digits"),
    ],
)
def test_item_1_hostile_json_is_one_line(tmp_path, command, text, words):
    """Item 1: NaN, Infinity and 1e400 were accepted and Python's raw messages leaked
    ("sys.set_int_max_str_digits")."""
    line = one_error(command, "--config", write(tmp_path, text))
    assert words in line and "set_int_max_str_digits" not in line


def test_item_1_a_directory_and_a_hub_id_are_configs(tmp_path, monkeypatch):
    """Item 1: hybrid and vision take a directory (its config.json) and a hub id, like every --config."""
    folder = tmp_path / "jamba"
    folder.mkdir()
    write(folder, hf("hybrid", "jamba-v0.1"))
    by_folder = json.loads(CliRunner().invoke(main, ["hybrid", "--config", str(folder), "--format", "json"]).output)
    assert by_folder["total_params"] == total_params(hybrid_from_hf_config(hf("hybrid", "jamba-v0.1")))
    cache = tmp_path / "hub" / "models--google--gemma-3-4b-it"
    (cache / "refs").mkdir(parents=True)
    (cache / "refs" / "main").write_text(COMMIT)
    (cache / "snapshots" / COMMIT).mkdir(parents=True)
    write(cache / "snapshots" / COMMIT, hf("vision", "gemma-3-4b"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    by_hub = CliRunner().invoke(main, ["vision", "--config", "google/gemma-3-4b-it", "--format", "json"])
    by_preset = CliRunner().invoke(main, ["vision", "--preset", "gemma-3-4b", "--format", "json"])
    assert by_hub.exit_code == 0 and json.loads(by_hub.output)["params"] == json.loads(by_preset.output)["params"]


# ---- item 2: zero, negative and non-finite values: one line, never a ZeroDivisionError
@pytest.mark.parametrize(
    "family, preset, path, value, field",
    [
        ("hybrid", "jamba-v0.1", ["attn_layer_period"], 0, "attn_layer_period"),
        ("hybrid", "jamba-v0.1", ["expert_layer_period"], 0, "expert_layer_period"),
        ("hybrid", "qwen3-next-80b-a3b", ["full_attention_interval"], 0, "full_attention_interval"),
        ("hybrid", "qwen3-next-80b-a3b", ["decoder_sparse_step"], 0, "decoder_sparse_step"),
        ("vision", "qwen2.5-vl-7b", ["vision_config", "patch_size"], 0, "patch_size"),
        ("vision", "gemma-3-4b", ["mm_tokens_per_image"], 0, "mm_tokens_per_image"),
        ("vision", "gemma-3-4b", ["mm_tokens_per_image"], -4, "mm_tokens_per_image"),  # was an isqrt ValueError
        ("hybrid", "mamba2-2.7b", ["expand"], float("nan"), "expand"),
        ("hybrid", "mamba2-2.7b", ["expand"], 1e400, "expand"),  # an inf built in Python (JSON refuses it)
    ],
)
def test_item_2_bad_pattern_values_are_one_line(tmp_path, family, preset, path, value, field):
    """Item 2: each of these was a ZeroDivisionError, ValueError or OverflowError traceback."""
    data = hf(family, preset)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    reader = hybrid_from_hf_config if family == "hybrid" else vlm_from_hf_config
    with pytest.raises(SizingError, match=field):
        reader(data)
    if value == value and abs(value) != float("inf"):  # a finite value can be written to a file
        assert f"{field}' ({value})" in one_error(family, "--config", write(tmp_path, data))


# ---- item 16: invalid values were sized silently
@pytest.mark.parametrize(
    "family, preset, path, value, words",
    [
        ("hybrid", "jamba-v0.1", ["num_experts"], -1, "'num_experts' (-1) must be an integer >= 0"),
        ("hybrid", "jamba-v0.1", ["attn_layer_period"], -1, "'attn_layer_period' (-1) must be a positive integer"),
        ("hybrid", "jamba-v0.1", ["attn_layer_offset"], 8, "attn_layer_offset (8) must be below attn_layer_period"),
        ("vision", "qwen2.5-vl-7b", ["vision_config", "out_hidden_size"], -1, "'out_hidden_size' (-1)"),
        ("hybrid", "bamba-9b", ["attn_layer_indices"], [True], "'attn_layer_indices'"),
        ("hybrid", "jamba-v0.1", ["rms_norm_eps"], None, "'rms_norm_eps' (None) must be a finite number > 0"),
        ("hybrid", "jamba-v0.1", ["rms_norm_eps"], "x", "'rms_norm_eps' ('x')"),
        ("hybrid", "jamba-v0.1", ["rms_norm_eps"], [1], "'rms_norm_eps' ([1])"),
        ("hybrid", "jamba-v0.1", ["rms_norm_eps"], float("nan"), "'rms_norm_eps' (nan)"),
        ("hybrid", "jamba-v0.1", ["max_position_embeddings"], "x", "'max_position_embeddings' ('x')"),
        (
            "vision",
            "llava-1.5-7b",
            ["text_config", "max_position_embeddings"],
            [1],
            "'text_config.max_position_embeddings'",
        ),
        ("vision", "llama-4-scout-full", ["vision_config", "norm_eps"], None, "'vision_config.norm_eps' (None)"),
        ("vision", "llama-4-scout-full", ["vision_config", "hidden_act"], 0, "'vision_config.hidden_act' (0)"),
        ("vision", "llama-4-scout-full", ["tie_word_embeddings"], "x", "'tie_word_embeddings' ('x')"),
    ],
)
def test_item_16_invalid_values_are_refused(family, preset, path, value, words):
    """Item 16: Jamba num_experts -1 was sized as a dense 9.29B model (it has 51.6B),
    attn_layer_period -1 gave no attention layer, out_hidden_size -1 negative projector
    parameters, and fields the converter does not read accepted null, strings, lists and NaN
    that `estimate --config` refuses (sizing.inputs.hf.common_fields)."""
    data = hf(family, preset)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    reader = hybrid_from_hf_config if family == "hybrid" else vlm_from_hf_config
    with pytest.raises(SizingError) as info:
        reader(data)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_item_16_the_valid_presets_still_read():
    """The checks refuse nothing real: every hybrid and vision preset reads, and Jamba keeps its
    published size (51.6B, HF model card)."""
    from sizing.hybrid import HYBRID_PRESETS
    from sizing.vision import VISION_PRESETS

    for preset in HYBRID_PRESETS:
        hybrid_from_hf_config(copy.deepcopy(preset.hf_config))
    for preset in VISION_PRESETS:
        vlm_from_hf_config(copy.deepcopy(preset.hf_config))
    jamba = total_params(hybrid_from_hf_config(hf("hybrid", "jamba-v0.1")))
    assert jamba == total_params(hybrid_preset("jamba-v0.1").model()) and round(jamba / 1e8) == 516


# ---- item 18: hybrid's exit code, -p, int4 KV
def test_item_18_hybrid_exits_3_when_nothing_fits_and_takes_p_and_int4():
    """Item 18: `hybrid --gpu h100` on Jamba at 256K answered "fits 0" with exit 0; everywhere
    else not fitting is exit 3. hybrid and vision lacked -p; hybrid --kv-dtype lacked int4."""
    args = ["hybrid", "-p", "jamba-v0.1", "--context", "262144", "--gpu", "h100"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3 and "fits 0" in result.output
    fits = CliRunner().invoke(main, ["hybrid", "-p", "jamba-v0.1", "--context", "4096", "--gpu", "h200"])
    assert fits.exit_code == 0
    int4 = json.loads(
        CliRunner().invoke(main, ["hybrid", "-p", "jamba-v0.1", "--kv-dtype", "int4", "--format", "json"]).output
    )
    bf16 = json.loads(CliRunner().invoke(main, ["hybrid", "-p", "jamba-v0.1", "--format", "json"]).output)
    assert int4["memory_bytes"]["kv_cache"] * 4 == bf16["memory_bytes"]["kv_cache"]  # 0.5 bytes vs 2 per element
    assert CliRunner().invoke(main, ["vision", "-p", "gemma-3-4b"]).exit_code == 0


# ---- item 6: hub ids the hub would refuse, and a cache that points elsewhere
@pytest.mark.parametrize("hub_id", ["a..b/c", "a--b/c", "org/name..", "o" * 100 + "/x", "org/name@../../etc"])
def test_item_6_bad_hub_ids_are_one_line(tmp_path, monkeypatch, hub_id):
    """Item 6: each was an HFValidationError traceback (only OSError was caught)."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    assert "hub id" in one_error("estimate", "--config", hub_id)


def test_item_6_a_cache_whose_refs_leave_it_is_one_line(tmp_path, monkeypatch):
    """Item 6: refs/main holding ../../../../etc was a ValueError traceback."""
    refs = tmp_path / "hub" / "models--o--n" / "refs"
    refs.mkdir(parents=True)
    (refs / "main").write_text("../../../../etc")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    for command in ("estimate", "hybrid", "vision"):
        assert "hub id 'o/n'" in one_error(command, "--config", "o/n")
