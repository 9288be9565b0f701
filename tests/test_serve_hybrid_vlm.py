"""Serving hybrids and vision-language models (sizing/serve/hybrid_vlm.py) on the one step model,
through `sizing serve` and `sizing memory --inference`, at long context."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sizing.cli import main
from sizing.hybrid import all_attention_kv_bytes, hybrid_inference_memory, hybrid_preset
from sizing.memory import dtype_bytes
from sizing.serve import serve, serve_hybrid, serve_vlm
from sizing.vision import vision_preset, vlm_from_hf_config

GIB = 2**30


def test_hybrid_memory_is_the_hybrid_packages_and_long_context_stays_small():
    """Nemotron-H-8B at 131,072 tokens: weights, the KV cache of its 4 attention layers and the
    state of the others (sizing.hybrid.memory); the all-attention model of its shape would cache
    13 times as much."""
    m = hybrid_preset("nemotron-h-8b").model()
    r = serve_hybrid("nemotron-h-8b", 131072, 512, batch=4, gpu="h100")
    mem = hybrid_inference_memory(m, 131072 + 512, 4)
    assert r.memory == {
        "weights": mem.weights_bytes,
        "kv_cache": mem.kv_cache_bytes,
        "state": mem.conv_state_bytes + mem.ssm_state_bytes,
    }
    assert all_attention_kv_bytes(m, 131072 + 512, 4) == 13 * mem.kv_cache_bytes  # 52 layers, 4 attention
    assert r.fits and r.ttft_seconds > 0 and r.tokens_per_second == pytest.approx(4 / r.tpot_seconds)


def test_a_hybrid_decode_step_reads_the_state_whatever_the_context():
    """Mamba-2 2.7B has no attention layer: every decode step reads the same bytes (weights + the
    state read and written), so the step time does not grow with the context."""
    short = serve_hybrid("mamba2-2.7b", 1024, 64, batch=8, gpu="h100")
    long = serve_hybrid("mamba2-2.7b", 262144, 64, batch=8, gpu="h100")
    assert long.memory["kv_cache"] == 0 and long.memory["state"] == short.memory["state"]
    assert long.tpot_seconds == pytest.approx(short.tpot_seconds, rel=1e-9)
    assert long.ttft_seconds > 100 * short.ttft_seconds  # the prefill grows with the prompt


def test_vlm_is_the_language_model_with_image_tokens_plus_the_tower():
    """Qwen2.5-VL-7B, 2 images of 1024 x 768 (native resolution, their tokens as sizing.vision
    counts them): the language model serves the prompt with the image tokens; the tower's
    weights (16-bit) join the memory; without images it is the language model's own serve."""
    text, vision = vlm_from_hf_config(vision_preset("qwen2.5-vl-7b").hf_config)
    tokens = 2 * vision.image_tokens(1024, 768)
    r = serve_vlm("qwen2.5-vl-7b", 1000, 200, gpu="h100", images=2, image_size=(1024, 768))
    lm = serve(text, 1000 + tokens, 200, gpu="h100")
    assert r.prompt == 1000 + tokens and r.tpot_seconds == lm.tpot_seconds
    assert r.ttft_seconds > lm.ttft_seconds  # the tower runs first
    assert r.memory["weights (vision tower + projector)"] == dtype_bytes(vision.total(), "bf16")
    assert r.memory["weights (language model)"] == lm.weights_bytes_per_gpu
    none = serve_vlm("qwen2.5-vl-7b", 1000, 200, gpu="h100", images=0)
    assert none.ttft_seconds == pytest.approx(serve(text, 1000, 200, gpu="h100").ttft_seconds)


def _run(*args):
    return CliRunner().invoke(main, list(args))


def test_cli_serve_and_memory_of_hybrid_and_vlm_presets():
    r = _run("serve", "--preset", "jamba-v0.1", "--gpu", "h100", "--prompt", "65536", "--output", "256")
    assert r.exit_code == 3 and "does not fit" in r.output  # 96 GiB of bf16 weights on one H100
    r = _run(
        "serve", "--preset", "jamba-v0.1", "--gpu", "h200", "--prompt", "65536", "--output", "256", "--format", "json"
    )
    data = json.loads(r.output)
    assert r.exit_code == 0 and data["kind"] == "hybrid" and data["fits"]
    r = _run("serve", "--preset", "gemma-3-4b", "--prompt", "100000", "--output", "100", "--images", "4")
    assert r.exit_code == 0 and "1024 image tokens in each prompt" in r.output
    r = _run("memory", "--preset", "gemma-3-4b", "--inference", "--context", "100000", "--images", "4")
    assert r.exit_code == 0 and "Inference memory of gemma-3-4b" in r.output and "vision tower" in r.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["serve", "--preset", "llama2-7b", "--prompt", "10", "--output", "10", "--images", "2"], "--images"),
        (
            ["serve", "--preset", "mamba2-2.7b", "--prompt", "10", "--output", "10", "--image-size", "8x8"],
            "--image-size",
        ),
        (["memory", "--preset", "llama2-7b", "--inference", "--images", "2"], "--images"),
        (
            ["serve", "--preset", "gemma-3-4b", "--prompt", "10", "--output", "10", "--image-size", "big"],
            "--image-size",
        ),
    ],
)
def test_cli_errors_name_the_option(args, message):
    r = _run(*args)
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output
