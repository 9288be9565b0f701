"""The page builders of `sizing report` as independent jobs, run on every CPU.

Each job returns the files it builds ({relative path: text or bytes}) and the plots the index
shows (reports/README.md, built last from them). The jobs share nothing, so they run in forked
processes, which start in milliseconds with matplotlib already imported; fork is used only where
it is safe: a POSIX system, more than one CPU, one thread in this process and torch not loaded
(its thread pools do not survive a fork). Anywhere else they run here, one after another: the
same bytes.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from sizing.inputs import PRESETS

Built = tuple[dict[str, str | bytes], list]  # (files, plots for the index)


def _pages(existing_dir: Path | None) -> Built:
    from sizing.report.compute_optimal import PAGE as COMPUTE_OPTIMAL_PAGE
    from sizing.report.compute_optimal import render_compute_optimal
    from sizing.report.conventions_page import render_conventions
    from sizing.report.published_runs import render_published_runs
    from sizing.report.step_time_page import PAGE as STEP_TIME_PAGE
    from sizing.report.step_time_page import render_step_time

    files = {
        "conventions.md": render_conventions(),
        "published-runs.md": render_published_runs(),
        COMPUTE_OPTIMAL_PAGE: render_compute_optimal(),
        STEP_TIME_PAGE: render_step_time(),
    }
    return files, []


def _sheets(existing_dir: Path | None) -> Built:
    from sizing.report.sheet import render_sheet

    return {f"presets/{preset.name}.md": render_sheet(preset) for preset in PRESETS.values()}, []


def _plots(existing_dir: Path | None) -> Built:
    from sizing.report.compute_optimal import iso_flop_plot
    from sizing.report.plots import render_plots

    plots = [*render_plots(), iso_flop_plot()]
    return {plot.path: plot.png for plot in plots}, plots


def _serving(existing_dir: Path | None) -> Built:
    from sizing.report.serve_plots import render_serve_plots
    from sizing.report.serving_load import latency_vs_rate_data, latency_vs_rate_section
    from sizing.report.serving_page import render_serving

    load = latency_vs_rate_data()
    plots = render_serve_plots(load)
    files = {plot.path: plot.png for plot in plots}
    files["serving.md"] = render_serving(plots, existing_dir, latency_vs_rate_section(load))
    return files, []


def _hybrid(existing_dir: Path | None) -> Built:
    from sizing.report.hybrid_memory import PAGE, hybrid_memory_plot, render_hybrid_memory

    plot = hybrid_memory_plot()
    return {plot.path: plot.png, PAGE: render_hybrid_memory(plot)}, []


def _parallel(existing_dir: Path | None) -> Built:
    from sizing.report.parallel_layouts import render_parallel_layouts

    page, plot = render_parallel_layouts()
    return {"parallel-layouts.md": page, plot.path: plot.png}, []


# (what it builds, the job), the longest first (measured: the serving plots and page, then the
# other plots and the layout search), so that two processes finish together.
JOBS: tuple[tuple[str, Callable[[Path | None], Built]], ...] = (
    ("serving.md and its plots", _serving),
    ("plots", _plots),
    ("parallel-layouts.md", _parallel),
    ("presets/*.md", _sheets),
    ("hybrid-memory.md", _hybrid),
    ("conventions, published runs, compute-optimal, step time", _pages),
)


def run_jobs(existing_dir: Path | None, workers: int | None = None) -> Iterator[tuple[str, Built]]:
    """(label, (files, plots)) of every job, as each finishes (in JOBS order when serial)."""
    workers = _usable_cpus() if workers is None else workers
    if workers <= 1 or not fork_is_safe():
        for label, job in JOBS:
            yield label, job(existing_dir)
        return
    _preload()
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(min(workers, len(JOBS)), mp_context=context) as pool:
        futures = {pool.submit(job, existing_dir): label for label, job in JOBS}
        for future in as_completed(futures):
            yield futures[future], future.result()


def fork_is_safe() -> bool:
    """fork is offered (POSIX), this process runs one thread (a lock another thread holds at the
    fork stays held in the child) and torch, whose thread pools a fork would break, is not loaded."""
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
        and "torch" not in sys.modules
    )


def _preload() -> None:
    """What every job imports, imported once here so that each forked process has it already."""
    import matplotlib.backends.backend_agg
    import matplotlib.figure
    import matplotlib.style  # noqa: F401

    from sizing.render import import_tabulate

    import_tabulate()


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
