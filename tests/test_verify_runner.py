"""The parallel runner of `sizing verify` (reference_model/verify/runner.py, pool.py): every check
a serial run made is still made, once, and the results come back in the serial order whichever
process ran them; a failure in a worker is raised with its traceback."""

import os
import time

import pytest

pytest.importorskip("torch")

from verify_stand_ins import failing_check, slow_check

from reference_model.verify import check_units, ordered, runner, units
from reference_model.verify import registry as reg
from sizing.inputs import PRESETS

ALL = [(name, preset.config) for name, preset in PRESETS.items()]


def _serial_order(models, checks, standalone):
    """What `sizing verify` ran one after another before the runner: each model, each check."""
    return [(check, name) for name, _ in models for check in checks] + [(s, s) for s in standalone]


def test_every_check_of_verify_all_is_planned_once_in_the_serial_order():
    options = {"seq_len": None, "counter": "both", "shallow": True}
    units = check_units(ALL, None, ["hybrid"], **options)
    planned = {}
    for unit in units:
        if unit.models:
            check = next(name for name, fn in reg.CHECKS.items() if fn is unit.check)
            for position, (name, _cfg) in zip(unit.positions, unit.models, strict=True):
                assert position not in planned  # each position once
                planned[position] = (check, name)
        else:
            planned[unit.positions[0]] = ("hybrid", "hybrid")
    assert [planned[p] for p in sorted(planned)] == _serial_order(ALL, list(reg.CHECKS), ["hybrid"])
    assert sum(unit.size for unit in units) == 3 * len(ALL) + 1


def test_presets_with_one_toy_model_share_one_unit():
    options = {"seq_len": None, "counter": "both", "shallow": True}
    models = [(n, PRESETS[n].config) for n in ("gpt2", "gpt2-medium", "gpt2-large", "llama2-7b")]
    units = check_units(models, ["flops", "params"], **options)
    flops = [u for u in units if u.check is reg.CHECKS["flops"]]
    # gpt2-medium and gpt2-large shrink to one toy config (same switches), gpt2 (tied, 12 heads) too
    shared = [tuple(name for name, _ in u.models) for u in flops]
    assert ("gpt2", "gpt2-medium", "gpt2-large") in shared and ("llama2-7b",) in shared
    assert all(len(u.models) == 1 for u in units if u.check is reg.CHECKS["params"])  # no share key: one each


# ---- the runner with stand-in checks (tests/verify_stand_ins.py: importable by a worker, no torch)
def _units(check, models, **options):
    return units.plan_units(models, {"slow": check}, {}, {}, options)


def test_results_come_back_in_the_serial_order_from_two_processes(monkeypatch):
    monkeypatch.setattr(runner, "SPAWN_AFTER_SECONDS", 0.0)
    monkeypatch.setattr(runner, "WORKER_START_SECONDS", 0.0)
    models = ALL[:12]
    finished = list(runner.run_units(_units(slow_check, models, pause=0.1), workers=2))
    results = ordered(finished)
    assert [(r.check, r.model) for r in results] == [("slow", name) for name, _ in models]


def test_a_worker_runs_units_and_reports_a_failure_with_its_traceback():
    from collections import deque

    from reference_model.verify.pool import WorkerPool

    pool = WorkerPool(1)
    try:
        deadline = time.monotonic() + 120
        while not pool.idle and time.monotonic() < deadline:  # until the worker says it is ready
            list(pool.collect(timeout=1.0))
        pool.hand_out(deque(_units(slow_check, ALL[:1])))
        got = []
        while pool.busy:
            got += list(pool.collect(timeout=1.0))
        ((_unit, results),) = got
        assert results[0].rows[0][0] != os.getpid()  # it ran in the worker
        pool.hand_out(deque(_units(failing_check, ALL[1:2])))
        with pytest.raises(RuntimeError, match="planted failure on gpt2-medium"):
            while pool.busy:
                list(pool.collect(timeout=1.0))
    finally:
        pool.close()
    assert not any(p.is_alive() for p in pool.processes)


def test_one_process_runs_everything_here_in_order():
    models = ALL[:3]
    finished = list(runner.run_units(_units(slow_check, models), workers=1))
    assert [u.models[0][0] for u, _ in finished] == [name for name, _ in models]
    assert {r.rows[0][0] for _, results in finished for r in results} == {os.getpid()}
