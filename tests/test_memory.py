"""sizing.memory: bytes by kind, the KV cache, ZeRO sharding, "will it fit", and `sizing memory`."""

import json

import pytest
from click.testing import CliRunner

from sizing import get_preset
from sizing.cli import main
from sizing.hardware import get_gpu
from sizing.memory import (
    activation_terms, activations_bytes, activations_bytes_per_layer, inference_memory, inference_weights_bytes,
    korthikanti_activations_bytes_per_layer, kv_cache_bytes, optimizer_bytes, training_memory, gradients_bytes,
    weights_bytes,
)
from sizing.params import total_params
from sizing.presets import PRESETS

LLAMA2_7B = get_preset("llama2-7b").config
N_7B = 6_738_415_616


def _memory(*args):
    return CliRunner().invoke(main, ["memory", *args])


# ---------------------------------------------------------------- KV cache
def test_llama2_70b_kv_cache_at_4096_bf16():
    cfg = get_preset("llama2-70b").config
    assert (cfg.n_layers, cfg.kv_heads, cfg.d_head) == (80, 8, 128)
    per_sequence = 2 * 80 * 8 * 128 * 2 * 4096  # K and V x layers x kv heads x head_dim x bf16 bytes x context
    assert kv_cache_bytes(cfg, 4096, 1, "bf16") == per_sequence == 1_342_177_280
    assert kv_cache_bytes(cfg, 4096, 8, "bf16") == 8 * per_sequence


def test_kv_cache_uses_kv_heads_and_the_window():
    llama2_7b_mha = kv_cache_bytes(LLAMA2_7B, 4096)
    assert llama2_7b_mha == 2 * 32 * 32 * 128 * 2 * 4096  # MHA: 32 kv heads, 2 GiB per sequence
    falcon = get_preset("falcon-7b").config  # MQA: one kv head of 64
    assert kv_cache_bytes(falcon, 2048) == 2 * 32 * 1 * 64 * 2 * 2048
    mistral = get_preset("mistral-7b").config  # window 4096 caps the cache
    assert kv_cache_bytes(mistral, 32768) == kv_cache_bytes(mistral, 4096) == 2 * 32 * 8 * 128 * 2 * 4096
    assert kv_cache_bytes(mistral, 1000) == 2 * 32 * 8 * 128 * 2 * 1000
    assert kv_cache_bytes(LLAMA2_7B, 4096, 1, "int4") * 8 == kv_cache_bytes(LLAMA2_7B, 4096, 1, "fp32")


def test_inference_weights_by_dtype():
    assert inference_weights_bytes(LLAMA2_7B, "bf16") == 2 * N_7B
    assert inference_weights_bytes(LLAMA2_7B, "int8") == N_7B
    assert inference_weights_bytes(LLAMA2_7B, "int4") == N_7B // 2
    mixtral = get_preset("mixtral-8x7b").config  # every expert is resident
    assert inference_weights_bytes(mixtral, "bf16") == 2 * 46_702_792_704


def test_inference_fit_largest_batch_and_context():
    inf = inference_memory("llama2-7b", 4096, batch=1, gpu="a100-80gb")
    capacity = 80 * 2**30
    per_seq = 2 * 32 * 32 * 128 * 2 * 4096
    assert inf.total_bytes == 2 * N_7B + per_seq and inf.fits
    assert inf.max_batch == (capacity - 2 * N_7B) // per_seq == 33
    per_token = 2 * 32 * 32 * 128 * 2
    assert inf.max_context == (capacity - 2 * N_7B) // per_token
    mistral = inference_memory("mistral-7b", 32768, gpu="h100")
    assert mistral.context_unbounded and mistral.max_context is None and mistral.cached_positions == 4096
    gpt2 = inference_memory("gpt2", 1024)
    assert gpt2.max_context == 1024 and gpt2.max_context_limited_by == "max_positions"


def test_inference_does_not_fit_says_what_would():
    inf = inference_memory("llama2-70b", 4096, gpu="a100-80gb")
    assert not inf.fits and inf.max_batch is None and inf.max_context is None
    assert "weights alone" in inf.reason
    assert any(s.startswith("int8 weights") for s in inf.would_fit)


# ---------------------------------------------------------------- model states and ZeRO
def test_mixed_precision_adamw_is_16_bytes_per_param():
    n = total_params(LLAMA2_7B)
    assert n == N_7B
    # 2 (bf16 weights) + 2 (bf16 grads) + 4 (fp32 master) + 4 + 4 (fp32 m, v)
    assert weights_bytes(n, "bf16-mixed") + gradients_bytes(n, "bf16-mixed") + optimizer_bytes(
        n, "bf16-mixed", "adamw") == 16 * n
    assert optimizer_bytes(n, "bf16-mixed", "adamw") == 12 * n
    assert sum(f(n, "fp32") for f in (weights_bytes, gradients_bytes)) + optimizer_bytes(n, "fp32", "adamw") == 16 * n
    assert sum(f(n, "bf16") for f in (weights_bytes, gradients_bytes)) + optimizer_bytes(n, "bf16", "adamw") == 8 * n
    assert optimizer_bytes(n, "bf16-mixed", "sgd") == 8 * n  # master + momentum
    assert optimizer_bytes(n, "bf16-mixed", "adam8bit") == 4 * n + 2 * (n + 4 * -(-n // 2048))


def test_zero3_over_8_divides_weights_gradients_and_optimizer_by_8():
    one = training_memory("llama2-7b", micro_batch=1)
    z3 = training_memory("llama2-7b", micro_batch=1, zero=3, dp=8)
    for kind in ("weights_bytes", "gradients_bytes", "optimizer_bytes"):
        assert z3.per_gpu[kind] * 8 == one.per_gpu[kind] == getattr(one, kind)
    assert z3.per_gpu["activations_bytes"] == one.per_gpu["activations_bytes"]  # DP does not split a micro-batch
    # ZeRO-3 gathers one unit at a time: the largest is a block here (202M params), bf16 weights + grads
    block = 4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096
    assert z3.per_gpu["zero3_gathered_bytes"] == (2 + 2) * max(block, 32000 * 4096)


def test_zero_stages_shard_progressively():
    base = training_memory("llama2-7b", zero=0, dp=8).per_gpu
    z1 = training_memory("llama2-7b", zero=1, dp=8).per_gpu
    z2 = training_memory("llama2-7b", zero=2, dp=8).per_gpu
    assert z1["optimizer_bytes"] * 8 == base["optimizer_bytes"] and z1["gradients_bytes"] == base["gradients_bytes"]
    assert z2["gradients_bytes"] * 8 == base["gradients_bytes"] and z2["weights_bytes"] == base["weights_bytes"]


# ---------------------------------------------------------------- activations
def test_llama2_7b_flash_activation_terms_per_layer():
    b, T, d, h, f, a = 1, 4096, 4096, 32, 11008, 2
    norm = 4 * b * T * d + 4 * b * T + 4 * b * T * d + 4 * d + a * b * T * d  # fp32 input, rstd, normalised, gain; out
    attention = 4 * a * b * T * d + 4 * b * h * T  # q, k, v, out (= o input); fp32 logsumexp
    mlp = 4 * a * b * T * f  # SwiGLU: gate out, silu out, up out, product
    assert activations_bytes_per_layer(LLAMA2_7B, T, b, "flash", "none", a) == 2 * norm + attention + mlp


def test_math_attention_adds_the_t_by_t_tensors():
    T, b, h, a = 4096, 2, 32, 2
    math = activations_bytes_per_layer(LLAMA2_7B, T, b, "math", "none", a)
    flash = activations_bytes_per_layer(LLAMA2_7B, T, b, "flash", "none", a)
    # + bool mask T x T, fp32 softmax output, its bf16 copy for AV; - the logsumexp (MHA: q, k, v, o the same size)
    assert math - flash == T * T + b * h * T * T * (4 + a) - 4 * b * h * T


def test_recomputation():
    T, b, a = 4096, 1, 2
    full = activations_bytes_per_layer(LLAMA2_7B, T, b, "math", "full", a)
    assert full == b * T * 4096 * a  # a checkpointed block keeps its input
    selective = activations_bytes_per_layer(LLAMA2_7B, T, b, "math", "selective", a)
    flash = activations_bytes_per_layer(LLAMA2_7B, T, b, "flash", "none", a)
    assert selective == flash - 4 * b * 32 * T  # no T x T, no logsumexp
    keys = {t.key for t in activation_terms(LLAMA2_7B, T, b, "math", "full", a)}
    assert "rope.cos_sin" not in keys and "loss.log_probs" in keys


def test_activations_linear_in_micro_batch_except_shared_tensors():
    one, two, three = (activations_bytes(LLAMA2_7B, 2048, b, "math") for b in (1, 2, 3))
    assert three - two == two - one  # the mask and RoPE tables are shared by the batch, the rest scales
    # per layer: the bool mask and the two RMSNorm gains in fp32; once: RoPE cos/sin, nll's total weight, norm_f's gain
    assert 2 * one - two == 32 * (2048 * 2048 + 2 * 4 * 4096) + 2 * 2048 * 128 * 2 + 4 + 4 * 4096


def test_korthikanti_formula_beside_ours():
    cfg = get_preset("gpt3-175b").config
    s, b, h, a = 2048, 1, 12288, 96
    assert korthikanti_activations_bytes_per_layer(cfg, s, b) == s * b * h * (34 + 5 * a * s // h)
    assert korthikanti_activations_bytes_per_layer(cfg, s, b, "selective") == 34 * s * b * h
    assert korthikanti_activations_bytes_per_layer(cfg, s, b, "full") == 2 * s * b * h
    data = training_memory("gpt3-175b").to_dict()["korthikanti"]
    assert "sbh(34 + 5as/h)" in data["formula"] and "Korthikanti" in data["formula"]
    assert data["activations_bytes"] == 96 * s * b * h * (34 + 5 * a * s // h)


# ---------------------------------------------------------------- will it fit
def test_llama2_7b_full_finetune_on_one_80gb_gpu_does_not_fit():
    mem = training_memory("llama2-7b", gpu="a100-80gb")
    assert not mem.fits and mem.max_micro_batch is None
    assert mem.per_gpu_bytes > get_gpu("a100-80gb").memory_bytes
    assert "model states alone" in mem.reason and "100.41 GiB" in mem.reason  # 16 x 6.74B bytes
    assert "ZeRO-3 over at least 2 GPUs (micro-batch 1)" in mem.would_fit
    zero3 = training_memory("llama2-7b", gpu="a100-80gb", zero=3, dp=2)
    assert zero3.fits and zero3.max_micro_batch >= 1  # the suggestion holds


def test_max_micro_batch_is_the_largest_that_fits():
    mem = training_memory("gpt2", gpu="a100-80gb")
    assert mem.fits and mem.max_micro_batch > 1
    at_max = training_memory("gpt2", micro_batch=mem.max_micro_batch, gpu="a100-80gb")
    above = training_memory("gpt2", micro_batch=mem.max_micro_batch + 1, gpu="a100-80gb")
    assert at_max.fits and at_max.headroom_bytes >= 0
    assert not above.fits and above.headroom_bytes < 0 and above.max_micro_batch == mem.max_micro_batch
    assert any("micro-batch" in s for s in above.would_fit)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_never_a_zero_or_negative_batch(name):
    mem = training_memory(name, gpu="h100")
    assert mem.max_micro_batch is None or mem.max_micro_batch >= 1
    assert mem.fits == (mem.max_micro_batch is not None)  # micro-batch 1 requested
    assert mem.fits or (mem.reason and mem.would_fit)
    inf = inference_memory(name, gpu="h100")
    assert inf.max_batch is None or inf.max_batch >= 1
    assert inf.fits == (inf.max_batch is not None)


# ---------------------------------------------------------------- outputs
def test_to_dict_bytes_are_exact_integers_and_render():
    mem = training_memory("llama2-7b", zero=3, dp=8, gpu="h100")
    data = mem.to_dict()
    for key in ("weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "total_bytes",
                "per_gpu_bytes", "max_micro_batch"):
        assert isinstance(data[key], int), key
    assert data["total_bytes"] == sum(data[k] for k in ("weights_bytes", "gradients_bytes", "optimizer_bytes",
                                                        "activations_bytes", "transient_bytes"))
    assert data["per_gpu_bytes"] == sum(v for k, v in data["per_gpu"].items() if k != "total_bytes")
    table = mem.render("table")
    assert "GiB" in table and "Korthikanti" in table and "fits:" in table
    assert mem.render("markdown").splitlines()[0].startswith("## Training memory")
    assert json.loads(mem.render("json")) == data
    assert ("per_gpu.weights_bytes", data["per_gpu"]["weights_bytes"]) in mem.flat_items()


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
    assert "would fit: ZeRO-3 over at least 2 GPUs" in result.output
    data = json.loads(_memory("--preset", "llama2-7b", "--format", "json").output)
    assert data["fits"] is False and data["max_micro_batch"] is None


def test_cli_inference_and_formats():
    result = _memory("--preset", "llama2-70b", "--inference", "--context", "4096", "--batch", "8",
                     "--weight-dtype", "int4", "--gpu", "h100", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["kv_cache_bytes"] == 8 * 1_342_177_280 and data["weight_dtype"] == "int4"
    csv = _memory("--preset", "gpt2", "--format", "csv").output
    assert csv.startswith("key,value\n") and "\nper_gpu.total_bytes," in csv
    markdown = _memory("--preset", "gpt2", "--attention-impl", "sdpa", "--format", "markdown").output
    assert markdown.startswith("## Training memory") and "| attn.logsumexp " in markdown  # sdpa = flash terms


@pytest.mark.parametrize("args", [
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
    ("--zero", "3"),  # ZeRO without a data-parallel degree
])
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
