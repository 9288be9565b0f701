"""CUDA checks of the FLOP and memory formulas and of `sizing profile` (pytest -m gpu).

Every test here needs a CUDA device and is skipped without one; benchmarks/gpu_profile.sh
runs them. They were written without a GPU at hand (the session that built them had none):
the expectations are derived from the formulas and from the CPU checks in tests/test_profile.py,
and each tolerance says why it is what it is.
"""

import json
import math

import pytest

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

from click.testing import CliRunner  # noqa: E402

from sizing.cli import main  # noqa: E402
from sizing.formulas.flops import flop_breakdown  # noqa: E402
from sizing.inputs.presets import get_preset  # noqa: E402

MIB = 2**20
# Bytes the caching allocator holds on CUDA that no formula counts: the cuBLAS / cuBLASLt
# workspaces (32 MiB per handle and stream on Hopper by default, allocated through the caching
# allocator since torch 1.13 and so inside max_memory_allocated), SDPA's small scratch
# buffers, AdamW's per-tensor `step` scalars and the 512-byte rounding of every block.
CUDA_SLACK_BYTES = 96 * MIB


def _cfg(preset, **overrides):
    return get_preset(preset).config.with_overrides(overrides)


# ---------------------------------------------------------------- FLOPs
@pytest.mark.parametrize(
    "preset, overrides",
    [
        ("gpt2", dict(n_layers=2, d_model=256, n_heads=4, d_ff=1024, vocab_size=1000)),
        ("llama3-8b", dict(n_layers=2, d_model=256, n_heads=4, n_kv_heads=2, d_ff=512, vocab_size=1000)),
    ],
)
@pytest.mark.parametrize("impl", ["math", "sdpa"])
def test_flop_counter_on_cuda_matches_the_formula(preset, overrides, impl):
    """FlopCounterMode over forward + backward on CUDA, bf16, against B x (forward + backward) of
    the `full` convention. Exact. The math path is matmuls the counter sees one by one. The sdpa
    path runs the flash kernel (forced here), whose registered backward count (torch.utils.
    flop_counter.sdpa_backward_flop_count) includes the recomputation of QK^T that FlashAttention
    does: one more attn.scores forward, which is hardware work, not model FLOPs."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    from reference_model.model.gpt import build

    cfg = _cfg(preset, **overrides)
    T, B = 256, 2
    model = build(cfg, "cuda", attn_impl=impl, dtype=torch.bfloat16, seed=0)
    idx = torch.randint(0, cfg.vocab_size, (B, T), device="cuda")
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), FlopCounterMode(display=False) as counter:
        model(idx, idx)[1].backward()
    fb = flop_breakdown(cfg, T, "full")
    expected = B * (fb.forward + fb.backward)
    if impl == "sdpa":
        expected += B * next(c.forward for c in fb.components if c.key == "attn.scores")
    assert counter.get_total_flops() == expected


def test_flop_verify_runs_on_cuda():
    """The component-by-component FLOP check of reference_model/verify/flops.py on the GPU, with
    fvcore when it is installed (benchmarks/gpu_profile.sh installs it from carried wheels)."""
    flop_verify = pytest.importorskip("reference_model.verify.flops")
    try:
        import fvcore  # noqa: F401

        counters = "both"
    except ImportError:
        counters = "torch"
    cfg = flop_verify.scaled_down(get_preset("llama2-7b").config)
    check = flop_verify.check_flops(cfg, "llama2-7b (scaled down)", 32, device="cuda", counters=counters)
    assert check.ok, [r for r in check.forward + check.training if any(r.differences())]


# ---------------------------------------------------------------- memory
_MEMORY_CASES = [  # (preset, overrides, recompute): eager bf16 sdpa steps at T 1024, b 4
    ("gpt2", dict(n_layers=4, vocab_pad_multiple=64), "none"),
    ("llama3-8b", dict(n_layers=4, d_model=1024, n_heads=16, n_kv_heads=4, d_ff=2816, vocab_size=32000), "none"),
    ("gpt2", dict(n_layers=4, vocab_pad_multiple=64), "full"),
]


@pytest.fixture(scope="module", params=_MEMORY_CASES, ids=["gpt2", "llama-gqa", "gpt2-recompute"])
def eager_profile(request):
    from reference_model.profile.run import ProfileSettings, profile_training

    preset, overrides, recompute = request.param
    cfg = _cfg(preset, **overrides)
    settings = ProfileSettings(
        1024,
        4,
        steps=2,
        warmup=1,
        dtype="bf16",
        attention_impl="sdpa",
        compile=False,
        recompute=recompute,
        device="cuda",
    )
    return profile_training(cfg, settings, name=preset, preset=get_preset(preset))


def test_peak_memory_matches_the_step_peak_estimate(eager_profile):
    """max_memory_allocated over two eager training steps against step_peak_estimate_bytes
    (weights + AdamW states + saved activations + the loss backward's b.T.V.(a + 8), before any
    gradient exists). On CPU the same estimate matches torch's MemTracker to 0.13%. Tolerance:
    3% (CUDA kernels may keep a buffer the CPU ones do not, e.g. flash attention's padded
    logsumexp) + CUDA_SLACK_BYTES (allocations no formula counts, see above)."""
    r, m = eager_profile, eager_profile.measurement
    estimate = r.step_peak_estimate_bytes
    peak = m.measured_peak_bytes - m.baseline_bytes  # leftovers of earlier tests, if any, are not this step's
    assert abs(peak - estimate) <= 0.03 * estimate + CUDA_SLACK_BYTES, (peak, estimate, r.to_dict()["memory"])


def test_peak_memory_against_the_formula(eager_profile):
    """The same peak against sizing.memory's per-GPU total. Expected ratio 1.12-1.23 for these
    cases (estimate / formula): the formula adds the gradients to every activation, which never
    coexist (set_to_none: none exists when the activations peak), and counts one fp32 b.T.V
    gradient where the loss backward holds two; with a 50k vocabulary the second term wins.
    Bounds 0.9-1.4: the formula must stay a usable planning figure for eager training
    (within -10%/+40% here), which the step-peak test pins down exactly."""
    r, m = eager_profile, eager_profile.measurement
    ratio = (m.measured_peak_bytes - m.baseline_bytes) / r.predicted_bytes
    assert 0.9 <= ratio <= 1.4, (ratio, r.to_dict()["memory"])


def test_allocated_after_a_step_is_the_model_states(eager_profile):
    """After optimizer.step() the gradients still exist (zero_grad runs at the next step), the
    activations are gone: weights + gradients + AdamW states, exactly the formula's model states,
    plus the token tensors and CUDA_SLACK_BYTES."""
    r, m = eager_profile, eager_profile.measurement
    states = r.model_states_bytes
    after = m.allocated_after_step_bytes - m.baseline_bytes
    assert states <= after <= states * 1.01 + CUDA_SLACK_BYTES, (after, states)


# ---------------------------------------------------------------- the profile itself
def test_profile_on_cuda_reports_every_figure(eager_profile):
    r = eager_profile
    d = r.to_dict()
    assert d["smoke_test_only"] is False and "CUDA events" in d["settings"]["timer"]
    assert d["settings"]["optimizer"] == "AdamW (fused=True)"
    assert d["environment"]["device_name"] and d["environment"]["cuda"]
    t = d["step_time_s"]
    assert len(t["all"]) == 2 and 0 < t["min"] <= t["median"] <= t["max"]
    assert d["achieved_flops_per_second"]["full"] == d["model_flops_per_step"]["full"] / t["median"]
    if r.gpu is not None:  # a GPU of sizing's table: MFU against its dense bf16 peak
        assert d["peak_source"].startswith("sizing GPU table")
        assert 0 < d["mfu"]["causal"] < d["mfu"]["full"] < 1
        assert d["published_run"] is None or d["published_run"]["gpu_hours"] > 0
    assert all(math.isfinite(x) for x in r.measurement.losses)


def test_compiled_profile_runs_on_cuda():
    from reference_model.profile.run import ProfileSettings, profile_training

    cfg = _cfg("gpt3-125m", n_layers=2, d_model=256, n_heads=4, head_dim=None, d_ff=1024, vocab_size=4096)
    settings = ProfileSettings(
        512, 4, steps=3, warmup=2, dtype="bf16", attention_impl="sdpa", compile=True, device="cuda", peak_tflops=100.0
    )
    r = profile_training(cfg, settings, name="tiny compiled", preset=get_preset("gpt3-125m"))
    assert r.settings.compile and r.step_time_s > 0 and r.measurement.measured_peak_bytes > 0
    assert r.mfu("full") == r.flops_per_step["full"] / r.step_time_s / 100e12
    assert r.projection is not None and r.projection["gpu_hours"] > 0


def test_cli_profile_on_cuda(tmp_path):
    out = tmp_path / "section.md"
    result = CliRunner().invoke(
        main,
        [
            "profile",
            "--planned",
            "gpt2-124m",
            "--set",
            "n_layers=2",
            "--steps",
            "2",
            "--warmup",
            "1",
            "--micro-batch",
            "2",
            "--out",
            str(out),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["settings"]["micro_batch"] == 2 and data["memory"]["measured_peak_bytes"] > 0
    text = out.read_text()
    assert text.startswith("## Profile: gpt2") and "max_memory_allocated" in text
    assert "functional smoke test" not in text
