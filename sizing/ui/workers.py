"""The threads of `sizing ui`: a bounded pool for connections, and a bounded pool for the
calculations with a time budget per request.

A connection thread reads the request, hands the calculation to the compute pool and waits at
most the budget: past it the client gets a 504 JSON error at once and its calculation finishes
in the background (a Python thread cannot be stopped; every calculation is bounded, see the
layout search). A calculation that cannot start within the budget, because every compute
worker is busy, is a 503. No lock is held while a calculation runs, so one slow request never
makes the others wait: they run beside it (the interpreter's lock is shared in slices of
milliseconds).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

CONNECTION_WORKERS = 32  # connections served at once; more wait in the listen backlog
COMPUTE_WORKERS = 4  # calculations at once; on 2 cores more would only share the CPU thinner
DEFAULT_BUDGET_S = 30.0  # the longest a request waits for its answer


class Busy(Exception):
    """Every compute worker stayed busy for the whole budget: HTTP 503."""


class TooSlow(Exception):
    """The calculation did not finish within the budget: HTTP 504."""


class ComputePool:
    """Runs calculations on COMPUTE_WORKERS threads, each request waiting at most `budget_s`."""

    def __init__(self, workers: int = COMPUTE_WORKERS, budget_s: float = DEFAULT_BUDGET_S):
        self.budget_s = budget_s
        self._slots = threading.BoundedSemaphore(workers)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sizing-ui-compute")

    def run(self, func: Callable[..., Any], *args: Any) -> Any:
        """func(*args)'s value, or its exception; Busy or TooSlow past the budget."""
        start = time.monotonic()
        if not self._slots.acquire(timeout=self.budget_s):
            raise Busy(f"every calculation worker stayed busy for {self.budget_s:g} s; try again shortly")
        try:
            future = self._pool.submit(func, *args)
        except BaseException:
            self._slots.release()
            raise
        future.add_done_callback(lambda _: self._slots.release())  # the slot frees when the work ends
        try:
            return future.result(timeout=max(0.0, self.budget_s - (time.monotonic() - start)))
        except FutureTimeout:
            raise TooSlow(
                f"the calculation took longer than {self.budget_s:g} s (this server's time budget per request); "
                "it was not stopped, so the same question may answer later, or ask a smaller one"
            ) from None

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def connection_pool(workers: int = CONNECTION_WORKERS) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sizing-ui-connection")
