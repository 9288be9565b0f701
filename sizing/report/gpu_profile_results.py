"""The results folder of the planned GPU runs (benchmarks/gpu_profile.sh writes <run>.json and
<run>.md there): each result file read with bounds, checked field by field, and matched
against its planned run, for reports/gpu-profile.md (gpu_profile.py). A file that is not a
`sizing profile --format json` result is a SizingError naming it, never a traceback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sizing.inputs import PLANNED_RUNS, PlannedRun
from sizing.validate import SizingError, require_bool, require_int, require_number, show
from sizing.vocabulary import ATTENTION_CONVENTIONS

MAX_RESULT_FILE_BYTES = 16 * 2**20  # a result file is a few KB: refuse what cannot be one


@dataclass
class Results:
    """What a results folder holds for the planned runs."""

    measured: dict[str, dict] = field(default_factory=dict)  # run name -> its <run>.json
    rejected: dict[str, str] = field(default_factory=dict)  # run name -> why it is not a measurement
    sections: dict[str, str] = field(default_factory=dict)  # run name -> its <run>.md (when any is measured)

    @property
    def any_measured(self) -> bool:
        return bool(self.measured)


def read_results(results_dir: Path | None) -> Results:
    """Every planned run's <run>.json in `results_dir` that measures it as planned, and each
    run's <run>.md. A file that cannot be read or is not a `sizing profile --format json`
    result raises a SizingError naming it."""
    results = Results()
    if results_dir is None:
        return results
    for run in PLANNED_RUNS:
        path = Path(results_dir) / f"{run.name}.json"
        if not _is_file(path):
            continue
        text = _read_text(path)
        try:
            data = check_result(json.loads(text))
        except RecursionError:
            raise SizingError(f"{show(str(path), 300)} is not a result file: its JSON is nested too deeply") from None
        except ValueError as exc:  # JSON syntax, or a SizingError naming the field
            raise SizingError(f"{show(str(path), 300)} is not a `sizing profile --format json` result: {exc}") from None
        problem = mismatch(run, data)
        if problem:
            results.rejected[run.name] = problem
        else:
            results.measured[run.name] = data
    if results.any_measured:
        for run in PLANNED_RUNS:
            md = Path(results_dir) / f"{run.name}.md"
            if _is_file(md):
                results.sections[run.name] = _read_text(md)
    return results


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()  # a FIFO or a device is not a result file
    except OSError as exc:
        raise SizingError(f"cannot read {show(str(path), 300)}: {exc.strerror or exc}") from None


def _read_text(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_RESULT_FILE_BYTES:
            raise SizingError(
                f"{show(str(path), 300)} is larger than a result file can be ({MAX_RESULT_FILE_BYTES // 2**20} MiB)"
            )
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SizingError(f"cannot read {show(str(path), 300)}: {getattr(exc, 'strerror', None) or exc}") from None


def check_result(data: Any) -> dict:
    """`data` when it has every field the page reads, of the right type (finite numbers);
    else a SizingError naming the first bad field."""
    if not isinstance(data, dict):
        raise SizingError("not a JSON object")
    for key in ("environment", "settings", "config", "step_time_s", "mfu", "memory"):
        if not isinstance(data.get(key), dict):
            raise SizingError(f"{key} ({show(data.get(key))}) must be a JSON object")
    require_bool("smoke_test_only", _field(data, "smoke_test_only"))
    for key in ("device", "device_name", "driver", "cuda", "torch"):
        _optional_text(f"environment.{key}", data["environment"].get(key))
    _optional_text("date", data.get("date"))
    require_number("step_time_s.median", _field(data, "step_time_s.median"), 0, exclusive_minimum=True)
    require_number("tokens_per_second", _field(data, "tokens_per_second"), 0)
    for convention in ATTENTION_CONVENTIONS:
        _optional_number(f"mfu.{convention}", _field(data, f"mfu.{convention}"), 0)
    peak = _field(data, "memory.measured_peak_bytes")
    if peak is not None:
        require_int("memory.measured_peak_bytes", peak, 0, 2**53)
    for key in ("measured_vs_predicted", "measured_vs_step_peak_estimate"):
        _optional_number(f"memory.{key}", _field(data, f"memory.{key}"), -1)
    projection = data.get("published_run")
    if projection is not None:
        if not isinstance(projection, dict):
            raise SizingError(f"published_run ({show(projection)}) must be a JSON object or null")
        require_number("published_run.gpu_hours", _field(data, "published_run.gpu_hours"), 0)
        require_number("published_run.mfu", _field(data, "published_run.mfu"), 0)
    return data


def _field(data: dict, dotted: str) -> Any:
    value = data
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            raise SizingError(f"{dotted} is missing")
        value = value[key]
    return value


def _optional_number(name: str, value: Any, minimum: float) -> None:
    if value is not None:
        require_number(name, value, minimum)


def _optional_text(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise SizingError(f"{name} ({show(value)}) must be a string")


def mismatch(run: PlannedRun, data: dict) -> str | None:
    """Why a result is not a measurement of the planned run (None when it is)."""
    if data["smoke_test_only"] or data["environment"].get("device") != "cuda":
        return "not a CUDA measurement (a CPU run is a functional test only)"
    settings = data["settings"]
    want = {
        "seq_len": run.seq_len,
        "micro_batch": run.micro_batch,
        "dtype": run.dtype,
        "attention_impl": run.attention_impl,
        "compile": run.compile,
        "recompute": run.recompute,
    }
    differ = [f"{k} {show(settings.get(k))} (planned {v!r})" for k, v in want.items() if settings.get(k) != v]
    if data["config"] != run.config().to_dict():
        differ.append("the model config")
    return ("measured with other settings than planned: " + ", ".join(differ)) if differ else None
