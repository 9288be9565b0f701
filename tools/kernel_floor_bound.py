"""How much a fixed GPU-side cost per kernel could add to each published run's predicted step
(issue 36: are small models predicted too fast because of per-kernel costs?).

An upper bound: every kernel a block runs, counted as eager PyTorch launches them (the most of
any stack, sizing.parallel.eager.kernels_per_block: norms, rotary, activation, residual adds,
one per GEMM, attention), forward plus about twice as many backward, times the layers of a
stage and the micro-batches of a step, each charged the fixed time of one GEMM kernel fitted
to OpenXLA's H100 cuBLAS sweep (sizing/data/step_time.json "gemm" "kernel_us", 5 us: launch,
first-wave ramp and tail), added in full, as if no kernel overlapped another:

python tools/kernel_floor_bound.py          # rows predicted >10% too fast, then a summary
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sizing.parallel.eager import kernels_per_block  # noqa: E402
from sizing.parallel.published_steps import published_runs  # noqa: E402

KERNEL_FLOOR_SECONDS = 5e-6  # step_time.json "gemm" "kernel_us" (H100, fitted to the OpenXLA sweep)
KERNELS_PER_FORWARD_AND_BACKWARD = 3  # forward + about twice as many backward


def floor_bound_seconds(run) -> float:
    """Per-kernel floor of one step on one GPU: kernels x layers per stage x micro-batches x floor."""
    layers = run.config.n_layers / run.layout.pp
    kernels = KERNELS_PER_FORWARD_AND_BACKWARD * kernels_per_block(run.config)
    return kernels * layers * run.layout.micro_batches * KERNEL_FLOOR_SECONDS


def rows() -> list[tuple[str, float, float]]:
    """(name, gap = measured / predicted - 1, floor bound / predicted) for every published run."""
    out = []
    for run in published_runs():
        pred = run.predict()
        measured = run.measured_seconds(pred)
        out.append((run.name, measured / pred.step_seconds - 1, floor_bound_seconds(run) / pred.step_seconds))
    return out


def main() -> int:
    table = rows()
    for name, gap, bound in table:
        if gap > 0.1:
            print(f"{name[:64]:64s} too fast by {gap:+6.1%}; kernel floor could add at most {bound:5.2%}")
    bounds = [bound for _, _, bound in table]
    print(f"{len(table)} runs: floor bound median {statistics.median(bounds):.2%}, largest {max(bounds):.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
