"""DeepSeek-V3's training memory as its technical report describes it (arXiv:2412.19437 sec.
3.2.1, 3.2.3, 3.3.3), term by term in exact bytes: the hai-llm stack's conventions
(sizing.parallel.memory_stack), MLA's saved latents (sizing.memory.mla_activations) and DualPipe's
two stages per rank (sizing.parallel.dualpipe), on the published row of
sizing/data/published_steps.json (PP 16 x DP 128, EP 64, micro-batch 1 x 4,096 tokens, m 120)."""

import pytest

from sizing.inputs import Workload
from sizing.memory import optimizer_bytes, stack_activation_terms
from sizing.parallel import parallel_plan
from sizing.parallel.dualpipe import check_dualpipe, dualpipe_in_flight, dualpipe_stages
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.memory_stack import conventions
from sizing.parallel.published_steps import published_runs
from sizing.validate import SizingError

T = 4096
HAI = {"kernels": "fused", "fp8_recipe": "blockwise", "loss": "fused"}
HAI_SAVES = {"recomputed": ("norm", "mla_up", "swiglu"), "attn_out_bits": 12}


def _row():
    return next(r for r in published_runs() if r.name.startswith("DeepSeek-V3 pre-training"))


def _moe_layer(**saves) -> dict[str, int]:
    terms = stack_activation_terms(_row().config, T, 1, "flash", "none", 2, True, **HAI, **saves)
    return {t.key: t.bytes for t in terms if t.per_layer}


def test_hai_llm_conventions():
    conv = conventions("hai-llm", "fp8", "blockwise", None, None)
    assert conv.recomputed == ("norm", "mla_up", "swiglu") and conv.attn_out_bits == 12
    assert conv.moment_bytes == 2 and conv.ema == "cpu" and conv.grad_bytes == 4
    assert conventions("hai-llm", "bf16-mixed", "blockwise", None, None).attn_out_bits is None  # fp8 only
    assert conventions("megatron-core", "fp8", "blockwise", None, None).recomputed == ()


def test_moe_layer_saves_what_the_report_keeps():
    """One MoE layer, one 4,096-token micro-batch: 155,904 bytes per token."""
    got = _moe_layer(**HAI_SAVES)
    # RMSNorm recomputed: inputs (the residual stream, bf16) and rstd only, no outputs
    assert got["attn_norm.input"] == got["mlp_norm.input"] == T * 7168 * 2 == 58_720_256
    assert "attn_norm.output" not in got and "mlp_norm.output" not in got
    # MLA up-projections recomputed: the latents c_q (1536), c_kv (512) and the RoPE key (64), no q, k, v
    assert got["attn.q_a_norm.input"] == T * 1536 * 2 == 12_582_912
    assert got["attn.kv_a_norm.input"] == T * 512 * 2 == 4_194_304
    assert got["attn.k_rope"] == T * 64 * 2 == 524_288
    assert not {"attn.q", "attn.k", "attn.v", "attn.q_a_norm.output", "attn.o.input"} & set(got)
    # the attention output once in E5M6: 128 heads x 128 = 16,384 x 12 bits + an fp32 scale per 1 x 128 tile
    assert got["attn.out"] == T * 16384 * 12 // 8 + 4 * T * 16384 // 128 == 102_760_448
    assert got["attn.logsumexp"] == T * 128 * 4
    # the dispatched expert input in FP8 (8 routed copies of d = 7168, 1 x 128 tiles)
    assert got["moe.experts.input"] == T * 8 * 7168 + 4 * T * 8 * 7168 // 128 == 242_221_056
    # the SwiGLU inputs (2 x 2,048 per routed token, 2 x 2,048 for the shared expert) in FP8; no
    # down-projection inputs, no expert outputs
    assert got["moe.experts.hidden"] == T * 8 * 4096 + 4 * T * 8 * 4096 // 128 == 138_412_032
    assert got["moe.shared.hidden"] == T * 4096 + 4 * T * 4096 // 128 == 17_301_504
    assert "moe.experts.output" not in got
    assert sum(got.values()) == T * 155_904 == 638_582_784


def test_the_same_layer_without_the_savings():
    """Fused MLA as a TE stack keeps it: q, k (128 x 192) and v (128 x 128), the norm outputs,
    the bf16 attention output beside its fp8 copy, the expert outputs. Per token: norms
    2 x (14,336 + 4 + 7,392), latents 3,072 + 4 + 1,584 + 1,024 + 4 + 528 + 128, q, k, v
    49,152 + 49,152 + 32,768, logsumexp 512, output 32,768 + 16,896, router 224, expert input
    59,136, expert hidden 65,536 + 16,896, expert outputs 114,688, shared 8,192 + 2,112, gate
    weights 16: 497,856 bytes."""
    got = _moe_layer()
    assert got["attn.q"] == got["attn.k"] == T * 128 * 192 * 2 and got["attn.v"] == T * 128 * 128 * 2
    assert got["attn.out"] == T * 16384 * 2 and got["attn.o.input"] == T * 16384 + 4 * T * 16384 // 128
    assert got["moe.experts.output"] == T * 8 * 7168 * 2
    assert got["moe.shared.hidden"] == T * 4096 * 2 + T * 2048 + 4 * T * 2048 // 128
    assert sum(got.values()) == T * 497_856


def test_bf16_moments():
    """FP32 master weights and BF16 moments: 4 + 2 + 2 = 8 bytes per parameter, not 12."""
    assert optimizer_bytes(1000, "bf16-mixed", "adamw", 2) == 8000
    assert optimizer_bytes(1000, "bf16-mixed", "adamw") == 12_000


def test_dualpipe_ranks():
    lay = ParallelLayout(dp=128, pp=16, ep=64, micro_batches=120)
    assert dualpipe_stages(lay, 0) == dualpipe_stages(lay, 15) == (0, 15)
    assert dualpipe_stages(lay, 1) == (1, 14)
    # p + 1 = 17 stage micro-batches at either peak
    assert dualpipe_in_flight(lay, 0) == ((16, 1), (15, 2))
    assert dualpipe_in_flight(lay, 7) == ((9, 8), (8, 9))
    for bad in (ParallelLayout(dp=1, pp=3, micro_batches=12), ParallelLayout(dp=1, pp=4, micro_batches=7)):
        with pytest.raises(SizingError, match="dualpipe"):
            check_dualpipe(bad)
    with pytest.raises(SizingError, match="schedule"):
        Workload(T, schedule="bidirectional")


def test_published_row_term_by_term():
    """The most-loaded rank holds stages 1 and 14, 4 MoE layers each. Per layer on an EP rank:
    232,996,864 dense parameters (MLA 187,105,280 with its norms' 2,048, the shared expert
    44,040,192, the router 1,835,008, the block norms 14,336) and 4 local experts of 44,040,192."""
    run = _row()
    work = Workload(T, precision="fp8", recompute="none")
    plan = parallel_plan(run.config, run.layout, work, gpu=run.gpu, step_options=run.options)
    t = plan.terms
    dense, experts = 4 * 232_996_864, 4 * 4 * 44_040_192
    assert plan.stage == 1
    assert t["weights_bytes"] == 2 * (dense + experts) == 3_273_261_056
    assert t["gradients_bytes"] == 4 * (dense + experts)  # fp32, ZeRO-1 leaves them whole
    # ZeRO-1: dense states over dp 128, expert states over dp / ep = 2; 8 bytes each
    assert t["optimizer_bytes"] == 8 * dense // 128 + 8 * experts // 2 == 2_876_821_504
    # EMA in CPU memory, fp32, sharded as the master weights, both stages
    assert t["cpu_ema_bytes"] == 2 * 4 * (dense // 128 + experts // 2) == t["cpu_total_bytes"]
    # the mirror stage (14) holds the same blocks: a second copy of every state
    states = ("weights_bytes", "fp8_weight_copies_bytes", "gradients_bytes", "optimizer_bytes")
    assert t["dualpipe_mirror_states_bytes"] == sum(t[k] for k in states) == 15_955_850_112
    # 15 micro-batches of stage 1 and 2 of stage 14 (or 16 + 1), 4 layers each, 638,582,784 bytes a layer
    assert t["activations_blocks_bytes"] == 15 * 4 * 638_582_784
    assert t["dualpipe_mirror_activations_bytes"] == 2 * 4 * 638_582_784
    assert t["total_bytes"] == plan.per_gpu_bytes == 75_336_378_112  # 70.16 GiB
    assert plan.memory_verdict.level == "tight"
