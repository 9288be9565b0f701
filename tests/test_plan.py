"""sizing.formulas.scaling and sizing.plan.compute_optimal / `sizing plan`: the laws against the papers, the closed form
against a search, the shapes' exact counts, the inference-aware optimum."""

import json
import math

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.cli import main
from sizing.formulas import params as P
from sizing.formulas.conventions import model_training_flops
from sizing.formulas.scaling import (
    EPOCH_REPLICATION,
    HOFFMANN_APPROACH1,
    HOFFMANN_APPROACH3,
    HOFFMANN_TABLE3,
    TWENTY_TOKENS,
    compute_flops,
    inference_aware,
    numeric_optimum,
    tokens_for_budget,
)
from sizing.inputs.hardware import get_gpu
from sizing.memory import training_memory
from sizing.plan.compute_optimal import plan, width_step
from sizing.validate import SizingError

# Table 3 of Hoffmann et al. 2022 is Approach 1's projection. The paper publishes its exponents
# rounded to two decimals (a = b = 0.50; Table 2's interval for a is 0.488-0.502) and not the
# constant; we anchor at the paper's own 67B for Gopher's 5.76e23 FLOPs. Over the 25,000x span of
# Table 3's sizes, an exponent off by ~0.002 moves the FLOPs by up to ~7% at the far end (400M:
# +6.9%), and the printed tokens are rounded (67B's 1.5T is 1.43T by 6ND): 8% covers both.
TABLE3_TOLERANCE = 0.08


@pytest.mark.parametrize("n_params, flops, tokens", HOFFMANN_TABLE3)
def test_approach1_reproduces_hoffmann_table3(n_params, flops, tokens):
    ours = HOFFMANN_APPROACH1.flops_for_params(n_params)
    assert ours == pytest.approx(flops, rel=TABLE3_TOLERANCE)
    assert tokens_for_budget(ours, n_params) == pytest.approx(tokens, rel=TABLE3_TOLERANCE)
    assert HOFFMANN_APPROACH1.optimal_params(ours) == pytest.approx(n_params, rel=1e-12)  # the inverse


@pytest.mark.parametrize("law", [HOFFMANN_APPROACH3, EPOCH_REPLICATION])
@pytest.mark.parametrize("flops", [1e19, 5.76e23, 1e26])
def test_approach3_optimum_is_its_closed_form(law, flops):
    n, d = law.optimal_params(flops), law.optimal_tokens(flops)
    assert compute_flops(n, d) == pytest.approx(flops, rel=1e-12)
    # G and the exponents, as Hoffmann et al.'s Eq. 4 writes them
    G = (law.alpha * law.A / (law.beta * law.B)) ** (1 / (law.alpha + law.beta))
    assert n == pytest.approx(G * (flops / 6) ** (law.beta / (law.alpha + law.beta)), rel=1e-12)
    assert d == pytest.approx((flops / 6) ** (law.alpha / (law.alpha + law.beta)) / G, rel=1e-12)
    searched, _ = numeric_optimum(law, flops)  # golden-section search on L(N, C/6N)
    assert searched == pytest.approx(n, rel=1e-5)


@settings(max_examples=50, deadline=None)
@given(log_c=st.floats(18, 28), factor=st.floats(0.5, 2.0).filter(lambda f: abs(f - 1) > 1e-3))
def test_no_other_split_of_the_budget_has_lower_loss(log_c, factor):
    flops = 10**log_c
    for law in (HOFFMANN_APPROACH3, EPOCH_REPLICATION):
        n = law.optimal_params(flops)
        assert law.loss(n, tokens_for_budget(flops, n)) < law.loss(n * factor, tokens_for_budget(flops, n * factor))


def test_the_laws_published_coefficients_and_what_they_imply():
    assert (HOFFMANN_APPROACH3.E, HOFFMANN_APPROACH3.A, HOFFMANN_APPROACH3.B) == (1.69, 406.4, 410.7)
    assert (HOFFMANN_APPROACH3.alpha, HOFFMANN_APPROACH3.beta) == (0.34, 0.28)
    e = EPOCH_REPLICATION
    assert (e.E, e.A, e.B, e.alpha, e.beta) == (1.8172, 482.01, 2085.43, 0.3478, 0.3658)
    # Besiroglu et al.: a = β/(α+β) = 0.5126, and ~20 tokens per parameter at Chinchilla's scale
    assert e.a == pytest.approx(0.5126, abs=5e-5)
    ratio = e.optimal_tokens(5.76e23) / e.optimal_params(5.76e23)
    assert 15 < ratio < 25
    # Hoffmann's rounded A3 fit favours far more tokens per parameter there (Besiroglu et al.: ~70)
    assert HOFFMANN_APPROACH3.optimal_tokens(5.76e23) / HOFFMANN_APPROACH3.optimal_params(5.76e23) > 60
    n = TWENTY_TOKENS.optimal_params(1e24)
    assert TWENTY_TOKENS.optimal_tokens(1e24) == pytest.approx(20 * n) and compute_flops(n, 20 * n) == pytest.approx(
        1e24
    )


def test_inference_aware_keeps_the_loss_and_trades_training_for_a_smaller_model():
    law = EPOCH_REPLICATION
    ia = inference_aware(law, 5.76e23, 1e13)
    assert law.loss(ia.params, ia.tokens) == pytest.approx(ia.loss, rel=1e-9)
    assert ia.loss == pytest.approx(law.loss(law.optimal_params(5.76e23), law.optimal_tokens(5.76e23)))
    assert ia.params < ia.optimal_params and ia.tokens > ia.optimal_tokens
    assert ia.training_flops > 5.76e23 and ia.total_flops < ia.optimal_total_flops
    # serving almost nothing: the compute-optimal model
    assert inference_aware(law, 5.76e23, 1.0).params == pytest.approx(ia.optimal_params, rel=1e-3)


def test_budget_from_gpus_and_days():
    p = plan(gpus=1024, days=30, gpu="h100", mfu=0.4)
    peak = get_gpu("h100").peak_flops_per_second("bf16")
    assert p.flops == pytest.approx(1024 * 30 * 86400 * peak * 0.4, rel=1e-12)
    assert p.optimum("epoch").params == pytest.approx(EPOCH_REPLICATION.optimal_params(p.flops))


@pytest.mark.parametrize("flops", [1e20, 1e22, 5.76e23])
def test_shapes_are_near_n_opt_hardware_friendly_and_counted_exactly(flops):
    p = plan(flops=flops, gpus=256, gpu="h100", mfu=0.4)  # --mfu: a constant, and the ZeRO-3 fit check
    target = p.optimum("epoch").params
    assert len({s.config.d_model for s in p.shapes}) == 3
    for s in p.shapes:
        cfg = s.config
        assert s.params == P.total_params(cfg) and 0.85 < s.params / target < 1.15
        assert cfg.d_model % width_step(target) == 0 and cfg.n_heads * cfg.d_head == cfg.d_model
        assert cfg.n_heads % cfg.kv_heads == 0 and cfg.d_ff % 256 == 0
        assert s.tokens == round(flops / (6 * s.active_params))
        assert s.training_flops == model_training_flops(cfg, 4096, s.tokens)  # exact, full attention
        m = training_memory(cfg, 4096, 1, zero=3, dp=256, recompute=s.fit_setting.split("recompute ")[1], gpu="h100")
        assert s.fits and m.fits and s.max_micro_batch == m.max_micro_batch


def test_a_shape_that_cannot_fit_says_so():
    p = plan(flops=1e25, gpus=1, gpu="a100")  # ~300B parameters on one GPU
    assert not any(s.fits for s in p.shapes)
    assert all(s.fit_setting.startswith("not with ZeRO-0 over 1 GPU") for s in p.shapes)


def test_bad_budgets():
    for kwargs in ({}, {"flops": 1e23, "days": 3}, {"flops": math.inf}, {"flops": 1e23, "law": "kaplan"}):
        with pytest.raises(SizingError):
            plan(**kwargs)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_cli_plan_table_json_csv():
    out = run("plan", "--flops", "5.76e23", "--gpus", "1024", "--gpu", "h100", "--inference-tokens", "10T")
    assert out.exit_code == 0, out.output
    for text in ("E=1.69, A=406.4, B=410.7, α=0.34, β=0.28", "E=1.8172, A=482.01", "arXiv:2404.10102", "D = 20·N"):
        assert text in out.output
    assert "Inference-aware (Sardana et al. 2023)" in out.output
    data = json.loads(run("plan", "--gpus", "64", "--days", "14", "--gpu", "h100", "--format", "json").output)
    assert data["budget"].startswith("64 h100-sxm x 14 days") and len(data["shapes"]) == 3
    assert isinstance(data["shapes"][0]["params"], int) and data["inference_aware"] is None
    csv = run("plan", "--flops", "1e21", "--format", "csv").output.splitlines()
    assert csv[0].startswith("kind,name,params") and len(csv) == 1 + 4 + 3


def test_cli_plan_errors():
    cases = {
        (): "give a budget",
        ("--flops", "1e23", "--days", "3", "--gpus", "8"): "give a budget",
        ("--days", "3"): "--days needs --gpus",
        ("--flops", "1e23", "--flops", "1e24"): "--flops given twice",
        ("--flops", "nan"): "--flops",
        ("--flops", "1e23", "--law", "kaplan"): "--law",
        ("--flops", "1e23", "--like", "llama9"): "llama9",
    }
    for args, message in cases.items():
        out = run("plan", *args)
        assert out.exit_code == 2 and message in out.output and out.output.count("\n") == 1, (args, out.output)


def test_shapes_follow_the_family():
    mha = plan(flops=1e21, like="llama2-7b")  # Llama-2-7B: one KV head per head, 128-dim heads
    assert all(s.config.kv_heads == s.config.n_heads and s.config.d_head == 128 for s in mha.shapes)
    assert all(s.config.vocab_size == 32000 and s.config.mlp == "swiglu" for s in mha.shapes)
    gpt2 = plan(flops=1e20, like="gpt2", seq_len=8192)  # learned positions: the table grows to T
    assert all(s.config.max_positions == 8192 and s.config.d_head == 64 for s in gpt2.shapes)
    with pytest.raises(SizingError, match="dense preset"):
        plan(flops=1e22, like="mixtral-8x7b")
