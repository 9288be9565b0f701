"""One serving step model (issue 34 item 17, issue 37 item 1): the same question, the time of one
decode step of b sequences at context C on a GPU, asked through every command that times one,
gets the same number: `sizing serve` (API, CLI and the UI's JSON API), `speculate`'s target step,
`serve-layout`'s pure TP step, the continuous-batching iteration (`serve --rate`), all at the GPU's
calibrated efficiencies and overheads. And the same weights: `memory --quant fp8`, `memory --engine`
and `serve` count fp8 weights alike."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sizing import get_preset
from sizing.cli import main
from sizing.inputs import get_gpu
from sizing.serve import engine_iteration, layout_step, serve, serving_machine, speculate
from sizing.serve.estimate import serve_settings_for

C, B = 4096, 1  # the decode step at C cached positions (serve: prompt C - 1, output 2, first step)


def _serve_step(model: str, gpu: str, batch: int, tp: int = 1) -> float:
    return serve(model, C - 1, 2, batch, gpu, tp=tp).first_step.roofline.seconds


@pytest.mark.parametrize("model, gpu, batch", [("llama2-70b", "h100", 1), ("llama2-7b", "h200", 16)])
def test_serve_speculate_layout_and_iteration_agree(model, gpu, batch):
    cfg = get_preset(model).config
    step = _serve_step(model, gpu, batch)
    target = speculate(cfg, 4, 0.7, get_preset("llama2-7b").config, C, batch, gpu).target_step_seconds
    layout = layout_step(cfg, gpu, C, "bf16", "bf16", "tp", 1, batch).seconds
    settings = serve_settings_for(cfg, get_gpu(gpu), C, batch, "bf16", "bf16")
    iteration = engine_iteration(serving_machine(cfg, get_gpu(gpu), settings), batch, C).seconds
    assert target == pytest.approx(step, rel=1e-12)
    assert layout == pytest.approx(step, rel=1e-12)
    assert iteration == pytest.approx(step, rel=1e-12)


def test_the_issue_question_llama2_70b_on_h100():
    """`speculate --preset llama2-70b --draft llama2-7b -b 1 --context 4096 --gpu h100` gave a
    51.8 ms target step and `serve` 92.1 ms for the same step: now both are the calibrated step."""
    r = CliRunner().invoke(
        main, "speculate --preset llama2-70b --draft llama2-7b -b 1 --context 4096 --gpu h100 --format json".split()
    )
    target = json.loads(r.output)["target_step_seconds"]
    s = CliRunner().invoke(main, "serve --preset llama2-70b --gpu h100 --prompt 4095 --output 2 --format json".split())
    assert s.exit_code == 3  # 128 GiB of bf16 weights do not fit one H100; the step is still timed
    first = json.loads(s.stdout)["decode"]["first_step"]["seconds"]
    assert target == pytest.approx(first, rel=1e-12)
    # 138 GB of weights at 0.90 of 3.35 TB/s, plus the KV read, 3 ms and 40 us of engine overhead
    assert 0.045 < first < 0.052


def test_tensor_parallel_step_agrees_between_serve_and_serve_layout():
    cfg = get_preset("llama3-70b").config
    step = _serve_step("llama3-70b", "h100", 32, tp=8)
    assert layout_step(cfg, "h100", C, "bf16", "bf16", "tp", 8, 32).seconds == pytest.approx(step, rel=1e-12)


def test_the_ui_api_gives_the_cli_number():
    from sizing.ui.api import answer

    pairs = [("preset", "llama2-7b"), ("gpu", "h200"), ("prompt", str(C - 1)), ("output", "2"), ("batch", "16")]
    result = answer("serve", pairs)["result"]
    assert result["decode"]["first_step"]["seconds"] == pytest.approx(_serve_step("llama2-7b", "h200", 16), rel=1e-12)


def test_one_weight_bytes_for_fp8():
    """`memory --quant fp8` said 8.46 GiB and `memory --engine` / `serve` 7.48 GiB for Llama-3-8B's
    fp8 weights: fp8 keeps the token table and lm_head (128,256 x 4,096 each) and the norms in bf16,
    as every engine does, so all three count 8.46 GiB."""
    cfg = get_preset("llama3-8b").config
    n, table, norms = 8_030_261_248, 128_256 * 4096, (2 * 32 + 1) * 4096
    fp8 = (n - 2 * table - norms) + 2 * (2 * table + norms)
    runner = CliRunner()
    quant = json.loads(
        runner.invoke(main, "memory --preset llama3-8b --inference --quant fp8 --format json".split()).output
    )
    dtype = json.loads(
        runner.invoke(main, "memory --preset llama3-8b --inference --weight-dtype fp8 --format json".split()).output
    )
    engine = json.loads(
        runner.invoke(
            main, "memory --preset llama3-8b --inference --weight-dtype fp8 --engine vllm --format json".split()
        ).output
    )
    served = serve(cfg, 1000, 100, gpu="h100", weight_dtype="fp8")
    assert quant["weights_bytes"] == dtype["weights_bytes"] == fp8 == served.weights_bytes_per_gpu
    rope_cache = 8192 * 128 * 2  # the engine also holds the rotary cos/sin cache (sizing/memory/engine_weights.py)
    assert next(t["bytes"] for t in engine["terms"] if t["name"] == "weights") == fp8 + rope_cache
