"""sizing.memory.fit: training and inference memory against a GPU, the largest batch that fits,
and what would fit when nothing does."""

import pytest

from sizing import get_preset
from sizing.inputs.hardware import get_gpu
from sizing.inputs.presets import PRESETS
from sizing.inputs.units import format_gib
from sizing.memory import inference_memory, summary_for_estimate, training_memory
from sizing.memory.runtime import default_runtime_reserve

LLAMA2_7B = get_preset("llama2-7b").config
N_7B = 6_738_415_616
GIB = 2**30


def test_inference_fit_largest_batch_and_context():
    inf = inference_memory("llama2-7b", 4096, batch=1, gpu="a100-80gb")
    capacity = 80 * GIB
    per_seq = 2 * 32 * 32 * 128 * 2 * 4096
    # the prefill peak (one 4096-token prompt, unchunked): the SwiGLU phase, T·(2·d + 3·f)·2 bytes
    prefill = 4096 * (2 * 4096 + 3 * 11008) * 2
    assert inf.total_bytes == 2 * N_7B + per_seq and inf.fits
    assert inf.prefill_peak_bytes == prefill == 337_641_472 and inf.peak_bytes == inf.total_bytes + prefill
    assert inf.kv_cache_bytes_per_sequence == per_seq and inf.headroom_bytes == capacity - inf.peak_bytes
    assert inf.max_batch == (capacity - 2 * N_7B - prefill) // per_seq == 33
    per_token = 2 * 32 * 32 * 128 * 2
    # a longer context is a longer prompt too: its prefill peak grows with it (no chunk given)
    assert inf.max_context == (capacity - 2 * N_7B) // (per_token + prefill // 4096)
    assert inf.max_context_limited_by == "memory"
    chunked = inference_memory("llama2-7b", 4096, gpu="a100-80gb", prefill_chunk=512)
    assert chunked.prefill_peak_bytes == prefill // 8 and chunked.kv_cache_bytes == inf.kv_cache_bytes
    mistral = inference_memory("mistral-7b", 32768, gpu="h100", prefill_chunk=2048)
    assert mistral.context_unbounded and mistral.max_context is None and mistral.cached_positions == 4096
    assert mistral.max_context_limited_by == "window"
    unchunked = inference_memory("mistral-7b", 32768, gpu="h100")  # the window caps the cache, not the prefill
    assert not unchunked.context_unbounded and unchunked.max_context_limited_by == "memory"
    gpt2 = inference_memory("gpt2", 1024)
    assert gpt2.max_context == 1024 and gpt2.max_context_limited_by == "max_positions"


def test_prefill_peak_can_be_what_does_not_fit():
    """Mixtral, 16 x 32K prefilled at once, int8 weights: weights + KV fit an H200, the prefill
    peak (n·k routed rows of a fused MoE kernel: n·(2·d + k·(3·f_e + d))·2 bytes) does not."""
    n = 16 * 32768
    inf = inference_memory("mixtral-8x7b", 32768, 16, "int8", gpu="h200", prefill_chunk=n)
    assert inf.prefill_peak_bytes == n * (2 * 4096 + 2 * (3 * 14336 + 4096)) * 2
    assert inf.total_bytes <= get_gpu("h200").memory_bytes < inf.peak_bytes and not inf.fits
    assert "prefill peak" in inf.reason and any("--prefill-chunk" in s for s in inf.would_fit)
    assert inference_memory("mixtral-8x7b", 32768, 16, "int8", gpu="h200", prefill_chunk=8192).fits


def test_inference_does_not_fit_says_what_would():
    inf = inference_memory("llama2-70b", 4096, gpu="a100-80gb")
    assert not inf.fits and inf.max_batch is None and inf.max_context is None
    assert "weights alone" in inf.reason and format_gib(inf.weights_bytes) in inf.reason
    assert any(s.startswith("int8 weights") for s in inf.would_fit)
    # 2 x 69B bytes of weights + one sequence's cache need two 80 GiB GPUs
    per_seq = inf.kv_cache_bytes_per_sequence
    gpus = -(-(inf.weights_bytes + per_seq) // (80 * GIB))
    assert gpus == 2 and f"split over at least {gpus} a100-80gb GPUs" in "; ".join(inf.would_fit)


def test_llama2_7b_full_finetune_on_one_80gb_gpu_does_not_fit():
    mem = training_memory("llama2-7b", gpu="a100-80gb")
    assert not mem.fits and mem.max_micro_batch is None
    assert mem.per_gpu_bytes > get_gpu("a100-80gb").memory_bytes
    states = sum(mem.per_gpu[k] for k in ("weights_bytes", "gradients_bytes", "optimizer_bytes"))
    assert states == 16 * N_7B > 80 * GIB  # 16 bytes per parameter: 100.41 GiB
    assert "model states alone" in mem.reason and format_gib(states) in mem.reason
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


def test_to_dict_bytes_are_exact_integers():
    mem = training_memory("llama2-7b", zero=3, dp=8, gpu="h100")
    data = mem.to_dict()
    for key in (
        "weights_bytes",
        "gradients_bytes",
        "optimizer_bytes",
        "activations_bytes",
        "total_bytes",
        "per_gpu_bytes",
        "max_micro_batch",
    ):
        assert isinstance(data[key], int), key
    assert data["total_bytes"] == sum(
        data[k] for k in ("weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "transient_bytes")
    )
    assert data["per_gpu_bytes"] == sum(v for k, v in data["per_gpu"].items() if k != "total_bytes")
    assert data["activations_bytes"] == (
        32 * data["activations_per_layer_bytes"] + data["activations_outside_blocks_bytes"]
    )
    assert sum(data["activation_terms"].values()) == (
        data["activations_per_layer_bytes"] + data["activations_outside_blocks_bytes"]
    )


def test_summary_for_estimate_is_the_default_training_and_inference():
    summary = summary_for_estimate(LLAMA2_7B, 4096, "a100-80gb")
    # a config, not a preset name: the API's default GPU is the H100, so the GPU is given; the
    # summary fits against the GPU less the CUDA context, as `sizing memory` does
    context = default_runtime_reserve(0)
    assert summary.training == training_memory(LLAMA2_7B, 4096, gpu="a100-80gb", runtime_reserve=context)
    assert summary.inference == inference_memory(LLAMA2_7B, 4096, gpu="a100-80gb", runtime_reserve=context)
    assert summary.to_dict() == {"training": summary.training.to_dict(), "inference": summary.inference.to_dict()}


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: training_memory("gpt2", zero=4), r"zero \(4\) must be one of: 0, 1, 2, 3"),
        (lambda: training_memory("gpt2", dp=0), r"dp \(0\) must be a positive integer"),
        (lambda: training_memory("gpt2", precision="fp64"), r"precision \('fp64'\) must be one of"),
        (lambda: training_memory(LLAMA2_7B), "seq_len must be given for a config that is not a preset"),
        (lambda: inference_memory("gpt2", weight_dtype="int3"), r"weight_dtype \('int3'\) must be one of"),
        (lambda: inference_memory("gpt2", batch=0), r"batch \(0\) must be a positive integer"),
        (lambda: inference_memory(LLAMA2_7B), "context must be given for a config that is not a preset"),
    ],
)
def test_bad_arguments_are_value_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
