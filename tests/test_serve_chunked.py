"""`sizing serve` with chunked local attention (Llama-4) and global layers between them: the
decode time is the exact sum of the decode steps, so the time per output token is their mean,
between the fastest and the slowest step (issue 23). Checked against a step-by-step sum."""

import dataclasses

import pytest

from sizing.inputs.hardware import get_gpu
from sizing.inputs.presets import get_preset
from sizing.serve.estimate import StepModel, serve


def _step_by_step(est, gpu: str, first: int, last: int) -> float:
    machine = StepModel(est.config, get_gpu(gpu), est.settings)
    return sum(machine.decode_step(c).roofline.seconds for c in range(first, last + 1))


@pytest.mark.parametrize(
    ("model", "prompt", "output", "batch", "tp", "chunk", "every"),
    [
        ("llama-4-scout", 8000, 600, 8, 8, None, None),  # crosses the 8192 chunk boundary
        ("llama2-7b", 1, 700, 4, 1, 64, 4),  # a small chunk, a global layer every 4th: 11 chunks
        ("llama2-7b", 100, 300, 64, 1, 128, 2),
        ("llama2-7b", 5, 3000, 1, 1, 16, 4),  # 187 chunks, memory-bound: runs summed as series
        ("llama2-7b", 5, 3000, 256, 1, 8, 2),  # 375 chunks, the bound switching between them
        ("llama2-7b", 1, 2000, 64, 1, 32, None),  # every layer chunked: all chunks alike
    ],
)
def test_decode_time_is_the_sum_of_its_steps(model, prompt, output, batch, tp, chunk, every):
    cfg = get_preset(model).config
    if chunk is not None:
        cfg = dataclasses.replace(cfg, attention_chunk=chunk, full_attention_every=every or 0)
    est = serve(cfg if chunk else model, prompt, output, batch=batch, gpu="h100", tp=tp)
    first, last = prompt + 1, prompt + output - 1
    exact = _step_by_step(est, "h100", first, last)
    assert est.decode_seconds == pytest.approx(exact, rel=1e-9)  # float sums in another order
    mean = exact / (last - first + 1)
    assert est.tpot_seconds == pytest.approx(mean, rel=1e-9)


def test_the_issues_case_tpot_is_below_the_slowest_step():
    est = serve("llama-4-scout", 1, 30000, batch=8, gpu="h100", tp=8)
    slowest = max(est.first_step.roofline.seconds, est.last_step.roofline.seconds)
    assert est.first_step.roofline.seconds < est.tpot_seconds < slowest


def test_many_chunks_answer_at_once():
    import time

    cfg = dataclasses.replace(get_preset("llama2-7b").config, attention_chunk=2, full_attention_every=2)
    start = time.perf_counter()
    est = serve(cfg, 1, 10**8, batch=1, gpu="h100")
    assert time.perf_counter() - start < 2 and est.first_step.roofline.seconds < est.tpot_seconds
