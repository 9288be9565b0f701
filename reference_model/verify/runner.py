"""Running the checks of `sizing verify` on every CPU: independent units of work (units.py),
results in a stable order.

`run_units` runs the units of a run and yields each unit's results as it finishes; `ordered`
(units.py) puts them back in the order a serial run gives (models outermost, then checks, then
the standalone checks). The calling process takes part: it runs the cheapest units itself while
spawned processes (pool.py; a fresh interpreter each: fork is unsafe once torch has run threads)
take the most expensive ones, and those start only after a second of work, so a small run never
waits for a worker to start. New checks join by registering themselves (registry.py); nothing
here names a check.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterator

from reference_model.verify.check import CheckResult
from reference_model.verify.pool import WorkerPool
from reference_model.verify.units import Unit, run_unit

SPAWN_AFTER_SECONDS = 1.0  # a run shorter than this on one process never starts a worker
WORKER_START_SECONDS = 3.0  # a fresh interpreter importing torch, about; less work left than this: no worker


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the OS tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run_units(units: list[Unit], workers: int | None = None) -> Iterator[tuple[Unit, list[CheckResult]]]:
    """(unit, its results) for every unit, as each finishes. `workers`: processes in all, this
    one included (default: the usable CPUs); 1 runs everything here, in order. Workers start
    only once this process has worked for SPAWN_AFTER_SECONDS and has more left than a worker
    takes to start (_worth_a_worker), so a short run costs no interpreter start."""
    workers = usable_cpus() if workers is None else workers
    if workers <= 1 or len(units) <= 1:
        for unit in units:
            yield unit, run_unit(unit)
        return
    pending = deque(sorted(units, key=lambda u: -u.cost))  # workers take the front, this process the back
    started, pool, threads = time.perf_counter(), None, _Threads()
    try:
        while pending or (pool is not None and pool.busy):
            if pool is None and _worth_a_worker(time.perf_counter() - started, len(units) - len(pending), len(pending)):
                pool = _start_pool(min(workers, len(pending) + 1), threads)
            if pool is not None:
                yield from pool.collect(timeout=0)
                pool.hand_out(pending)
            if pending:
                unit = pending.pop()
                yield unit, run_unit(unit)
            elif pool is not None:
                yield from pool.collect(timeout=1.0)
    finally:
        if pool is not None:
            pool.close()
        threads.restore()


def _worth_a_worker(elapsed: float, done: int, left: int) -> bool:
    """Start workers once this process has worked SPAWN_AFTER_SECONDS and the units left would
    take it longer than a worker takes to start (at the pace of those done so far)."""
    if left < 2 or elapsed < SPAWN_AFTER_SECONDS:
        return False
    return elapsed / max(done, 1) * left > WORKER_START_SECONDS


def _start_pool(processes: int, threads: _Threads) -> WorkerPool:
    per_process = max(1, usable_cpus() // processes)  # torch's intra-op threads: one CPU each
    threads.set(per_process)
    return WorkerPool(processes - 1, per_process)


class _Threads:
    """torch's intra-op thread count here, set for a parallel run and restored after it."""

    def __init__(self):
        self.before: int | None = None

    def set(self, n: int) -> None:
        import torch

        self.before = torch.get_num_threads() if self.before is None else self.before
        torch.set_num_threads(n)

    def restore(self) -> None:
        if self.before is not None:
            import torch

            torch.set_num_threads(self.before)
