"""`reports/gpu-profile.md`: the planned GPU runs (sizing/planned_runs.py) with sizing's
predictions (exact FLOPs, the memory formula) and, from a results folder written by
benchmarks/gpu_profile.sh, the measured figures; every measured column reads *not yet
measured* until then. Deterministic without results (no dates, no machine names).

Written by `sizing profile --plan-report PATH [--results DIR]`; needs no torch.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..conventions import model_training_flops
from ..hardware import get_gpu
from ..memory.step_peak import model_states_bytes, training_memory_in_dtype
from ..params import total_params
from ..planned_runs import PLANNED_RUNS, SCRIPT, TARGET_MFU, PlannedRun
from ..presets import get_preset
from ..render.tables import table
from ..training import gpu_hours
from ..units import format_gib, format_int, format_si
from ..validate import SizingError, require_bool, require_int, require_number, show
from ..vocabulary import ATTENTION_CONVENTIONS, DEFAULT_MFU

REPORT_PATH = "reports/gpu-profile.md"
PEAK_GPU = "h200"  # its dense bf16 peak is H100 SXM's (the same GH100 compute)
MAX_RESULT_FILE_BYTES = 16 * 2**20  # a result file is a few KB: refuse what cannot be one


# ---------------------------------------------------------------- the results folder
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


# ---------------------------------------------------------------- the page
def plan_report_markdown(results_dir: Path | None = None) -> str:
    """reports/gpu-profile.md: the planned runs with sizing's predictions; the measured figures
    from `results_dir` (<run>.json and <run>.md written by benchmarks/gpu_profile.sh), or
    NOT YET MEASURED."""
    results = read_results(results_dir)
    peak = get_gpu(PEAK_GPU).peak_flops_per_second("bf16")
    parts = _introduction(results)
    parts += _runs_section()
    parts += _step_section(results, peak)
    parts += _memory_section(results)
    parts += _gpu_hours_section(results, peak)
    if results.any_measured:
        parts.append("## Each run")
        for run in PLANNED_RUNS:
            section = results.sections.get(run.name)
            parts.append(
                _demote(section)
                if section is not None
                else f"### {run.name}\n\nno result (the run failed or ran out of time; see the script log)"
            )
    return "\n\n".join(p.strip("\n") for p in parts) + "\n"


def _introduction(results: Results) -> list[str]:
    parts = [
        f"<!-- Generated by `sizing profile --plan-report {REPORT_PATH}"
        + (" --results DIR`" if results.any_measured else "`")
        + f"; the measurements come from `{SCRIPT}` on a CUDA GPU. -->",
        "# GPU profile of the reference model",
    ]
    if results.any_measured:
        first = next(iter(results.measured.values()))
        env = first["environment"]
        parts.append(
            f"**Measured** on {env.get('device_name') or '?'} ({first.get('date') or '?'}; driver "
            f"{env.get('driver') or 'unknown'}, CUDA {env.get('cuda') or '?'}, torch {env.get('torch') or '?'}) by "
            f"`{SCRIPT}`. Runs without a result below did not finish (see the script's log)."
        )
    if results.rejected:
        parts.append("\n".join(f"- `{name}`: result left out: {why}" for name, why in results.rejected.items()))
    else:
        parts.append(
            "**Status: NOT YET MEASURED.** No CUDA GPU was available in the session that built `sizing profile`, so "
            "this page holds no measured figure: the settings of the planned runs and what sizing predicts for them "
            "(exact FLOPs, the memory formula) are below, and every measured column reads *not yet measured*. "
            "CPU timings are a functional test of the code path only and are not reported here."
        )
    parts.append(
        f"To measure: on a machine with one CUDA GPU run `bash {SCRIPT}` (under 8 minutes; see "
        f"benchmarks/README.md); it runs the CUDA checks of the FLOP and memory formulas (`pytest -m gpu`), "
        f"profiles each run below with `sizing profile --planned NAME`, and writes this page with the measured "
        f"figures to `$OUT/gpu-profile.md` (`sizing profile --plan-report {REPORT_PATH} --results $OUT`); "
        f"commit it as {REPORT_PATH}."
    )
    parts.append(
        f"Target (issue 7): `gpt-1.3b` at **at least {TARGET_MFU:.0%} MFU**, full-attention convention, on an "
        "H100/H200-class GPU. MFU = model FLOPs (forward + backward matmuls, sizing.flops) per second / the GPU's "
        "dense peak for the dtype (sizing.hardware); `full` counts T keys per query (PaLM, nanoGPT, "
        "FlopCounterMode), `causal` the T(T+1)/2 pairs a causal kernel needs. Precision: the model is built in "
        "bf16 (weights, gradients and AdamW states; sizing.memory's pure `bf16` policy, 8 bytes per parameter), "
        "fused AdamW, SDPA (flash) attention."
    )
    return parts


def _runs_section() -> list[str]:
    rows = [
        [
            run.name,
            f"{run.preset} + {', '.join(run.overrides)}",
            format_int(total_params(run.config())),
            format_int(run.seq_len),
            format_int(run.micro_batch),
            format_int(run.seq_len * run.micro_batch),
            run.dtype,
            run.attention_impl,
            "yes" if run.compile else "no",
            run.recompute,
            f"{run.warmup} + {run.steps}",
        ]
        for run in PLANNED_RUNS
    ]
    headers = [
        "run",
        "model",
        "params",
        "T",
        "b",
        "tokens/step",
        "dtype",
        "attention",
        "compile",
        "recompute",
        "warm-up + timed",
    ]
    runs = "\n".join(
        f"- `{run.name}`: {run.purpose}. `sizing profile {shlex.join(run.args())}`" for run in PLANNED_RUNS
    )
    return ["## Planned runs", table(headers, rows, "markdown"), runs]


def _not_measured(results: Results, n: int) -> list[str]:
    """The measured cells of a run without a measurement."""
    return ["no result" if results.any_measured else "not yet measured"] * n


def _step_section(results: Results, peak: float) -> list[str]:
    rows = []
    for run in PLANNED_RUNS:
        tokens_per_step = run.seq_len * run.micro_batch
        step_flops = {
            c: model_training_flops(run.config(), run.seq_len, tokens_per_step, c) for c in ATTENTION_CONVENTIONS
        }
        target_step_seconds = step_flops["full"] / (peak * TARGET_MFU)
        m = results.measured.get(run.name)
        got = (
            _not_measured(results, 4)
            if m is None
            else [
                f"{m['step_time_s']['median'] * 1e3:,.1f} ms",
                f"{m['tokens_per_second']:,.0f}",
                *(_percent(m["mfu"][c]) for c in ATTENTION_CONVENTIONS),
            ]
        )
        rows.append(
            [
                run.name,
                format_si(step_flops["full"]),
                format_si(step_flops["causal"]),
                f"{target_step_seconds * 1e3:,.1f} ms",
                f"{tokens_per_step / target_step_seconds:,.0f}",
                *got,
            ]
        )
    headers = [
        "run",
        "model FLOPs/step (full)",
        "(causal)",
        f"step at {TARGET_MFU:.0%} MFU",
        f"tokens/s at {TARGET_MFU:.0%}",
        "measured step (median)",
        "measured tokens/s",
        "MFU (full)",
        "MFU (causal)",
    ]
    note = (
        f"Predicted step times divide the model FLOPs per step by {TARGET_MFU:.0%} of the dense bf16 peak "
        f"of an H100 SXM / H200 ({get_gpu(PEAK_GPU).peak_tflops['bf16']:g} TFLOP/s, sizing.hardware)."
    )
    return ["## Step time and MFU", table(headers, rows, "markdown"), note]


def _memory_section(results: Results) -> list[str]:
    rows = []
    for run in PLANNED_RUNS:
        mem = training_memory_in_dtype(
            run.config(), run.seq_len, run.micro_batch, run.dtype, run.attention_impl, run.recompute, PEAK_GPU
        )
        m = results.measured.get(run.name)
        if m is None:
            got = _not_measured(results, 3)
        else:
            mm = m["memory"]
            got = [
                format_gib(mm["measured_peak_bytes"]) if mm["measured_peak_bytes"] is not None else "n/a",
                _signed_percent(mm["measured_vs_predicted"]),
                _signed_percent(mm["measured_vs_step_peak_estimate"]),
            ]
        rows.append(
            [
                run.name,
                format_gib(model_states_bytes(mem)),
                format_gib(mem.per_gpu["activations_bytes"]),
                format_gib(mem.per_gpu["transient_bytes"]),
                format_gib(mem.per_gpu_bytes),
                *got,
            ]
        )
    headers = [
        "run",
        "weights + grads + AdamW",
        "activations",
        "transient",
        "formula per GPU",
        "measured peak (max_memory_allocated)",
        "vs formula",
        "vs eager step-peak estimate",
    ]
    note = (
        "The formula (sizing.memory, pure bf16 policy, no ZeRO) sums model states, the activations an "
        "eager step saves and the logits with their gradient. An eager step actually peaks at the start of "
        "the loss backward, before any gradient exists, holding one more fp32 b·T·V tensor than the "
        "formula counts: sizing/memory/step_peak.py `step_peak_estimate_bytes`, which matches torch's "
        "MemTracker on CPU to 0.2% and is checked against max_memory_allocated by tests/test_profile_gpu.py. "
        "Compiled runs save inductor's tensors instead, usually fewer."
    )
    return ["## Peak memory", table(headers, rows, "markdown"), note]


def _gpu_hours_section(results: Results, peak: float) -> list[str]:
    rows = []
    for run in PLANNED_RUNS:
        p = get_preset(run.preset)
        if not p.training_tokens:
            rows.append([run.name, p.name, "no published tokens", "", "", "", ""])
            continue
        flops = model_training_flops(p.config, p.context, p.training_tokens)
        m = results.measured.get(run.name)
        if m is None:
            got = _not_measured(results, 1)[0]
        else:
            pr = m.get("published_run")
            got = "n/a" if not pr else f"{pr['gpu_hours']:,.0f} (MFU {pr['mfu'] * 100:.1f}%)"
        rows.append(
            [
                run.name,
                p.name,
                f"{format_si(p.training_tokens)} at T {format_int(p.context)}",
                f"{flops:.3e}",
                f"{gpu_hours(flops, peak, DEFAULT_MFU):,.0f}",
                f"{gpu_hours(flops, peak, TARGET_MFU):,.0f}",
                got,
            ]
        )
    headers = [
        "run",
        "preset",
        "tokens",
        "model FLOPs",
        f"at MFU {DEFAULT_MFU:.0%} (default)",
        f"at MFU {TARGET_MFU:.0%}",
        "at the measured MFU",
    ]
    note = (
        "The measured MFU comes from the profiled shape (scaled with --set where the preset itself is "
        "larger) and is applied to the preset's own config, context and published tokens."
    )
    return ["## GPU-hours of the published runs (H100 SXM / H200, bf16)", table(headers, rows, "markdown"), note]


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _signed_percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f}%"


def _demote(markdown: str) -> str:
    """One more '#' on every heading (a run's section nests under the page's headings)."""
    return "\n".join("#" + line if line.startswith("#") else line for line in markdown.splitlines())
