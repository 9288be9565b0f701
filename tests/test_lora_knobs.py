"""Issue 40's fine-tuning knobs, byte for byte: an 8-bit LoRA base (load_in_8bit), modules trained
in full beside the adapters (modules_to_save), the frozen base offloaded (FSDP-QLoRA), and the
chunked cross-entropy (Liger) that keeps no whole logits."""

from __future__ import annotations

from sizing.inputs import Workload, get_preset
from sizing.memory import chunked_loss_rows, stack_activation_terms, stack_transient_bytes
from sizing.parallel import ParallelLayout, parallel_plan

CFG = get_preset("llama3-8b").config
W = Workload(2048, finetune="lora", recompute="full", gpus=1)


def _terms(**layout):
    return parallel_plan(CFG, ParallelLayout(finetune=layout.pop("finetune", "lora"), **layout), W, "h100").terms


def test_int8_base_stores_one_byte_per_linear_weight_and_an_fp32_absmax_per_row():
    bf16, int8 = _terms()["base_weights_bytes"], _terms(lora_base="int8")["base_weights_bytes"]
    # Llama 3 8B blocks' linears: 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336) = 6,979,321,856 weights,
    # in bf16 2 bytes each; in int8 1 byte each + 4 bytes per output row:
    # rows 32 x (4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096) = 32 x 43,008 = 1,376,256.
    assert bf16 - int8 == 6_979_321_856 * 2 - (6_979_321_856 + 4 * 1_376_256)


def test_modules_to_save_train_the_embedding_and_lm_head_in_full():
    plain, saved = _terms(), _terms(lora_trained=("embedding", "lm_head"))
    emb = 128_256 * 4096  # tok_emb and lm_head each (untied)
    # trained in full under bf16-mixed AdamW on the default stack (megatron-core: fp32 gradient buffer):
    # 2 B bf16 weight + 4 B gradient + 12 B (fp32 master, m, v) = 18 B per parameter
    assert saved["weights_bytes"] - plain["weights_bytes"] == 2 * 2 * emb
    assert saved["gradients_bytes"] - plain["gradients_bytes"] == 4 * 2 * emb
    assert saved["optimizer_bytes"] - plain["optimizer_bytes"] == 12 * 2 * emb
    assert plain["base_weights_bytes"] - saved["base_weights_bytes"] == 2 * 2 * emb  # no longer frozen


def test_offloading_a_qlora_base_moves_it_to_cpu():
    w = Workload(2048, finetune="qlora", recompute="full", gpus=2)
    on = parallel_plan(CFG, ParallelLayout(dp=2, fsdp="full", finetune="qlora"), w, "rtx4090").terms
    off = parallel_plan(CFG, ParallelLayout(dp=2, fsdp="full", finetune="qlora", offload_params=True), w, "rtx4090")
    assert off.terms["base_weights_bytes"] == 0
    assert off.terms["cpu_weights_bytes"] == on["base_weights_bytes"] + on["weights_bytes"]


def test_chunked_cross_entropy_keeps_one_chunk_of_logits_and_the_input_gradient():
    b, T, V, d, a = 1, 8192, CFG.padded_vocab, CFG.d_model, 2
    # Liger: chunk = next_power_of_2(ceil(BT / ceil(V / d))) = next_pow2(ceil(8192 / 32)) = 256 rows
    assert chunked_loss_rows(b * T, V, d) == 256
    assert stack_transient_bytes(CFG, T, b, loss="chunked") == 256 * V * a
    assert stack_transient_bytes(CFG, T, b, loss="eager") == b * T * V * (a + 4)
    keys = {t.key: t.bytes for t in stack_activation_terms(CFG, T, b, loss="chunked")}
    assert "loss.log_probs" not in keys and keys["loss.grad_input"] == b * T * d * a


def test_workload_refuses_unknown_loss_and_selective():
    import pytest

    from sizing.validate import SizingError

    with pytest.raises(SizingError, match="loss"):
        Workload(2048, loss="sparse")
    with pytest.raises(SizingError, match="selective"):
        Workload(2048, selective="layers")
