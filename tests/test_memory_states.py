"""sizing.memory.states: bytes of weights, gradients and optimizer states, and ZeRO sharding."""

import pytest

from sizing import get_preset
from sizing.formulas.params import total_params
from sizing.memory import (
    OPTIMIZERS,
    PRECISIONS,
    ZERO_STAGES,
    get_optimizer,
    get_precision,
    gradients_bytes,
    model_states_per_gpu,
    optimizer_bytes,
    shard_bytes,
    training_memory,
    weights_bytes,
)
from sizing.vocabulary import PRECISION_POLICIES

LLAMA2_7B = get_preset("llama2-7b").config
N_7B = 6_738_415_616


def test_precision_policies_are_the_vocabulary():
    assert tuple(PRECISIONS) == PRECISION_POLICIES
    assert all(key == p.key for key, p in PRECISIONS.items())
    assert all(key == o.key for key, o in OPTIMIZERS.items())


def test_unknown_policy_or_optimizer_is_a_value_error():
    with pytest.raises(ValueError, match=r"precision \('fp64'\) must be one of: fp32, bf16-mixed"):
        get_precision("fp64")
    with pytest.raises(ValueError, match=r"optimizer \('lion'\) must be one of: adamw, sgd, adam8bit"):
        get_optimizer("lion")


def test_mixed_precision_adamw_is_16_bytes_per_param():
    n = total_params(LLAMA2_7B)
    assert n == N_7B
    # 2 (bf16 weights) + 2 (bf16 grads) + 4 (fp32 master) + 4 + 4 (fp32 m, v)
    assert (
        weights_bytes(n, "bf16-mixed") + gradients_bytes(n, "bf16-mixed") + optimizer_bytes(n, "bf16-mixed", "adamw")
        == 16 * n
    )
    assert optimizer_bytes(n, "bf16-mixed", "adamw") == 12 * n
    assert sum(f(n, "fp32") for f in (weights_bytes, gradients_bytes)) + optimizer_bytes(n, "fp32", "adamw") == 16 * n
    assert sum(f(n, "bf16") for f in (weights_bytes, gradients_bytes)) + optimizer_bytes(n, "bf16", "adamw") == 8 * n
    assert optimizer_bytes(n, "bf16-mixed", "sgd") == 8 * n  # master + momentum
    assert optimizer_bytes(n, "bf16-mixed", "adam8bit") == 4 * n + 2 * (n + 4 * -(-n // 2048))


def test_shards_round_up():
    assert shard_bytes(16, 8) == 2 and shard_bytes(17, 8) == 3 and shard_bytes(7, 1) == 7
    n = 1001  # not a multiple of dp: each rank holds the padded share
    on_one = model_states_per_gpu(n, "bf16-mixed", "adamw", 3, 4)
    assert on_one == {"weights_bytes": 501, "gradients_bytes": 501, "optimizer_bytes": 3003}
    assert model_states_per_gpu(n, "bf16-mixed", "adamw", 1, 4)["weights_bytes"] == 2 * n
    assert set(ZERO_STAGES) == {0, 1, 2, 3}


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
