"""No layout a published training run used is refused or declared "does not fit" (issue 36).

Every row of sizing/data/published_steps.json (read by sizing.parallel.published_steps, so rows
added later are covered), every published layout of sizing/parallel/published.py (the training
runs of sizing/data/published_runs.json that state their layout), and the cases of
tests/fixtures/published_memory.json (issue 36's NeMo Llama-3-8B fp8 at DP 4 x CP 2, and the same
table's LoRA and SFT runs) are planned as their source ran them: their stack's memory
conventions (sizing.parallel.memory_stack), precision, recompute and GPU. Each layout must pass
the model's own checks (not refused) and its verdict must be "fits" or "tight"
(sizing.memory.verdict), never a clear "does not fit": they ran.
"""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from sizing.inputs import GIB, Workload
from sizing.parallel import PUBLISHED_LAYOUTS, StepOptions, parallel_plan
from sizing.parallel.published_steps import _run, published_runs

FIXTURE = Path(__file__).parent / "fixtures" / "published_memory.json"


def _step_rows():
    return [pytest.param(run, id=run.name) for run in published_runs()]


def _plan(run):
    precision = "fp8" if run.options.precision == "fp8" else "bf16-mixed"
    work = Workload(run.seq_len, precision=precision, recompute=run.recompute, finetune=run.layout.finetune)
    return parallel_plan(run.config, run.layout, work, gpu=run.gpu, step_options=run.options)


def _fixture_runs():
    return [_run(row) for row in json.loads(FIXTURE.read_text(encoding="utf-8"))["rows"]]


def _assert_may_fit(plan, name):
    verdict = plan.memory_verdict
    assert verdict.may_fit, f"{name}: {verdict.describe()} ({plan.per_gpu_bytes / GIB:.2f} GiB on {plan.gpu.key})"


@pytest.mark.parametrize("run", _step_rows())
def test_no_published_step_row_is_declared_not_fitting(run):
    _assert_may_fit(_plan(run), run.name)


@pytest.mark.parametrize("run", PUBLISHED_LAYOUTS, ids=lambda r: r.name)
def test_no_published_layout_is_declared_not_fitting(run):
    options = StepOptions(stack=run.stack, attention_kernel=run.attention_kernel)
    work = Workload(run.seq_len, recompute=run.recompute, finetune=run.layout.finetune)
    plan = parallel_plan(run.preset, run.layout, work, gpu=run.gpu, step_options=options)
    _assert_may_fit(plan, run.name)


@pytest.mark.parametrize("run", _fixture_runs(), ids=lambda r: r.name)
def test_the_issue_cases_may_fit(run):
    _assert_may_fit(_plan(run), run.name)


def test_nemo_llama3_8b_fp8_term_by_term():
    """Issue 36's case, 87.7 GiB when fp8 was costed at 4 B per parameter of weights and bf16
    activations: Llama-3-8B, 8,030,261,248 parameters, 6,979,321,856 of them in the blocks'
    GEMMs (32 x (4096 x 6144 QKV + 4096^2 o + 3 x 4096 x 14336 MLP)); ZeRO-1 over dp x cp = 8."""
    plan = _plan(_fixture_runs()[0])
    t = plan.terms
    gemm, total, rest = 6_979_321_856, 8_030_261_248, 8_030_261_248 - 6_979_321_856
    # primary fp8 weights (Megatron's --fp8-param-gather): bf16 only for the embedding, lm_head, norms
    assert t["weights_bytes"] == 2 * rest == 2_101_878_784
    assert t["fp8_weight_copies_bytes"] == 2 * gemm  # fp8 data + transpose, per-tensor scaling
    assert t["gradients_bytes"] == 2 * total  # bf16 gradient buffer (grad_sync_dtype=bf16)
    assert t["optimizer_bytes"] == 12 * total // 8  # fp32 master, m, v over dp x cp = 8
    # activations at T / cp = 4096 tokens: TE's fused norms and fp8 GEMM inputs, 120,968 bytes per
    # token and layer: norms 2 x (8192 input + 4 rstd + 4096 fp8 output), q, k, v 12,288, flash
    # output 8192 + logsumexp 128, o input 4096 (fp8), SwiGLU input 57,344 + down input 14,336 (fp8)
    assert t["activations_blocks_bytes"] == 32 * 4096 * 120_968
    assert plan.memory_verdict.level == "fits"
    # with TE's default instead (bf16 parameters and the cached fp8 copies: 2 B more per GEMM
    # weight), what NeMo 24.07 may have run: 4.79 GiB headroom, inside the allocator's band
    run = _fixture_runs()[0]
    te_default = _plan(replace(run, options=replace(run.options, fp8_params=False)))
    assert te_default.terms["weights_bytes"] == 2 * total
    assert te_default.per_gpu_bytes == plan.per_gpu_bytes + 2 * gemm
    assert te_default.memory_verdict.level == "tight" and te_default.memory_verdict.headroom_bytes > 4 * GIB


def test_fp8_does_not_cost_4_bytes_per_parameter_of_weights():
    """TE's default (bf16 parameters + cached fp8 copies) and Megatron's fp8 recipe (primary fp8
    weights) against the bf16 run of the same layout."""
    run = _fixture_runs()[0]
    bf16 = parallel_plan(
        run.config, run.layout, Workload(run.seq_len, recompute=run.recompute), gpu="h100", step_options=StepOptions()
    )
    te_default = _plan(replace(run, options=StepOptions(precision="fp8", fp8_params=False)))
    assert te_default.terms["weights_bytes"] == bf16.terms["weights_bytes"] == 2 * 8_030_261_248
    assert te_default.terms["fp8_weight_copies_bytes"] == 2 * 6_979_321_856
    # fp8 saves activations: the four GEMM inputs of a layer in 1 byte instead of 2
    assert te_default.terms["activations_blocks_bytes"] < bf16.terms["activations_blocks_bytes"]
