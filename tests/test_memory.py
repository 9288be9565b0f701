"""sizing.memory's public API, its rendering (sizing.render.memory) and `sizing memory`. The
formulas are tested beside their modules: test_memory_states.py, test_memory_activations.py,
test_memory_kv.py, test_memory_fit.py."""

import json

import pytest
from click.testing import CliRunner

import sizing.memory
from sizing import get_preset
from sizing.cli import main
from sizing.inputs.units import format_gib, format_int
from sizing.memory import InferenceMemory, MemorySummary, TrainingMemory, inference_memory, training_memory
from sizing.render.memory import activation_rows, flat_items, inference_rows, render_memory, training_rows

LLAMA2_7B = get_preset("llama2-7b").config
N_7B = 6_738_415_616


def _memory(*args):
    return CliRunner().invoke(main, ["memory", *args])


# ---------------------------------------------------------------- public API
def test_the_package_exports_its_api():
    for name in sizing.memory.__all__:
        assert hasattr(sizing.memory, name), name
    for used in (
        "FP32_BYTES",
        "TrainingMemory",
        "activation_terms",
        "activations_bytes",
        "get_precision",
        "gradients_bytes",
        "kv_cache_bytes",
        "optimizer_state_bytes",
        "training_memory",
        "transient_bytes",
        "weights_bytes",
        "summary_for_estimate",
        "ATTENTION_IMPLS",
        "DTYPE_BITS",
        "ZERO_STAGES",
    ):
        assert used in sizing.memory.__all__, used  # reference_model and the CLI import these
    assert not hasattr(sizing.memory, "kv_cache_bytes_per_token")  # dead code, removed


def test_results_do_not_render_themselves():
    for cls in (TrainingMemory, InferenceMemory, MemorySummary):
        for method in ("render", "summary_rows", "verdict", "heading_text", "flat_items"):
            assert not hasattr(cls, method), (cls.__name__, method)


# ---------------------------------------------------------------- rendering
def test_render_formats():
    mem = training_memory("llama2-7b", zero=3, dp=8, gpu="h100")
    data = mem.to_dict()
    table = render_memory(mem, "table")
    assert "GiB" in table and "Korthikanti" in table and "fits:" in table
    assert render_memory(mem, "markdown").splitlines()[0].startswith("## Training memory")
    assert json.loads(render_memory(mem, "json")) == data
    assert ("per_gpu.weights_bytes", data["per_gpu"]["weights_bytes"]) in flat_items(mem)
    assert dict(flat_items(mem))["would_fit"] == "; ".join(data["would_fit"])
    csv = render_memory(mem, "csv")
    assert csv.startswith("key,value\n") and f"\nper_gpu.total_bytes,{mem.per_gpu_bytes}\n" in csv


def test_training_rows_show_the_numbers():
    mem = training_memory("llama2-7b", zero=3, dp=8, gpu="h100")
    rows = {row[0]: row for row in training_rows(mem)}
    assert rows["weights"][2:] == [format_gib(2 * N_7B), format_gib(mem.per_gpu["weights_bytes"])]
    assert rows["total"][2:] == [format_gib(mem.total_bytes), format_gib(mem.per_gpu_bytes)]
    assert rows["ZeRO-3 gathered unit"][3] == format_gib(mem.per_gpu["zero3_gathered_bytes"])
    assert rows["max micro-batch"][3] == str(mem.max_micro_batch)
    assert rows["optimizer states"][1] == "N·4 master + 2·N·4"  # 12 bytes per parameter
    assert [r[2] for r in activation_rows(mem)] == [format_int(t.bytes) for t in mem.terms]
    assert "ZeRO-3 gathered unit" not in {r[0] for r in training_rows(training_memory("gpt2"))}


def test_inference_rows_show_the_numbers():
    inf = inference_memory("mistral-7b", 32768, gpu="h100", prefill_chunk=4096)
    rows = {row[0]: row for row in inference_rows(inf)}
    assert rows["total"][2] == format_gib(inf.total_bytes)
    kv_row = rows["KV cache (bf16, C=32768 (window 4096), batch 1)"]
    assert kv_row[1] == "2·L·h_kv·d_h·2·4096·1" and kv_row[2] == format_gib(inf.kv_cache_bytes)
    assert rows["max context at batch 1"][2] == "unbounded (window caps the cache)"
    llama = inference_memory("llama2-7b", 4096)
    assert {r[0]: r for r in inference_rows(llama)}["max batch at C=4096"][2] == format_int(llama.max_batch) == "33"


def test_estimate_embeds_the_memory_summary():
    result = CliRunner().invoke(main, ["estimate", "--preset", "llama2-7b", "--format", "json"])
    assert result.exit_code == 0, result.output
    memory = json.loads(result.output)["memory"]
    training, inference = memory["training"], memory["inference"]
    assert training["weights_bytes"] == 2 * N_7B and training["optimizer_bytes"] == 12 * N_7B
    assert training["precision"] == "bf16-mixed" and training["micro_batch"] == 1
    assert training["attention_impl"] == "flash" and training["recompute"] == "none"
    assert training["max_micro_batch"] is None  # does not fit one A100 80GB
    for key in ("gradients_bytes", "activations_bytes", "total_bytes", "per_gpu_bytes"):
        assert isinstance(training[key], int)
    assert inference["weights_bytes"] == 2 * N_7B
    assert inference["kv_cache_bytes"] == 2 * 32 * 32 * 128 * 2 * 4096
    assert inference["total_bytes"] == inference["weights_bytes"] + inference["kv_cache_bytes"]
    table = CliRunner().invoke(main, ["estimate", "--preset", "gpt2"]).output
    assert "Training memory per GPU" in table and "Inference memory" in table
    csv = CliRunner().invoke(main, ["estimate", "--preset", "gpt2", "--format", "csv"]).output
    assert "\nmemory,inference.max_context,,1024\n" in csv


# ---------------------------------------------------------------- sizing memory
def test_cli_fits_exit_0_and_json():
    result = _memory("--preset", "llama2-7b", "--gpu", "h100", "--zero", "3", "--dp", "8", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["fits"] is True and data["max_micro_batch"] >= 1
    assert data["per_gpu"]["weights_bytes"] * 8 == 2 * N_7B


def test_cli_does_not_fit_exit_3_with_the_reason():
    result = _memory("--preset", "llama2-7b", "--gpu", "a100-80gb")
    assert result.exit_code == 3
    assert "does not fit: model states alone" in result.output
    # one answer to "how many GPUs", the layout search's (sizing.parallel.min_gpus)
    assert "would fit: the fewest GPUs: 2 (" in result.output
    data = json.loads(_memory("--preset", "llama2-7b", "--format", "json").output)
    assert data["fits"] is False and data["max_micro_batch"] is None


def test_cli_inference_and_formats():
    result = _memory(
        "--preset",
        "llama2-70b",
        "--inference",
        "--context",
        "4096",
        "--batch",
        "8",
        "--weight-dtype",
        "int4",
        "--gpu",
        "h100",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["kv_cache_bytes"] == 8 * 1_342_177_280 and data["weight_dtype"] == "int4"
    csv = _memory("--preset", "gpt2", "--format", "csv").output
    assert csv.startswith("key,value\n") and "\nper_gpu.total_bytes," in csv
    markdown = _memory("--preset", "gpt2", "--attention-impl", "sdpa", "--format", "markdown").output
    assert markdown.startswith("## Training memory") and "| attn.logsumexp " in markdown  # sdpa = flash terms


def test_cli_aliases_and_defaults():
    result = _memory(
        "--preset",
        "gpt2",
        "--precision",
        "mixed",
        "--optimizer",
        "adam",
        "--attention-impl",
        "SDPA",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["precision"], data["optimizer"], data["attention_impl"]) == ("bf16-mixed", "adamw", "flash")
    # gpt2 has no published run here, so the default GPU is the H100 (sizing.inputs.default_gpu)
    assert (data["zero_stage"], data["dp"], data["recompute"], data["gpu"]) == (0, 1, "none", "h100-sxm")
    assert data == json.loads(_memory("--preset", "gpt2", "--format", "json").output)


@pytest.mark.parametrize(
    "args",
    [
        ("--micro-batch", "-1"),
        ("--micro-batch", "0"),
        ("--zero", "4"),
        ("--dp", "0"),
        ("--inference", "--batch", "-3"),
        ("--inference", "--weight-dtype", "int3"),
        ("--inference", "--kv-dtype", "fp64"),
        ("--precision", "fp64"),
        ("--optimizer", "lion"),
        ("--recompute", "some"),
        ("--attention-impl", "xformers"),
        ("--gpu", "h1000"),
        ("--seq-len", "abc"),
        ("--batch", "2"),  # an inference option without --inference
        ("--inference", "--micro-batch", "2"),
    ],
)
def test_bad_input_is_one_line_exit_2(args):
    result = _memory("--preset", "llama2-7b", *args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output


def test_no_model_or_seq_len_is_a_user_error(tmp_path):
    assert _memory().exit_code == 2
    result = _memory("--config", "nope.json")
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    path = tmp_path / "llama2-7b.json"
    path.write_text(json.dumps(LLAMA2_7B.to_dict()))
    for args, needed in ((), "--seq-len"), (("--inference",), "--context"):
        result = _memory("--config", str(path), *args)
        assert result.exit_code == 2 and f"{needed} is needed" in result.output
    result = _memory("--config", str(path), "--inference", "--context", "4096", "--format", "json")
    assert result.exit_code == 0 and json.loads(result.output)["kv_cache_bytes"] == 2 * 32 * 32 * 128 * 2 * 4096
