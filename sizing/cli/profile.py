"""`sizing profile`: time training steps of the PyTorch reference model on a GPU and set step
time, achieved TFLOP/s, MFU and peak memory beside sizing's predictions (issue 7).

The measuring lives in reference_model/profile/run.py; torch is imported only inside the command
body. Without CUDA the command exits 2 with one line, unless --device cpu asks for a tiny
timing run (a functional test, never a performance figure).

`--planned NAME` takes the model and settings of one of the planned GPU runs
(sizing/inputs/planned_runs.py); `--plan-report PATH [--results DIR]` writes their report page
(sizing/report/gpu_profile.py).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from sizing.cli.common import UserError, resolve_model
from sizing.cli.option_layer import model_options, option
from sizing.inputs import (
    GIB,
    SCRIPT,
    PlannedRun,
    ProfileError,
    ProfileSettings,
    model_args,
    planned_run,
    settings_args,
)
from sizing.memory import training_memory_in_dtype
from sizing.report import plan_report_markdown, write_bytes_atomic
from sizing.validate import SizingError
from sizing.vocabulary import ATTENTION_IMPL_ALIASES, TRAINING_DTYPES

FORMATS = ("table", "json", "markdown")
# sizing's vocabulary calls the fused kernel "flash" (ATTENTION_IMPL_ALIASES: sdpa -> flash); the
# reference model calls it "sdpa": accept both, as the same thing
FLASH_IS_SDPA = {canonical: name for name, canonical in ATTENTION_IMPL_ALIASES.items()}
NO_CUDA = (
    "no CUDA device: `sizing profile` times training steps on a GPU; --device cpu times a tiny run "
    "for testing (not a performance figure)"
)
INSTALL_HINT = "sizing profile needs torch: pip install 'transformer-sizing[verify]'"
CPU_LIMIT_BYTES = 4 * GIB  # --device cpu is for tiny test runs: refuse what the formula puts above this


@click.command()
@model_options
@option("seq_len", help="Tokens per sequence (default: the preset's context).")
@option("micro_batch", help="Sequences per step (default 1).")
@option("steps")
@option("warmup")
@option("dtype", only=TRAINING_DTYPES, help="Weights, gradients, AdamW states (default bf16).")
@option(
    "attention_impl",
    default=None,
    help="sdpa (= flash): torch's fused kernel (flash on CUDA); math: QK^T, softmax, AV (default sdpa).",
)
@option("compile", default=None)
@option(
    "recompute", default=None, help="none (default), selective (checkpoint the attention core) or full (every block)."
)
@option("device")
@option(
    "peak_tflops",
    help="Peak dense TFLOP/s for the MFU (default: sizing's GPU table for torch.cuda.get_device_name() and --dtype).",
)
@option("planned")
@option("out", help="Also write the markdown section to PATH (atomically).")
@option("format", only=FORMATS)
@option("plan_report")
@option("results", help=f"With --plan-report: folder of <run>.json / <run>.md from {SCRIPT}.")
def profile(preset, config_path, overrides, device, peak_tflops, planned, out, fmt, plan_report, results, **run):
    """Time training steps of the reference model; step time, TFLOP/s, MFU and peak memory
    beside the predictions (needs torch; a CUDA GPU unless --device cpu).

    Builds the model in --dtype, runs --warmup steps, then times --steps steps of zero_grad,
    forward, backward and AdamW (fused on CUDA) with CUDA events, and reports the median.

    \b
    Example:
      sizing profile --preset gpt3-1.3b --seq-len 2048 --micro-batch 8 --compile
      sizing profile --planned gpt-1.3b --out gpu_out/gpt-1.3b.md --format json
      sizing profile --preset gpt2 --set n_layers=2 --seq-len 64 --steps 2 --device cpu
      sizing profile --plan-report reports/gpu-profile.md [--results gpu_out]
    """
    if plan_report is not None or results is not None:
        _plan_report_only(plan_report, results, bool(preset or config_path or overrides or planned))
        return
    plan = planned_run(planned) if planned else None
    if plan is not None:
        if preset or config_path:
            raise UserError("--planned sets the model; give --set to change it, not --preset or --config")
        preset, overrides = plan.preset, plan.overrides + tuple(overrides)
    model = resolve_model(preset, config_path, overrides)
    given = {("compile" if key == "use_compile" else key): value for key, value in run.items()}
    given["attention_impl"] = FLASH_IS_SDPA.get(given["attention_impl"], given["attention_impl"])
    settings = _checked_settings(model, plan, given, device, peak_tflops)
    if device == "cpu":
        _refuse_big_cpu_run(model.config, settings)
    command = shlex.join(
        ["sizing", "profile"]
        + model_args(preset, config_path, overrides)
        + settings_args(settings)
        + ["--device", device]
        + (["--peak-tflops", f"{peak_tflops:g}"] if peak_tflops else [])
    )
    _profile(model, settings, device, command, out, fmt)


def _plan_report_only(plan_report: str | None, results: str | None, model_given: bool) -> None:
    """--plan-report writes the page of planned runs and nothing else; --results goes with it."""
    if plan_report is None:
        raise UserError("--results goes with --plan-report")
    if model_given:
        raise UserError("--plan-report writes the page of planned runs; give it without a model or --planned")
    _write_plan_report(plan_report, results)


def _profile(model, settings: ProfileSettings, device: str, command: str, out: str | None, fmt: str) -> None:
    """Time the run (reference_model/profile/run.py; torch imported here, never at module level) and
    print it, writing its markdown section to `out` when asked."""
    try:
        import torch
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    if device == "cuda" and not torch.cuda.is_available():
        raise UserError(NO_CUDA)
    from reference_model.profile import profile_training  # imports torch

    try:
        result = profile_training(model.config, settings, name=model.name, preset=model.preset, command=command)
    except ProfileError as exc:
        raise UserError(str(exc)) from None
    if out:
        _write(out, result.render_markdown())
        click.echo(f"wrote {out}", err=True)
    click.echo(result.render(fmt), nl=False)


def _write_plan_report(path: str, results: str | None) -> None:
    try:
        text = plan_report_markdown(Path(results) if results else None)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    _write(path, text)
    click.echo(f"wrote {path}", err=True)


def _checked_settings(model, plan: PlannedRun | None, given: dict, device: str, peak_tflops) -> ProfileSettings:
    """The run's settings (command line, else the planned run, else the defaults), checked
    against the model; T defaults to a preset's context."""
    if given["seq_len"] is None and plan is None:
        if model.preset is None:
            raise UserError("--seq-len is needed for a model that is not a preset (e.g. --seq-len 2048)")
        given = {**given, "seq_len": model.preset.context}
    try:
        settings = ProfileSettings(**_settings(plan, given), device=device, peak_tflops=peak_tflops)
        settings.check_model(model.config)
    except ProfileError as exc:
        raise UserError(str(exc)) from None
    return settings


def _settings(plan: PlannedRun | None, given: dict) -> dict:
    """Each setting from the command line, else from the planned run, else ProfileSettings' default."""
    out = {key: value if value is not None else getattr(plan, key, None) for key, value in given.items()}
    return {key: value for key, value in out.items() if value is not None}


def _refuse_big_cpu_run(cfg, settings: ProfileSettings) -> None:
    need = training_memory_in_dtype(
        cfg, settings.seq_len, settings.micro_batch, settings.dtype, settings.attention_impl, settings.recompute
    ).per_gpu_bytes
    if need > CPU_LIMIT_BYTES:
        raise UserError(
            f"--device cpu is for tiny test runs, and this one needs {need / GIB:,.1f} GiB by the "
            f"memory formula (limit {CPU_LIMIT_BYTES // GIB} GiB): shrink it with --set, e.g. "
            "--set n_layers=2 --set d_model=64 --set n_heads=4 --set d_ff=256"
        )


def _write(path: str, text: str) -> None:
    try:
        write_bytes_atomic(Path(path), text.encode("utf-8"))
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
