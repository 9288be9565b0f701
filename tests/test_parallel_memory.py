"""sizing.parallel.memory: per-GPU bytes of the most-loaded rank, term by term, in exact integers."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.formulas import params as P
from sizing.inputs.presets import PRESETS, get_preset
from sizing.memory import training_memory
from sizing.parallel.finetune import lora_params, nf4_bytes
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.memory import (
    Workload,
    activation_parts,
    in_flight,
    most_loaded,
    stage_memory,
)
from sizing.parallel.shapes import model_tensors
from tests.strategies import configs

LLAMA70 = get_preset("llama2-70b").config
LLAMA7 = get_preset("llama2-7b").config
MIXTRAL = get_preset("mixtral-8x7b").config


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_tensor_shapes_add_up_to_the_parameter_count(name):
    cfg = PRESETS[name].config
    assert sum(t.numel for t in model_tensors(cfg)) == P.total_params(cfg)


@settings(max_examples=40, deadline=None)
@given(configs())
def test_tensor_shapes_add_up_for_any_config(cfg):
    assert sum(t.numel for t in model_tensors(cfg)) == P.total_params(cfg)


def test_pure_data_parallel_equals_sizing_memory():
    """dp 8 with ZeRO-3 and nothing else is sizing memory's own case: every term agrees."""
    work = Workload(4096, recompute="full")
    stage, terms = most_loaded(LLAMA70, ParallelLayout(dp=8, zero=3), work)
    old = training_memory("llama2-70b", 4096, zero=3, dp=8, recompute="full", gpu="h100").per_gpu
    assert stage == 0 and terms["total_bytes"] == old["total_bytes"] == 150_086_647_812  # 139.78 GiB
    for key in ("weights_bytes", "gradients_bytes", "optimizer_bytes"):
        assert terms[key] == old[key]
    assert terms["gathered_unit_bytes"] == old["zero3_gathered_bytes"]


def test_tensor_parallel_weights_by_hand():
    """llama2-70b, tp 8: per layer q, o 8192^2/8; k, v 8192.1024/8; 3 MLP 8192.28672/8; 2 norms whole.
    Stage 0 of pp 1 also holds the embedding and the lm_head, split over the vocab."""
    d, kv, f, V, L = 8192, 1024, 28672, 32000, 80
    per_layer = (2 * d * d + 2 * d * kv + 3 * d * f) // 8 + 2 * d
    n = L * per_layer + 2 * V * d // 8 + d
    terms = stage_memory(LLAMA70, ParallelLayout(tp=8), Workload(4096), 0)
    assert terms["weights_bytes"] == 2 * n and terms["gradients_bytes"] == 2 * n
    assert terms["optimizer_bytes"] == 12 * n


def test_pipeline_stages_hold_their_layers_and_extras():
    lay = ParallelLayout(pp=4, micro_batches=8)
    work = Workload(4096)
    first, middle, last = (stage_memory(LLAMA7, lay, work, s) for s in (0, 1, 3))
    block = P.layer_params(LLAMA7) * 8
    emb = P.token_embedding_params(LLAMA7)
    assert first["weights_bytes"] == 2 * (block + emb)
    assert middle["weights_bytes"] == 2 * block
    assert last["weights_bytes"] == 2 * (block + P.lm_head_params(LLAMA7) + P.final_norm_params(LLAMA7))
    # 1F1B: stage s holds min(p - s, m) micro-batches of activations
    assert [in_flight(lay, s) for s in range(4)] == [4, 3, 2, 1]
    per_layer = activation_parts(LLAMA7, lay, work)["per_layer"]
    assert first["activations_blocks_bytes"] == 4 * 8 * per_layer
    assert last["activations_blocks_bytes"] == 8 * per_layer
    assert last["activations_head_loss_bytes"] > 0 and first["activations_head_loss_bytes"] == 0
    assert last["logits_bytes"] > 0 and middle["logits_bytes"] == 0


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 16), st.integers(2, 8), st.integers(1, 4))
def test_interleaved_in_flight_is_korthikanti(p, v, k):
    """Korthikanti et al. 2022, 4.2.3: the first rank holds L (1 + (p - 1)/(p v)) layer-micro-batches
    (m large): in_flight chunk-micro-batches x L/(p v) layers each."""
    L = p * v * k
    lay = ParallelLayout(pp=p, v=v, pp_schedule="interleaved", micro_batches=4 * p)
    assert in_flight(lay, 0) * (L // (p * v)) * p * v == L * (p * v + p - 1)
    assert in_flight(lay, p - 1) == (v - 1) * p + 1


def test_sequence_parallel_splits_every_token_term():
    """With SP every per-layer term is split over tp, except the per-layer constants (RMSNorm's
    fp32 gain copy, d.4 per norm)."""
    work = Workload(4096)
    one = activation_parts(LLAMA7, ParallelLayout(), work)["per_layer"]
    sp = activation_parts(LLAMA7, ParallelLayout(tp=8, sequence_parallel=True), work)["per_layer"]
    constants = 2 * 4096 * 4
    assert sp == (one - constants) // 8 + constants
    tp_only = activation_parts(LLAMA7, ParallelLayout(tp=8), work)["per_layer"]
    assert sp < tp_only < one


def test_context_parallel_splits_the_sequence():
    work = Workload(8192)
    full = activation_parts(LLAMA7, ParallelLayout(), work)
    cp = activation_parts(LLAMA7, ParallelLayout(cp=2), work)
    half = activation_parts(LLAMA7, ParallelLayout(), Workload(4096))
    assert cp == half and cp["per_layer"] < full["per_layer"]


def test_experts_per_ep_rank():
    work = Workload(4096)
    ep8 = stage_memory(MIXTRAL, ParallelLayout(dp=8, ep=8), work, 0)
    ep1 = stage_memory(MIXTRAL, ParallelLayout(dp=8), work, 0)
    expert = P.expert_params(MIXTRAL) * MIXTRAL.n_layers
    assert ep1["weights_bytes"] - ep8["weights_bytes"] == 2 * 7 * expert


def test_lora_on_q_and_v_is_peft_count():
    """PEFT's print_trainable_parameters for Llama-2-7B, r 8 on q_proj and v_proj: 4,194,304."""
    assert lora_params(LLAMA7, 8, ("q", "v")) == 4_194_304
    lay = ParallelLayout(finetune="lora", lora_rank=8, lora_targets=("q", "v"))
    terms = stage_memory(LLAMA7, lay, Workload(4096), 0)
    assert terms["weights_bytes"] == 2 * 4_194_304 and terms["optimizer_bytes"] == 12 * 4_194_304
    assert terms["base_weights_bytes"] == 2 * P.total_params(LLAMA7)


def test_qlora_nf4_with_double_quantisation():
    """QLoRA: 4 bits + 8/64 + 32/(64 x 256) = 4.127 bits per weight."""
    assert nf4_bytes(64 * 256) == 8192 + 256 + 4
    assert abs(nf4_bytes(10**9) * 8 / 10**9 - (4 + 8 / 64 + 32 / (64 * 256))) < 1e-6
    lay = ParallelLayout(finetune="qlora")
    qlora = stage_memory(LLAMA70, lay, Workload(4096), 0)["base_weights_bytes"]
    lora = stage_memory(LLAMA70, replace(lay, finetune="lora"), Workload(4096), 0)["base_weights_bytes"]
    assert 0.25 < qlora / lora < 0.27  # blocks in 4.127 bits, embedding and lm_head stay 16


def test_offload_moves_states_to_cpu():
    work = Workload(4096)
    base = stage_memory(LLAMA70, ParallelLayout(dp=8, zero=3), work, 0)
    off = stage_memory(LLAMA70, ParallelLayout(dp=8, zero=3, offload_optimizer=True), work, 0)
    assert off["optimizer_bytes"] == 0 and off["cpu_optimizer_bytes"] == base["optimizer_bytes"]
    assert base["total_bytes"] - off["total_bytes"] == base["optimizer_bytes"]
    both = stage_memory(LLAMA70, ParallelLayout(dp=8, zero=3, offload_optimizer=True, offload_params=True), work, 0)
    assert both["weights_bytes"] == both["gradients_bytes"] == 0
    assert both["cpu_total_bytes"] == base["weights_bytes"] + base["gradients_bytes"] + base["optimizer_bytes"]


def test_fsdp_per_parameter_shards_round_up_each_tensor():
    """FSDP2 chunks each tensor's dim 0 (rank 0: ceil(rows / n)); ZeRO's flat buffer rounds once."""
    work = Workload(1024, precision="fp32", optimizer="sgd")
    cfg = get_preset("gpt2").config  # 50257 vocab rows, 768-wide: 768 % 5 != 0
    fsdp = stage_memory(cfg, ParallelLayout(dp=5, fsdp="full"), work, 0)["weights_bytes"]
    flat = stage_memory(cfg, ParallelLayout(dp=5, zero=3), work, 0)["weights_bytes"]
    assert flat == -(-4 * P.total_params(cfg) // 5)
    assert fsdp > flat
