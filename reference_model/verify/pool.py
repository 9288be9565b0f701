"""The worker processes of the parallel runner (runner.py): each a fresh interpreter (spawn)
that imports torch once, says it is ready, then runs one unit at a time until told to stop.

One pipe per worker carries a unit there and its results (or the traceback of its failure)
back; the calling process hands out work only to a worker that has nothing, so no unit is ever
queued behind a slow one.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Iterator
from multiprocessing.connection import wait

from reference_model.verify.units import Unit, format_exception, run_unit, worker_failure

STOP_SECONDS = 5.0  # how long an idle worker may take to exit before it is terminated


class WorkerPool:
    """`n` spawned workers (`threads`: torch's intra-op threads in each, None leaves torch alone).
    `hand_out` gives each idle worker the next unit of `pending` (its front); `collect` returns
    the finished ones; `busy` is true while any unit is out."""

    def __init__(self, n: int, threads: int | None = None):
        context = multiprocessing.get_context("spawn")
        self.conns, self.processes = [], []
        self.idle: list[int] = []  # ready, with no unit
        self.running: dict[int, Unit] = {}
        self.live = set(range(n))
        for _ in range(n):
            parent, child = context.Pipe()
            process = context.Process(target=worker_main, args=(child, threads), daemon=True)
            process.start()
            child.close()
            self.conns.append(parent)
            self.processes.append(process)

    @property
    def busy(self) -> bool:
        return bool(self.running)

    def hand_out(self, pending: deque) -> None:
        while self.idle and pending:
            worker = self.idle.pop()
            unit = pending.popleft()
            self.conns[worker].send(unit)
            self.running[worker] = unit

    def collect(self, timeout: float) -> Iterator[tuple[Unit, list]]:
        """(unit, results) of each unit finished within `timeout` seconds. A failure in a worker
        is raised here with its traceback; a worker that died while running a unit too."""
        live = sorted(self.live)
        ready = wait([self.conns[i] for i in live] + [self.processes[i].sentinel for i in live], timeout)
        for i in live:
            message = _receive(self.conns[i])
            if message is not None:
                kind, payload = message
                unit = self.running.pop(i, None)
                self.idle.append(i)
                if kind == "error":
                    raise worker_failure(unit, payload)
                if kind == "done":
                    yield unit, payload
            elif self.processes[i].sentinel in ready:  # exited, nothing left to read
                self.live.discard(i)
                if i in self.idle:
                    self.idle.remove(i)
                if i in self.running:
                    raise worker_failure(self.running.pop(i), f"exit code {self.processes[i].exitcode}")

    def close(self) -> None:
        """Stop the idle workers (a moment each), terminate the rest (still starting, or running
        a unit after a failure elsewhere)."""
        for i, process in enumerate(self.processes):
            if i in self.idle and process.is_alive():
                try:
                    self.conns[i].send(None)
                except OSError:
                    pass
        for i, process in enumerate(self.processes):
            if i in self.idle:
                process.join(STOP_SECONDS)
            if process.is_alive():
                process.terminate()
                process.join()
            self.conns[i].close()


def _receive(conn):
    """The next message on `conn`, or None when there is none (or the worker is gone)."""
    try:
        return conn.recv() if conn.poll() else None
    except (EOFError, OSError):
        return None


def worker_main(conn, threads: int | None) -> None:
    """A worker: set torch's intra-op threads (when given), say it is ready, then run units until
    None arrives (each unit imports its check's modules, torch among them, as it arrives)."""
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    conn.send(("ready", None))
    while True:
        unit = conn.recv()
        if unit is None:
            return
        try:
            results = run_unit(unit)
        except BaseException as exc:  # sent back whole: the calling process raises it
            conn.send(("error", format_exception(exc)))
        else:
            conn.send(("done", results))
