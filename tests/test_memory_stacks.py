"""Memory as training stacks store it: Transformer Engine's fp8 copies, fused kernels' saved
activations, op-level selective checkpointing, the cross-entropy's working set, the gradient
buffer, and the three-level verdict (sizing.memory.fp8, stack_activations, verdict;
sizing.parallel.memory_stack)."""

import pytest

from sizing.inputs import Workload, get_preset
from sizing.memory import (
    fit_verdict,
    fp8_saved_input_bytes,
    fp8_weight_copies_bytes,
    stack_activation_terms,
    stack_transient_bytes,
)
from sizing.memory.activations import sum_terms
from sizing.parallel import STACKS, ParallelLayout, StepOptions, parallel_plan
from sizing.parallel.memory_stack import MEMORY_STACKS, conventions
from sizing.validate import SizingError

LLAMA3_8B = get_preset("llama3-8b").config  # d 4096, 32 heads, 8 kv heads, d_h 128, SwiGLU f 14336
T = 4096


def _per_token_layer(**kw) -> int:
    recompute = kw.pop("recompute", "none")
    per_layer, _ = sum_terms(stack_activation_terms(LLAMA3_8B, T, 1, "flash", recompute, 2, None, **kw))
    assert per_layer % T == 0
    return per_layer // T


def test_fp8_copies_per_recipe():
    # per-tensor scaling: 1 B data + 1 B transpose; blockwise: + one fp32 scale per 128 x 128
    # weights or 1 x 128 inputs; MXFP8: + one 1-byte scale per 32, rowwise and columnwise
    assert fp8_weight_copies_bytes(16_384, "tensorwise") == 2 * 16_384
    assert fp8_weight_copies_bytes(16_384, "blockwise") == 2 * (16_384 + 4 * 1)
    assert fp8_weight_copies_bytes(16_384, "mxfp8") == 2 * (16_384 + 16_384 // 32)
    assert fp8_saved_input_bytes(4096, "tensorwise") == 4096
    assert fp8_saved_input_bytes(4096, "blockwise") == 4096 + 4 * 4096 // 128
    assert fp8_saved_input_bytes(4096, "mxfp8") == 4096 + 4096 // 32
    with pytest.raises(SizingError, match="fp8_recipe"):
        fp8_weight_copies_bytes(1, "nvfp4")


def test_fused_kernels_keep_less_than_eager_ones():
    """Per token and layer of Llama-3-8B, bf16, flash attention, no recomputation."""
    eager = _per_token_layer()  # the reference model: fp32 norm copies, four SwiGLU tensors
    # fused: each norm 8192 input + 4 rstd + 8192 output; q 8192, k and v 2048 each, output 8192,
    # logsumexp 128; SwiGLU input 2 x 14336 x 2 + down input 14336 x 2
    fused = _per_token_layer(kernels="fused")
    assert fused == 2 * (8192 + 4 + 8192) + 8192 + 2 * 2048 + 8192 + 128 + 3 * 14_336 * 2 == 139_400
    assert eager == 217_232 and fused < eager


def test_fp8_gemm_inputs_are_saved_in_fp8():
    # the two norm outputs, the o input (beside the bf16 output flash keeps) and the down input in 1 B
    tensorwise = _per_token_layer(kernels="fused", fp8_recipe="tensorwise")
    assert tensorwise == 139_400 - 2 * 4096 + 4096 - 14_336 == 120_968
    mxfp8 = _per_token_layer(kernels="fused", fp8_recipe="mxfp8")
    assert mxfp8 == 120_968 + 3 * 4096 // 32 + 14_336 // 32 == 121_800


def test_op_level_selective_checkpointing_keeps_every_other_mm():
    # torchtitan: block input 8192, wq 8192, wv 2048, w1 28,672, w2 8192, attention output 8192 + lse 128
    op = _per_token_layer(kernels="fused", selective="op", recompute="selective")
    assert op == 8192 + 8192 + 2048 + 28_672 + 8192 + 8192 + 128 == 63_616
    # the attention-only kind keeps q, k, v and the o input (its 8192 bytes in place of the output's),
    # no logsumexp
    assert _per_token_layer(kernels="fused", recompute="selective") == 139_400 - 128


def test_fused_cross_entropy_has_no_fp32_logit_gradient():
    V = LLAMA3_8B.padded_vocab
    eager = stack_transient_bytes(LLAMA3_8B, T, 1, "flash", "none", 2)
    fused = stack_transient_bytes(LLAMA3_8B, T, 1, "flash", "none", 2, loss="fused")
    assert eager == T * V * (2 + 4) and fused == T * V * 2


def test_three_levels_around_the_allocator_band():
    capacity = 81_559 * 2**20  # H100 SXM as the device reports it
    band = round(9.2 / 80 * capacity)
    assert fit_verdict(capacity - band, 0, capacity).level == "fits"
    assert fit_verdict(capacity - band + 1, 0, capacity).level == "tight"
    assert fit_verdict(capacity + band - 1, 0, capacity).level == "tight"
    over = fit_verdict(capacity + band, 0, capacity)
    assert over.level == "does not fit" and not over.may_fit and over.headroom_bytes == -band
    assert "over by" in fit_verdict(capacity + 1, 0, capacity).describe()


def test_conventions_per_stack():
    assert set(STACKS) <= set(MEMORY_STACKS)  # every step-time stack says how it stores memory
    mc = conventions("megatron-core", "bf16-mixed", "tensorwise", None, None)
    assert (mc.kernels, mc.grad_bytes, mc.fp8_copies, mc.loss) == ("fused", 4, False, "fused")
    fp8 = conventions("megatron-core", "fp8", "mxfp8", None, None)
    assert (fp8.grad_bytes, fp8.fp8_copies, fp8.fp8_params, fp8.fp8_recipe) == (2, True, True, "mxfp8")
    assert conventions("megatron-core", "fp8", "tensorwise", False, "fp32").grad_bytes == 4
    assert conventions("megatron-core", "bf16", "tensorwise", None, None).grad_bytes is None  # pure bf16
    titan = conventions("torchtitan-compile", "fp8", "tensorwise", None, None)
    assert (titan.selective, titan.fp8_copies, titan.fp8_recipe) == ("op", False, None)  # torchao: bf16 saved
    assert conventions(None, "fp8", "tensorwise", None, None).fp8_copies is False
    with pytest.raises(SizingError, match="fp8_params"):
        conventions("fsdp", "fp8", "tensorwise", True, None)


def test_megatron_distributed_optimizer_keeps_fp32_gradients_unsharded():
    """Megatron-Core, ZeRO-1 over dp 8: 2 B weights + 4 B fp32 main grads + 12 B / 8 per parameter
    (docs/source/distrib_optimizer.md: 6 + 12/d); the reference model's accounting keeps 2 B grads."""
    n = 8_030_261_248
    lay = ParallelLayout(dp=8, zero=1, micro_batches=16)
    plan = parallel_plan("llama3-8b", lay, Workload(4096, recompute="full"), gpu="h100")
    assert plan.work.stack == "megatron-core"
    assert (plan.terms["weights_bytes"], plan.terms["gradients_bytes"]) == (2 * n, 4 * n)
    assert plan.terms["optimizer_bytes"] == 12 * n // 8
    ref = parallel_plan(
        "llama3-8b", lay, Workload(4096, recompute="full"), gpu="h100", step_options=StepOptions(reference_memory=True)
    )
    assert ref.work.stack is None and ref.terms["gradients_bytes"] == 2 * n


def test_lora_keeps_no_input_for_frozen_gemms_without_adapters():
    """A frozen weight needs no input for its gradient: with adapters on q and v only, the MLP
    norm's output (the up/gate input) and the gated product (the down input) are not saved, 4096 +
    14,336 elements x 2 B per token; under all-linear LoRA every GEMM input is an adapter's."""
    from sizing.parallel import Workload, activation_parts

    work, b_t = Workload(T), T
    full = activation_parts(LLAMA3_8B, ParallelLayout(), work)["per_layer"]
    qv = ParallelLayout(finetune="lora", lora_targets=("q", "v"), lora_rank=8)
    every = ParallelLayout(finetune="lora", lora_rank=8)
    # each adapter adds its r-wide hidden A x: 2 adapters (q, v) or 7 (all linears), r 8, 2 B
    assert activation_parts(LLAMA3_8B, qv, work)["per_layer"] == full - b_t * (4096 + 14_336) * 2 + 2 * b_t * 8 * 2
    assert activation_parts(LLAMA3_8B, every, work)["per_layer"] == full + 7 * b_t * 8 * 2
