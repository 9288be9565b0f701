"""sizing.serve: the FLOPs and bytes of a prefill and a decode step (exact integers, by hand
from the architecture), the roofline times, the sum over decode steps, MoE expert reads,
sliding windows, tensor parallelism, memory and the bad inputs."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizing import get_preset
from sizing.formulas.flops import decode_flops_per_token
from sizing.inputs.hardware import get_gpu
from sizing.serve import expected_experts_hit, serve, step_bytes, tp_ring_allreduce_seconds
from sizing.serve.calibration import default_efficiencies
from sizing.serve.roofline import NO_OVERHEAD, StepOverhead, sum_of_steps, tp_allreduce_latency_seconds
from sizing.serve.work import decode_step_flops, prefill_flops
from sizing.validate import SizingError

H100_COMPUTE_EFFICIENCY, H100_BANDWIDTH_EFFICIENCY = default_efficiencies("h100")

LLAMA = get_preset("llama2-7b").config
MIXTRAL = get_preset("mixtral-8x7b").config
MISTRAL = get_preset("mistral-7b").config
N_7B = 6_738_415_616
L, D, F, V = 32, 4096, 11008, 32000


def test_prefill_flops_are_causal_blocks_and_one_lm_head_row():
    P = 4096
    weights = 2 * L * (4 * D * D + 3 * D * F) * P  # every block matmul over P tokens
    causal = 2 * 2 * L * D * (P * (P + 1) // 2)  # QK^T and AV over P(P+1)/2 pairs
    lm_head = 2 * D * V  # the last position only
    assert prefill_flops(LLAMA, P) == weights + causal + lm_head == 57_450_818_437_120
    assert prefill_flops(LLAMA, P, batch=3) == 3 * prefill_flops(LLAMA, P)
    full = prefill_flops(LLAMA, P, attention="full")
    assert full - prefill_flops(LLAMA, P) == 2 * 2 * L * D * (P * P - P * (P + 1) // 2)


def test_decode_step_flops_and_bytes_by_hand():
    C = 4097
    assert decode_step_flops(LLAMA, C, 8) == 8 * decode_flops_per_token(LLAMA, C)
    assert decode_step_flops(LLAMA, C) == 2 * (L * (4 * D * D + 3 * D * F) + D * V) + 2 * 2 * L * D * C
    moved = step_bytes(LLAMA, C, batch=4)
    # every parameter but the 31,996 token rows no sequence looks up (untied table), bf16
    assert moved.weight_bytes == moved.dense_weight_bytes == 2 * (N_7B - (V - 4) * D)
    assert moved.kv_bytes == 2 * L * D * 2 * C * 4  # K and V, MHA: 32 heads x 128
    int4 = step_bytes(LLAMA, C, 4, weight_dtype="int4", kv_dtype="fp8")
    assert int4.weight_bytes == (N_7B - (V - 4) * D) // 2 and int4.kv_bytes == moved.kv_bytes // 2


def test_gqa_window_and_tied_embeddings():
    # Mistral: 8 kv heads, the 4096-token window caps the KV read and the attended keys
    far, at = step_bytes(MISTRAL, 32768), step_bytes(MISTRAL, 4096)
    assert far.kv_bytes == at.kv_bytes == 2 * 32 * 8 * 128 * 2 * 4096
    assert decode_step_flops(MISTRAL, 32768) == decode_step_flops(MISTRAL, 4096)
    # GPT-2: tied table (read whole by the lm_head), learned positions (one row read per step)
    gpt2 = get_preset("gpt2").config
    assert step_bytes(gpt2, 100, weight_dtype="fp32").weight_bytes == 4 * (124_439_808 - 1023 * 768)


def test_moe_reads_the_experts_the_batch_routes_to():
    assert expected_experts_hit(8, 2, 1) == 2.0
    assert expected_experts_hit(8, 2, 2) == pytest.approx(8 * (1 - 0.75**2)) == 3.5
    assert expected_experts_hit(8, 8, 1) == 8.0 and expected_experts_hit(0, 0, 5) == 0.0
    one, many = step_bytes(MIXTRAL, 1000, 1), step_bytes(MIXTRAL, 1000, 64)
    expert = 2 * 3 * 4096 * 14336  # one SwiGLU expert in bf16
    assert one.expert_bytes == expert and one.expert_weight_bytes == 2 * 32 * expert
    assert many.expert_weight_bytes == pytest.approx(8 * (1 - 0.75**64) * 32 * expert)
    measured = step_bytes(MIXTRAL, 1000, 64, experts_read_per_layer=5)
    assert measured.weight_bytes == measured.dense_weight_bytes + 5 * 32 * expert


@given(st.integers(2, 256), st.integers(1, 16), st.integers(1, 4096))
def test_expected_experts_between_top_k_and_all(n_experts, top_k, tokens):
    top_k = min(top_k, n_experts)
    hit = expected_experts_hit(n_experts, top_k, tokens)
    assert top_k - 1e-9 <= hit <= n_experts + 1e-9
    assert expected_experts_hit(n_experts, top_k, tokens + 1) >= hit - 1e-9


@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=6, max_size=6), st.integers(0, 50), st.integers(-1, 60))
def test_sum_of_steps_equals_the_loop(coefficients, first, span):
    a = coefficients

    def step(k):
        return a[0] + a[1] * k, a[2] + a[3] * k, a[4] + a[5] * k

    last = first + span
    loop = sum(max(step(k)[0], step(k)[1]) + step(k)[2] for k in range(first, last + 1))
    assert sum_of_steps(step, first, last) == pytest.approx(loop, rel=1e-9, abs=1e-9)


def test_llama2_7b_on_h100_is_the_roofline():
    est = serve("llama2-7b", 4096, 256, gpu="h100", overhead=NO_OVERHEAD)  # the roofline alone
    h100 = get_gpu("h100")
    bw = h100.hbm_bytes_per_second * H100_BANDWIDTH_EFFICIENCY
    assert est.prefill.bound == "compute" and est.decode_bound == "memory"
    assert est.ttft_seconds == pytest.approx(57_450_818_437_120 / (989.4e12 * H100_COMPUTE_EFFICIENCY))
    # memory-bound at every step: the mean of (weights + KV at C) / bandwidth over C = 4097..4351
    weights = 2 * (N_7B - (V - 1) * D)
    mean_kv = 2 * L * D * 2 * (4097 + 4351) / 2
    assert est.tpot_seconds == pytest.approx((weights + mean_kv) / bw, rel=1e-12)
    assert est.decode_tokens_per_second == pytest.approx(1 / est.tpot_seconds)
    assert est.usd_per_million_output_tokens == pytest.approx(2.0 / 3600 * est.tpot_seconds * 1e6)
    assert est.usd_per_million_input_tokens == pytest.approx(2.0 / 3600 * est.ttft_seconds / 4096 * 1e6)
    # the hand figure, ~4.7 ms for 12.55 GiB + 2 GiB at 3.35 TB/s, read the whole token
    # table; a decode step reads one row of it (0.26 GB less): 4.59 ms at efficiency 1
    ideal = serve("llama2-7b", 4096, 2, gpu="h100", bandwidth_efficiency=1.0, overhead=NO_OVERHEAD)
    assert ideal.tpot_seconds == pytest.approx((weights + 2 * L * D * 2 * 4097) / 3.35e12, rel=1e-12)
    assert ideal.tpot_seconds == pytest.approx(4.7e-3, rel=0.03)
    assert est.kv_bytes_per_request == 2 * L * D * 2 * 4352 and est.fits and est.max_batch == 27
    assert any("runs past the model's context (4096)" in note for note in est.notes)


def test_ridge_batch_is_where_decode_turns_compute_bound():
    est = serve("llama2-7b", 64, 2, gpu="h100")  # one decode step, short context: the weights dominate the bytes
    b = est.ridge_batch
    assert b is not None and 1 < b < 1000
    at = serve("llama2-7b", 64, 2, batch=b, gpu="h100").first_step.roofline
    below = serve("llama2-7b", 64, 2, batch=b - 1, gpu="h100").first_step.roofline
    assert at.bound == "compute" and below.bound == "memory"
    assert est.ridge_intensity == pytest.approx(989.4e12 * 0.50 / (3.35e12 * 0.9))  # H100 calibrated
    # MHA at 4K: the KV read grows with the batch as fast as the FLOPs: never compute-bound
    assert serve("llama2-7b", 4096, 256, gpu="h100").ridge_batch is None


def test_tensor_parallel_splits_work_and_adds_all_reduces():
    one = serve("llama2-70b", 2048, 128, batch=8, gpu="h100", tp=8, overhead=NO_OVERHEAD)
    assert one.weights_bytes_per_gpu == math.ceil(2 * 68_976_648_192 / 8)
    step = one.last_step.roofline
    allreduce = tp_ring_allreduce_seconds(8 * 8192 * 2, 8, 450e9, 0.9)  # H100's calibrated bandwidth share
    assert allreduce == pytest.approx(2 * 7 / 8 * 8 * 8192 * 2 / (450e9 * 0.9))
    latency = 3.6e-6 + 2 * 7 * 0.47e-6  # NCCL ring LL: base + 2(n - 1) NVLink steps = 10.18 µs
    assert tp_allreduce_latency_seconds(8) == pytest.approx(10.18e-6) == pytest.approx(latency)
    assert step.comm_seconds == pytest.approx(80 * 2 * (allreduce + latency))  # 160 all-reduces per token
    assert step.bytes == pytest.approx(one.last_step.bytes.total / 8)  # 8 KV heads over 8 ranks: 1 each
    assert tp_ring_allreduce_seconds(1e9, 1, 450e9, 0.8) == 0
    two = serve("llama2-70b", 2048, 128, batch=8, gpu="h100", tp=8, gpus=16, overhead=NO_OVERHEAD)
    assert two.decode_tokens_per_second == pytest.approx(2 * one.decode_tokens_per_second)


def test_chunked_prefill_lowers_the_peak_and_rereads_the_weights():
    whole = serve("llama2-7b", 4096, 16, batch=8, gpu="h100")
    chunked = serve("llama2-7b", 4096, 16, batch=8, gpu="h100", prefill_chunk=2048)
    assert chunked.prefill_forwards == 16 and chunked.prefill_peak_bytes * 16 == whole.prefill_peak_bytes
    assert chunked.prefill_flops == whole.prefill_flops and chunked.prefill_bytes > whole.prefill_bytes


def test_json_is_strict_with_exact_integers():
    data = serve("mixtral-8x7b", 1024, 64, batch=16, gpu="h100", tp=2).to_dict()
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text)["prefill"]["flops"] == prefill_flops(MIXTRAL, 1024, 16)
    assert isinstance(data["decode"]["first_step"]["flops"], int) and isinstance(data["memory"]["max_batch"], int)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(batch=0), r"batch \(0\) must be a positive integer"),
        (dict(tp=3), r"tp \(3\) must divide n_heads \(32\).*valid: 1, 2, 4, 8, 16, 32"),
        (dict(weight_dtype="int3"), r"weight_dtype \('int3'\) must be one of"),
        (dict(kv_dtype="fp4"), r"kv_dtype \('fp4'\) must be one of"),
        (dict(activation_dtype="int8"), r"activation_dtype \('int8'\) must be one of: bf16, fp16, fp8, fp4, fp32"),
        (dict(prompt=5000), r"prompt \(5000\) exceeds the model.s served context \(4096\)"),
        (dict(output=1), r"output \(1\) must be an integer >= 2"),
        (dict(gpus=12, tp=8), r"gpus \(12\) must be a multiple of tp \(8\)"),
        (dict(compute_efficiency=1.5), r"compute_efficiency \(1.5\) must be a number in \(0, 1\]"),
        (dict(gpu="a100", activation_dtype="fp8"), "has no fp8 peak"),
    ],
)
def test_bad_input_names_the_field(kwargs, message):
    args = dict(prompt=4096, output=256) | kwargs
    with pytest.raises(SizingError, match=message):
        serve("llama2-7b", **args)


def test_learned_position_table_bounds_prompt_and_output():
    with pytest.raises(SizingError, match=r"prompt \+ output \(1100\) exceeds the learned position table"):
        serve("gpt2", 1000, 100)
    assert serve("gpt2", 1000, 24).fits


@pytest.mark.parametrize(
    "model, prompt, output, batch",
    [
        ("mistral-7b", 4000, 300, 4),  # crosses the 4096-token window: the last steps are alike
        ("mistral-7b", 5000, 40, 2),  # starts past the window
        ("llama2-7b", 16, 600, 300),  # compute-bound first, memory-bound once the KV cache grows
    ],
)
def test_decode_time_is_the_sum_of_every_step(model, prompt, output, batch):
    from sizing.serve.estimate import StepModel

    est = serve(model, prompt, output, batch, gpu="h100", compute_efficiency=0.6, bandwidth_efficiency=0.8)
    machine = StepModel(est.config, est.gpu, est.settings)
    loop = sum(machine.decode_step(C).roofline.seconds for C in range(prompt + 1, prompt + output))
    assert est.decode_seconds == pytest.approx(loop, rel=1e-9)
    if model == "llama2-7b":
        assert est.decode_bound == "compute then memory"


def test_the_engine_overhead_is_added_per_forward():
    """The calibrated overheads (sizing/data/serve_efficiency.json): 170 us per layer of a prefill
    forward, 40 us per layer of a decode step, none per sequence, on top of the roofline."""
    bare = serve("llama2-7b", 1024, 64, batch=4, gpu="h100", overhead=NO_OVERHEAD)
    est = serve("llama2-7b", 1024, 64, batch=4, gpu="h100")
    assert est.settings.overhead == StepOverhead(170e-6, 40e-6, 0.0)
    assert est.ttft_seconds == pytest.approx(bare.ttft_seconds + 32 * 170e-6)  # 32 layers
    assert est.decode_seconds == pytest.approx(bare.decode_seconds + 63 * 32 * 40e-6)
    deep = serve("llama2-70b", 1024, 64, batch=4, gpu="h100", tp=4)  # 80 layers: 80 x 170 us per prefill
    assert deep.prefill.overhead_seconds == pytest.approx(80 * 170e-6)
