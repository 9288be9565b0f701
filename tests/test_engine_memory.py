"""The engine's split of a GPU (sizing/memory/engine.py) and `sizing memory --inference --engine/--quant`."""

import json

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.inputs.presets import get_preset
from sizing.memory.engine import engine_memory, kv_bytes_per_token
from sizing.memory.prefill import prefill_activation_peak_bytes
from sizing.validate import SizingError

GIB = 2**30


def test_vllm_llama3_8b_on_h100_term_by_term():
    cfg = get_preset("llama3-8b").config
    weights = 8_030_261_248 * 2  # bf16
    e = engine_memory(cfg, weights, 8192, "vllm", "h100", 0.9)
    budget = int(81559 * 2**20 * 0.9)  # the memory an H100 reports x utilization
    peak = prefill_activation_peak_bytes(cfg, 8192, 256, 2)  # max_num_batched_tokens, sampler rows
    kv = budget - weights - GIB // 2 - peak
    assert e.kv_bytes_per_token == 2 * 8 * 128 * 32 * 2 == 131_072  # K and V, 8 kv heads, 32 layers, bf16
    assert e.kv_budget_bytes == kv
    assert e.num_blocks == kv // (16 * 131_072)
    assert e.kv_tokens == e.num_blocks * 16
    assert e.max_concurrency == e.kv_tokens / 8192
    assert [t.name for t in e.terms] == ["engine budget", "weights", "non-torch memory", "profiled activation peak"]
    assert e.fits


def test_sglang_has_no_profiled_peak_and_pages_one_token():
    cfg = get_preset("llama2-7b").config
    e = engine_memory(cfg, 13_476_831_232, 4096, "sglang", "h100", 0.88)
    assert e.block_size == 1 and len(e.terms) == 3
    assert e.num_blocks == (int(81559 * 2**20 * 0.88) - 13_476_831_232 - GIB // 2) // (2 * 32 * 32 * 128 * 2)


def test_kv_per_token_under_tp():
    dsv3 = get_preset("deepseek-v3").config
    # MLA caches one latent (512) + rope key (64) per layer, replicated on every TP rank: 61 layers
    assert kv_bytes_per_token(dsv3, "fp8", 8) == kv_bytes_per_token(dsv3, "fp8", 1) == (512 + 64) * 61
    llama70 = get_preset("llama2-70b").config  # 8 kv heads
    assert kv_bytes_per_token(llama70, "bf16", 4) == 2 * 2 * 128 * 80 * 2  # 2 heads per rank
    assert kv_bytes_per_token(llama70, "bf16", 16) == 2 * 1 * 128 * 80 * 2  # fewer heads than ranks: replicated


def test_does_not_start_when_one_request_does_not_fit():
    cfg = get_preset("llama2-70b").config
    e = engine_memory(cfg, 68_976_648_192 * 2, 4096, "vllm", "h100", 0.9)  # 128 GiB of bf16 on one GPU
    assert e.kv_budget_bytes < 0 and e.num_blocks == 0 and not e.fits


@pytest.mark.parametrize(
    "kwargs, field",
    [({"utilization": 0}, "gpu_memory_utilization"), ({"engine": "tgi"}, "engine"), ({"tp": 0}, "tp")],
)
def test_bad_input_names_the_field(kwargs, field):
    cfg = get_preset("llama2-7b").config
    with pytest.raises(SizingError, match=field):
        engine_memory(cfg, 1, 4096, **kwargs)


def _run(*args):
    return CliRunner().invoke(main, ["memory", *args])


def test_cli_engine_table_and_json():
    r = _run("--preset", "llama3-8b", "--inference", "--engine", "vllm", "--gpu", "h100", "--context", "8192")
    assert r.exit_code == 0, r.output
    assert "KV blocks" in r.output and "max concurrency at 8192 tokens" in r.output
    r = _run("--preset", "llama3-8b", "--inference", "--engine", "vllm", "--gpu", "h100", "--format", "json")
    data = json.loads(r.output)
    assert data["num_blocks"] * 16 == data["kv_tokens"] and data["weights"] == "bf16"


def test_cli_engine_exit_3_when_it_cannot_start():
    r = _run("--preset", "llama2-70b", "--inference", "--engine", "vllm", "--gpu", "h100", "--context", "4096")
    assert r.exit_code == 3 and "does not start" in r.output


def test_cli_quant_and_the_int4_note():
    r = _run("--preset", "gpt-oss-120b", "--inference", "--quant", "mxfp4-experts", "--gpu", "h100", "--format", "json")
    data = json.loads(r.output)
    assert data["quant"] == "mxfp4-experts" and abs(data["weights_bytes"] / GIB - 60.8) < 0.608
    r = _run("--preset", "llama2-7b", "--inference", "--weight-dtype", "int4")
    assert "exactly 4 bits" in r.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--inference", "--quant", "q4_0", "--weight-dtype", "int4"], "leave out --weight-dtype"),
        (["--inference", "--max-num-batched-tokens", "4096"], "--max-num-batched-tokens applies with --engine"),
        (["--quant", "q4_0"], "--quant applies to inference"),
        (["--inference", "--engine", "vllm", "--gpu-memory-utilization", "1.5"], "--gpu-memory-utilization"),
        (["--inference", "--quant", "q9"], "--quant"),
    ],
)
def test_cli_errors(args, message):
    r = _run("--preset", "llama2-7b", *args)
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output


# vLLM 0.6 start-up logs, Llama-3.1-8B-Instruct bf16 on an RTX 3090 (total_gpu_memory=23.58GiB,
# gpu_memory_utilization=0.90, non_torch_memory=0.35GiB; the profiling forward is max_model_len
# tokens, chunked prefill off), vllm-project/vllm issue #10517: (max_model_len, GPU blocks).
VLLM_3090_LOGS = [(20000, 1952), (29000, 1478)]


@pytest.mark.parametrize("max_model_len, published", VLLM_3090_LOGS)
def test_blocks_against_vllm_logs(max_model_len, published):
    """Not fitted: within 10% (the profiled peak here is the prefill model's, 0.16-0.23 GiB below
    what vLLM measured; it also loads 0.03 GiB more than the parameters). Measured: +5.1%, +9.1%."""
    cfg = get_preset("llama3-8b").config  # the 3.1 weights have the same shapes
    e = engine_memory(
        cfg,
        8_030_261_248 * 2,
        max_model_len,
        "vllm",
        utilization=0.9,
        max_num_batched_tokens=max_model_len,
        non_torch_bytes=int(0.35 * GIB),
        gpu_memory_bytes=int(23.58 * GIB),
    )
    assert abs(e.num_blocks - published) / published < 0.10


def test_tp_must_divide_the_heads_and_csv_is_key_value():
    with pytest.raises(SizingError, match="tp"):
        engine_memory(get_preset("gpt2").config, 1, 1024, tp=7)
    r = _run("--preset", "gpt2", "--inference", "--engine", "vllm", "--format", "csv")
    assert r.exit_code == 0 and r.output.startswith("key,value\nterms.engine budget,")
