"""A user's measured training steps (`sizing calibrate`): rows from JSONL or CSV, each checked
field by field, turned into calibration observations (sizing.parallel.calibration).

A row names the model (`preset`, or `config`: a config file), the run (`gpu`, `gpus`, `seq_len`,
`global_batch`, and as far as they differ from the defaults `tp`, `pp`, `cp`, `ep`, `dp`, `zero`,
`fsdp`, `sp`, `v`, `micro_batch`, `precision`, `recompute`, `stack`) and what was measured: one of
`step_seconds`, `tokens_per_second` (all GPUs), `tokens_per_second_per_gpu`, or a `log` line of
torchtitan (`tps: 5,762`, tokens/s per GPU) or Megatron (`elapsed time per iteration (ms): 1234.5`).
`source` groups rows for cross-validation (default: one source per file); `name` labels a row.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

from sizing.parallel.calibration import Observation
from sizing.parallel.layout import ParallelLayout
from sizing.parallel.stepdata import STACKS
from sizing.parallel.stepoptions import StepOptions
from sizing.parallel.steptime import predict_step
from sizing.validate import SizingError

LAYOUT_INTS = ("tp", "pp", "cp", "ep", "dp", "zero", "v", "micro_batch")
MEASURES = ("step_seconds", "tokens_per_second", "tokens_per_second_per_gpu", "log")
TORCHTITAN_TPS = re.compile(r"\btps:\s*([\d,]+(?:\.\d+)?)")
MEGATRON_MS = re.compile(r"elapsed time per iteration \(ms\):\s*([\d.]+)")


@dataclass(frozen=True)
class MeasuredRun:
    name: str
    source: str
    stack: str
    gpu: str
    config: object
    layout: ParallelLayout
    seq_len: int
    recompute: str
    options: StepOptions
    measured_seconds: float

    def observation(self) -> Observation:
        pred = predict_step(self.config, self.layout, self.seq_len, self.gpu, self.recompute, self._zero())
        return Observation(
            self.name,
            self.source,
            self.stack,
            self.gpu,
            self.config.is_moe,
            pred.step_seconds,
            pred.kernel_seconds,
            self.measured_seconds,
        )

    def _zero(self) -> StepOptions:
        return replace(self.options, overhead=0.0)


def read_rows(path: str | Path) -> list[dict]:
    """The rows of a .jsonl / .json (a list) / .csv file, as dicts of strings or values."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    if p.suffix.lower() == ".csv":
        return [dict(r) for r in csv.DictReader(text.splitlines())]
    if p.suffix.lower() == ".json":
        data = json.loads(text)
        return data if isinstance(data, list) else data["rows"]
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise SizingError(f"row {i}: not a JSON object ({exc.msg})") from None
    return out


def _int(row: dict, key: str, default: int | None = None) -> int | None:
    value = row.get(key, "")
    if value in ("", None):
        return default
    try:
        number = int(str(value).replace(",", ""))
    except ValueError:
        raise SizingError(f"{key} ({value!r}) must be a whole number") from None
    if number < 0:
        raise SizingError(f"{key} ({value}) must be >= 0")
    return number


def _float(row: dict, key: str) -> float | None:
    value = row.get(key, "")
    if value in ("", None):
        return None
    try:
        number = float(str(value).replace(",", ""))
    except ValueError:
        raise SizingError(f"{key} ({value!r}) must be a number") from None
    if not number > 0 or number == float("inf"):
        raise SizingError(f"{key} ({value}) must be a positive finite number")
    return number


def _model(row: dict):
    from sizing.inputs import get_preset

    if row.get("preset"):
        return get_preset(str(row["preset"])).config
    if row.get("config"):
        from sizing.inputs.hf import load_config_file

        return load_config_file(str(row["config"]))
    raise SizingError("preset or config is required (a preset name, or a config file)")


def _layout(row: dict, gpus: int, global_batch: int) -> ParallelLayout:
    ints = {k: _int(row, k) for k in LAYOUT_INTS}
    tp, pp, cp = ints["tp"] or 1, ints["pp"] or 1, ints["cp"] or 1
    dp = ints["dp"] or gpus // (tp * pp * cp)
    b = ints["micro_batch"] or 1
    if dp * tp * pp * cp != gpus:
        raise SizingError(f"gpus ({gpus}) must equal dp x tp x pp x cp = {dp} x {tp} x {pp} x {cp}")
    if global_batch % (dp * b):
        raise SizingError(f"global_batch ({global_batch}) must be a multiple of dp x micro_batch ({dp * b})")
    v = ints["v"] or 1
    fsdp = row.get("fsdp") or None
    return ParallelLayout(
        dp=dp,
        tp=tp,
        pp=pp,
        cp=cp,
        ep=ints["ep"] or 1,
        zero=ints["zero"] or 0,
        fsdp=fsdp,
        sequence_parallel=str(row.get("sp", "")).lower() in ("1", "true", "yes"),
        pp_schedule="interleaved" if v > 1 else "1f1b",
        v=v,
        micro_batch=b,
        micro_batches=global_batch // (dp * b),
    )


def _measured_seconds(row: dict, tokens_per_step: int, gpus: int) -> float:
    given = [k for k in MEASURES if row.get(k) not in ("", None)]
    if len(given) != 1:
        raise SizingError(f"give exactly one of {', '.join(MEASURES)} (got {', '.join(given) or 'none'})")
    if given[0] == "log":
        line = str(row["log"])
        if m := MEGATRON_MS.search(line):
            return float(m.group(1)) / 1000
        if m := TORCHTITAN_TPS.search(line):
            return tokens_per_step / (float(m.group(1).replace(",", "")) * gpus)
        raise SizingError("log: no 'elapsed time per iteration (ms): X' (Megatron) or 'tps: X' (torchtitan) in it")
    value = _float(row, given[0])
    if given[0] == "step_seconds":
        return value
    return tokens_per_step / (value if given[0] == "tokens_per_second" else value * gpus)


def measured_run(row: dict, index: int, default_source: str) -> MeasuredRun:
    """One row as a MeasuredRun; SizingError names the field and what is valid."""
    stack_key = str(row.get("stack") or "megatron-core")
    if stack_key not in STACKS:
        raise SizingError(f"stack ({stack_key!r}) must be one of: {', '.join(STACKS)}")
    for key in ("gpu", "gpus", "seq_len", "global_batch"):
        if row.get(key) in ("", None):
            raise SizingError(f"{key} is required")
    gpus, seq_len, global_batch = _int(row, "gpus"), _int(row, "seq_len"), _int(row, "global_batch")
    cfg = _model(row)
    layout = _layout(row, gpus, global_batch)
    layout.check_model(cfg, seq_len)
    recompute = str(row.get("recompute") or "none")
    if recompute not in ("none", "selective", "full"):
        raise SizingError(f"recompute ({recompute!r}) must be one of: none, selective, full")
    precision = str(row.get("precision") or "bf16")
    if precision not in ("bf16", "fp16", "fp8"):
        raise SizingError(f"precision ({precision!r}) must be one of: bf16, fp16, fp8")
    opts = StepOptions(stack=stack_key, precision="fp8" if precision == "fp8" else "bf16")
    seconds = _measured_seconds(row, global_batch * seq_len, gpus)
    name = str(row.get("name") or f"row {index}")
    run = MeasuredRun(
        name, str(row.get("source") or default_source), stack_key, str(row["gpu"]), cfg, layout, seq_len, recompute,
        opts, seconds,
    )  # fmt: skip
    run.observation()  # the GPU and precision are checked here, inside the row's error
    return run


def measured_runs(path: str | Path) -> tuple[list[MeasuredRun], list[str]]:
    """(the good rows, one line per bad row naming it, the field and what is valid)."""
    runs, errors, names = [], [], set()
    for i, row in enumerate(read_rows(path), 1):
        if not isinstance(row, dict):
            errors.append(f"row {i}: must be an object of fields")
            continue
        try:
            run = measured_run(row, i, Path(path).name)
        except SizingError as exc:
            errors.append(f"row {i}: {exc}")
            continue
        if run.name in names:  # names key the cross-validation: keep them unique
            run = replace(run, name=f"{run.name} (row {i})")
        names.add(run.name)
        runs.append(run)
    return runs, errors
