"""`sizing profile`: time training steps of the PyTorch reference model on a GPU and set step
time, achieved TFLOP/s, MFU and peak memory beside sizing's predictions (issue 7).

The measuring lives in reference_model/profile.py; torch is imported only inside the command
body. Without CUDA the command exits 2 with one line, unless --device cpu asks for a tiny
timing run (a functional test, never a performance figure).

The planned GPU runs (PLANNED_RUNS) are data here, in pure Python: `--planned NAME` takes a
run's model and settings, benchmarks/gpu_profile.sh runs each of them, and
`--plan-report PATH [--results DIR]` writes the report page: before any GPU run, the settings
with the predicted FLOPs and memory (exact, from sizing) and every measured figure marked
NOT YET MEASURED; with --results, the measured figures from DIR/<run>.json and DIR/<run>.md.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

import click

from .common import UserError, model_options, resolve_model
from ..units import GIB

FORMATS = ("table", "json", "markdown")
DTYPES = ("bf16", "fp16", "fp32")
ATTENTION_IMPLS = ("sdpa", "math")
RECOMPUTE = ("none", "selective", "full")
DEVICES = ("cuda", "cpu")
DEFAULTS = dict(micro_batch=1, steps=10, warmup=3, dtype="bf16", attention_impl="sdpa", compile=False,
                recompute="none")
NO_CUDA = ("no CUDA device: `sizing profile` times training steps on a GPU; --device cpu times a tiny run "
           "for testing (not a performance figure)")
INSTALL_HINT = "sizing profile needs torch: pip install 'transformer-sizing[verify]'"
REPORT_PATH = "reports/gpu-profile.md"
SCRIPT = "benchmarks/gpu_profile.sh"
CPU_LIMIT_BYTES = 4 * GIB  # --device cpu is for tiny test runs: refuse what the formula puts above this
TARGET_MFU = 0.5  # issue 7: >= 50% MFU (full convention) for the ~1.3B GPT at T 2048 on H100/H200


# ---------------------------------------------------------------- the planned GPU runs
@dataclass(frozen=True)
class PlannedRun:
    name: str
    preset: str
    overrides: tuple[str, ...]
    seq_len: int
    micro_batch: int
    steps: int
    warmup: int
    compile: bool
    purpose: str
    dtype: str = "bf16"
    attention_impl: str = "sdpa"
    recompute: str = "none"

    def args(self) -> list[str]:
        """The `sizing profile` options that reproduce this run."""
        out = ["--preset", self.preset]
        for item in self.overrides:
            out += ["--set", item]
        out += ["--seq-len", str(self.seq_len), "--micro-batch", str(self.micro_batch), "--steps", str(self.steps),
                "--warmup", str(self.warmup), "--dtype", self.dtype, "--attention-impl", self.attention_impl]
        if self.compile:
            out.append("--compile")
        out += ["--recompute", self.recompute]
        return out


_PAD = "vocab_pad_multiple=64"  # 50257 -> 50304 rows (nanoGPT): tensor-core friendly lm_head; FLOPs count the padded V
PLANNED_RUNS: tuple[PlannedRun, ...] = (
    PlannedRun("gpt-1.3b", "gpt3-1.3b", (_PAD,), 2048, 8, 10, 3, True,
               "issue 7's target: GPT-2-style ~1.3B (24 layers, d 2048, 16 heads of 128), T 2048, bf16, SDPA "
               "(flash), fused AdamW, torch.compile: at least 50% MFU (full convention) on an H100/H200"),
    PlannedRun("llama-1b-gqa", "llama3-8b",
               ("d_model=2048", "n_layers=16", "n_heads=32", "n_kv_heads=8", "d_ff=8192", "tied_embeddings=true"),
               2048, 8, 10, 3, True,
               "Llama-3.2-1B shape (SwiGLU, RMSNorm, RoPE, GQA 32/8 heads, vocab 128,256, tied), compiled; the "
               "GPU-hours projection applies its MFU to llama3-8b's published run"),
    PlannedRun("gpt2-124m", "gpt2", (_PAD,), 1024, 16, 20, 3, False,
               "nanoGPT's GPT-2 small at T 1024, eager (no compile): the eager baseline, and the run whose peak "
               "memory the eager formula describes"),
)


def planned_run(name: str) -> PlannedRun:
    for run in PLANNED_RUNS:
        if run.name == name:
            return run
    raise UserError(f"--planned ({name}) must be one of: {', '.join(r.name for r in PLANNED_RUNS)}")


# ---------------------------------------------------------------- option types (one-line errors)
class _Choice(click.ParamType):
    def __init__(self, option: str, choices):
        self.option, self.choices = option, tuple(choices)
        self.name = "|".join(self.choices)

    def get_metavar(self, param, ctx=None) -> str:
        return "[" + self.name + "]"

    def convert(self, value, param, ctx):
        text = str(value).strip().lower()
        if text in self.choices:
            return text
        raise UserError(f"{self.option} ({value}) must be one of: {', '.join(self.choices)}")


class _Number(click.ParamType):
    def __init__(self, option: str, kind=int, minimum: float = 1):
        self.option, self.kind, self.minimum = option, kind, minimum
        self.name = "integer" if kind is int else "number"

    def convert(self, value, param, ctx):
        try:
            number = self.kind(str(value).strip().replace("_", ""))
        except ValueError:
            number = None
        if number is None or number < self.minimum or (self.kind is float and number <= 0):
            what = (f"an integer >= {self.minimum}" if self.kind is int else "a positive number")
            raise UserError(f"{self.option} ({value}) must be {what}")
        return number


# ---------------------------------------------------------------- the command
@click.command()
@model_options
@click.option("--seq-len", "-T", type=_Number("--seq-len"), help="Tokens per sequence (default: the preset's context).")
@click.option("--micro-batch", "-b", type=_Number("--micro-batch"), help="Sequences per step (default 1).")
@click.option("--steps", type=_Number("--steps"), help="Timed steps; the median is reported (default 10).")
@click.option("--warmup", type=_Number("--warmup", minimum=0), help="Untimed steps first (default 3).")
@click.option("--dtype", type=_Choice("--dtype", DTYPES), help="Weights, gradients, AdamW states (default bf16).")
@click.option("--attention-impl", type=_Choice("--attention-impl", ATTENTION_IMPLS),
              help="sdpa: torch's fused kernel (flash on CUDA); math: QK^T, softmax, AV (default sdpa).")
@click.option("--compile/--no-compile", "use_compile", default=None, help="torch.compile the model (default no).")
@click.option("--recompute", type=_Choice("--recompute", RECOMPUTE), help="none (default), selective (checkpoint the attention core) or full (every block).")
@click.option("--device", type=_Choice("--device", DEVICES), default="cuda", show_default=True,
              help="cpu: a tiny timing run for testing, not a performance figure.")
@click.option("--peak-tflops", type=_Number("--peak-tflops", float), help="Peak dense TFLOP/s for the MFU "
              "(default: sizing's GPU table for torch.cuda.get_device_name() and --dtype).")
@click.option("--planned", metavar="NAME", help="One of the planned GPU runs (see --plan-report): its model and "
              "settings; explicit options override them.")
@click.option("--out", metavar="PATH", help="Also write the markdown section to PATH (atomically).")
@click.option("--format", "fmt", type=_Choice("--format", FORMATS), default="table", show_default=True)
@click.option("--plan-report", metavar="PATH", help="Write the GPU profile report page (planned runs, predictions, "
              "measured figures from --results) to PATH and exit; needs no torch.")
@click.option("--results", metavar="DIR", help="With --plan-report: folder of <run>.json / <run>.md from "
              f"{SCRIPT}.")
def profile(preset, config_path, overrides, seq_len, micro_batch, steps, warmup, dtype, attention_impl, use_compile,
            recompute, device, peak_tflops, planned, out, fmt, plan_report, results):
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
    if plan_report is not None:
        if preset or config_path or overrides or planned:
            raise UserError("--plan-report writes the page of planned runs; give it without a model or --planned")
        text = plan_report_markdown(Path(results) if results else None)
        _write(plan_report, text)
        click.echo(f"wrote {plan_report}", err=True)
        return
    if results is not None:
        raise UserError("--results goes with --plan-report")

    plan = planned_run(planned) if planned else None
    if plan is not None:
        if preset or config_path:
            raise UserError("--planned sets the model; give --set to change it, not --preset or --config")
        preset, overrides = plan.preset, plan.overrides + tuple(overrides)
    model = resolve_model(preset, config_path, overrides)
    settings = _settings(plan, seq_len=seq_len, micro_batch=micro_batch, steps=steps, warmup=warmup, dtype=dtype,
                         attention_impl=attention_impl, compile=use_compile, recompute=recompute)
    if settings["seq_len"] is None:
        if model.preset is None:
            raise UserError("--seq-len is needed for a model that is not a preset (e.g. --seq-len 2048)")
        settings["seq_len"] = model.preset.context
    if settings["compile"] and settings["warmup"] < 1:
        raise UserError("--compile needs --warmup 1 or more (the first step compiles)")
    cfg = model.config
    if cfg.position == "learned" and settings["seq_len"] > cfg.max_positions:
        raise UserError(f"--seq-len ({settings['seq_len']}) exceeds the learned position table (max_positions "
                        f"{cfg.max_positions}); use a shorter --seq-len or --set max_positions={settings['seq_len']}")

    if device == "cpu":
        from ..memory import training_memory

        need = training_memory(cfg, settings["seq_len"], settings["micro_batch"],
                               "fp32" if settings["dtype"] == "fp32" else "bf16", "adamw", 0, 1, settings["recompute"],
                               "flash" if settings["attention_impl"] == "sdpa" else "math").per_gpu_bytes
        if need > CPU_LIMIT_BYTES:
            raise UserError(f"--device cpu is for tiny test runs, and this one needs {need / GIB:,.1f} GiB by the "
                            f"memory formula (limit {CPU_LIMIT_BYTES // GIB} GiB): shrink it with --set, e.g. "
                            "--set n_layers=2 --set d_model=64 --set n_heads=4 --set d_ff=256")
    try:
        import torch
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    if device == "cuda" and not torch.cuda.is_available():
        raise UserError(NO_CUDA)
    from reference_model.profile import ProfileError, profile_training

    command = shlex.join(["sizing", "profile"] + _model_args(preset, config_path, overrides) + _settings_args(settings)
                         + ["--device", device] + (["--peak-tflops", f"{peak_tflops:g}"] if peak_tflops else []))
    try:
        result = profile_training(cfg, settings["seq_len"], settings["micro_batch"], settings["steps"],
                                  settings["warmup"], settings["dtype"], settings["attention_impl"],
                                  settings["compile"], settings["recompute"], device, peak_tflops,
                                  name=model.name, preset=model.preset, command=command)
    except ProfileError as exc:
        raise UserError(str(exc)) from None
    if out:
        _write(out, result.render_markdown())
        click.echo(f"wrote {out}", err=True)
    click.echo(result.render(fmt), nl=False)


def _settings(plan: PlannedRun | None, **given) -> dict:
    out = {}
    for key, value in given.items():
        if value is not None:
            out[key] = value
        elif plan is not None:
            out[key] = getattr(plan, key)
        else:
            out[key] = DEFAULTS.get(key)
    return out


def _model_args(preset, config_path, overrides) -> list[str]:
    out = ["--preset", preset] if preset else ["--config", config_path]
    for item in overrides:
        out += ["--set", item]
    return out


def _settings_args(s: dict) -> list[str]:
    out = ["--seq-len", str(s["seq_len"]), "--micro-batch", str(s["micro_batch"]), "--steps", str(s["steps"]),
           "--warmup", str(s["warmup"]), "--dtype", s["dtype"], "--attention-impl", s["attention_impl"]]
    if s["compile"]:
        out.append("--compile")
    return out + ["--recompute", s["recompute"]]


def _write(path: str, text: str) -> None:
    from ..report.files import write_bytes_atomic

    try:
        write_bytes_atomic(Path(path), text.encode("utf-8"))
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


# ---------------------------------------------------------------- the report page
def plan_report_markdown(results_dir: Path | None = None) -> str:
    """reports/gpu-profile.md: the planned runs with sizing's predictions; the measured figures
    from `results_dir` (<run>.json and <run>.md written by benchmarks/gpu_profile.sh), or
    NOT YET MEASURED. Deterministic without results (no dates, no machine names)."""
    from ..flops import flop_breakdown
    from ..hardware import get_gpu
    from ..memory import training_memory
    from ..params import total_params
    from ..presets import get_preset
    from ..render.tables import table
    from ..training import gpu_hours, training_flops
    from ..units import format_gib, format_int, format_si

    measured, rejected = {}, {}
    if results_dir is not None:
        for run in PLANNED_RUNS:
            path = Path(results_dir) / f"{run.name}.json"
            if path.is_file():
                try:
                    data = json.loads(path.read_text())
                except (OSError, ValueError) as exc:
                    raise UserError(f"cannot read {path}: {exc}") from None
                problem = _mismatch(run, data)
                if problem:
                    rejected[run.name] = problem
                else:
                    measured[run.name] = data
    any_measured = bool(measured)
    h200 = get_gpu("h200")
    peak = h200.peak_flops_per_second("bf16")  # = H100 SXM's dense bf16 (same GH100 compute)

    parts = [
        f"<!-- Generated by `sizing profile --plan-report {REPORT_PATH}"
        + (" --results DIR`" if any_measured else "`") + f"; the measurements come from `{SCRIPT}` on a CUDA GPU. -->",
        "# GPU profile of the reference model",
    ]
    if any_measured:
        first = next(iter(measured.values()))
        env = first.get("environment", {})
        parts.append(
            f"**Measured** on {env.get('device_name', '?')} ({first.get('date', '?')}; driver "
            f"{env.get('driver') or 'unknown'}, CUDA {env.get('cuda') or '?'}, torch {env.get('torch', '?')}) by "
            f"`{SCRIPT}`. Runs without a result below did not finish (see the script's log)."
        )
    if rejected:
        parts.append("\n".join(f"- `{name}`: result left out: {why}" for name, why in rejected.items()))
    else:
        parts.append(
            "**Status: NOT YET MEASURED.** No CUDA GPU was available in the session that built `sizing profile`, so "
            "this page holds no measured figure: the settings of the planned runs and what sizing predicts for them "
            "(exact FLOPs, the memory formula) are below, and every measured column reads *not yet measured*. "
            "CPU timings are a functional test of the code path only and are not reported here.")
    parts.append(
        f"To measure: on a machine with one CUDA GPU run `bash {SCRIPT}` (under 8 minutes; see "
        f"benchmarks/README.md); it runs the CUDA checks of the FLOP and memory formulas (`pytest -m gpu`), "
        f"profiles each run below with `sizing profile --planned NAME`, and writes this page with the measured "
        f"figures to `$OUT/gpu-profile.md` (`sizing profile --plan-report {REPORT_PATH} --results $OUT`); "
        f"commit it as {REPORT_PATH}.")
    parts.append(
        f"Target (issue 7): `gpt-1.3b` at **at least {TARGET_MFU:.0%} MFU**, full-attention convention, on an "
        "H100/H200-class GPU. MFU = model FLOPs (forward + backward matmuls, sizing.flops) per second / the GPU's "
        "dense peak for the dtype (sizing.hardware); `full` counts T keys per query (PaLM, nanoGPT, "
        "FlopCounterMode), `causal` the T(T+1)/2 pairs a causal kernel needs. Precision: the model is built in "
        "bf16 (weights, gradients and AdamW states; sizing.memory's pure `bf16` policy, 8 bytes per parameter), "
        "fused AdamW, SDPA (flash) attention.")

    # ---- the runs
    rows = []
    for run in PLANNED_RUNS:
        cfg = _planned_config(run)
        rows.append([run.name, f"{run.preset} + {', '.join(run.overrides)}", format_int(total_params(cfg)),
                     format_int(run.seq_len), format_int(run.micro_batch), format_int(run.seq_len * run.micro_batch),
                     run.dtype, run.attention_impl, "yes" if run.compile else "no", run.recompute,
                     f"{run.warmup} + {run.steps}"])
    parts += ["## Planned runs", table(["run", "model", "params", "T", "b", "tokens/step", "dtype", "attention",
                                        "compile", "recompute", "warm-up + timed"], rows, "markdown")]
    parts.append("\n".join(f"- `{run.name}`: {run.purpose}. `sizing profile {shlex.join(run.args())}`"
                           for run in PLANNED_RUNS))

    # ---- predictions against measurements
    rows = []
    for run in PLANNED_RUNS:
        cfg = _planned_config(run)
        fb = {c: flop_breakdown(cfg, run.seq_len, c) for c in ("full", "causal")}
        step = {c: run.micro_batch * (fb[c].forward + fb[c].backward) for c in fb}
        m = measured.get(run.name)
        if m is None:
            got = ["not yet measured"] * 4 if not any_measured else ["no result"] * 4
        else:
            mfu = m["mfu"]
            got = [f"{m['step_time_s']['median'] * 1e3:,.1f} ms", f"{m['tokens_per_second']:,.0f}",
                   "n/a" if mfu["full"] is None else f"{mfu['full'] * 100:.1f}%",
                   "n/a" if mfu["causal"] is None else f"{mfu['causal'] * 100:.1f}%"]
        rows.append([run.name, format_si(step["full"]), format_si(step["causal"]),
                     f"{step['full'] / (peak * TARGET_MFU) * 1e3:,.1f} ms",
                     f"{run.seq_len * run.micro_batch / (step['full'] / (peak * TARGET_MFU)):,.0f}", *got])
    parts += ["## Step time and MFU", table(
        ["run", "model FLOPs/step (full)", "(causal)", f"step at {TARGET_MFU:.0%} MFU", f"tokens/s at {TARGET_MFU:.0%}",
         "measured step (median)", "measured tokens/s", "MFU (full)", "MFU (causal)"], rows, "markdown")]
    parts.append(f"Predicted step times divide the model FLOPs per step by {TARGET_MFU:.0%} of the dense bf16 peak "
                 f"of an H100 SXM / H200 ({h200.peak_tflops['bf16']:g} TFLOP/s, sizing.hardware).")

    rows = []
    for run in PLANNED_RUNS:
        cfg = _planned_config(run)
        mem = training_memory(cfg, run.seq_len, run.micro_batch, "bf16", "adamw", 0, 1, run.recompute,
                              "flash" if run.attention_impl == "sdpa" else "math", "h200")
        pg = mem.per_gpu
        m = measured.get(run.name)
        if m is None:
            got = ["not yet measured"] * 3 if not any_measured else ["no result"] * 3
        else:
            mm = m["memory"]
            got = [format_gib(mm["measured_peak_bytes"]) if mm["measured_peak_bytes"] is not None else "n/a",
                   _signed_pct(mm["measured_vs_predicted"]), _signed_pct(mm["measured_vs_step_peak_estimate"])]
        rows.append([run.name, format_gib(pg["weights_bytes"] + pg["gradients_bytes"] + pg["optimizer_bytes"]),
                     format_gib(pg["activations_bytes"]), format_gib(pg["transient_bytes"]),
                     format_gib(mem.per_gpu_bytes), *got])
    parts += ["## Peak memory", table(
        ["run", "weights + grads + AdamW", "activations", "transient", "formula per GPU",
         "measured peak (max_memory_allocated)", "vs formula", "vs eager step-peak estimate"], rows, "markdown")]
    parts.append("The formula (sizing.memory, pure bf16 policy, no ZeRO) sums model states, the activations an "
                 "eager step saves and the logits with their gradient. An eager step actually peaks at the start of "
                 "the loss backward, before any gradient exists, holding one more fp32 b·T·V tensor than the "
                 "formula counts: reference_model/profile.py `step_peak_estimate_bytes`, which matches torch's "
                 "MemTracker on CPU to 0.2% and is checked against max_memory_allocated by tests/test_profile_gpu.py. "
                 "Compiled runs save inductor's tensors instead, usually fewer.")

    # ---- GPU-hours
    rows = []
    for run in PLANNED_RUNS:
        p = get_preset(run.preset)
        if not p.training_tokens:
            rows.append([run.name, p.name, "no published tokens", "", "", "", ""])
            continue
        fb = flop_breakdown(p.config, p.context, "full")
        flops = training_flops(fb.per_token(fb.forward + fb.backward), p.training_tokens)
        m = measured.get(run.name)
        if m is None:
            got = "not yet measured" if not any_measured else "no result"
        else:
            pr = m.get("published_run")
            got = "n/a" if not pr else f"{pr['gpu_hours']:,.0f} (MFU {pr['mfu'] * 100:.1f}%)"
        rows.append([run.name, p.name, f"{format_si(p.training_tokens)} at T {format_int(p.context)}",
                     f"{flops:.3e}", f"{gpu_hours(flops, peak, 0.4):,.0f}", f"{gpu_hours(flops, peak, TARGET_MFU):,.0f}",
                     got])
    parts += ["## GPU-hours of the published runs (H100 SXM / H200, bf16)", table(
        ["run", "preset", "tokens", "model FLOPs", "at MFU 40% (default)", f"at MFU {TARGET_MFU:.0%}",
         "at the measured MFU"], rows, "markdown")]
    parts.append("The measured MFU comes from the profiled shape (scaled with --set where the preset itself is "
                 "larger) and is applied to the preset's own config, context and published tokens.")

    if any_measured:
        parts.append("## Each run")
        for run in PLANNED_RUNS:
            md = Path(results_dir) / f"{run.name}.md"
            if md.is_file():
                parts.append(_demote(md.read_text()))
            else:
                parts.append(f"### {run.name}\n\nno result (the run failed or ran out of time; see the script log)")
    return "\n\n".join(p.strip("\n") for p in parts) + "\n"


def _mismatch(run: PlannedRun, data: dict) -> str | None:
    """Why a result file is not a measurement of the planned run (None when it is)."""
    if data.get("smoke_test_only") or data.get("environment", {}).get("device") != "cuda":
        return "not a CUDA measurement (a CPU run is a functional test only)"
    settings = data.get("settings", {})
    want = dict(seq_len=run.seq_len, micro_batch=run.micro_batch, dtype=run.dtype, attention_impl=run.attention_impl,
                compile=run.compile, recompute=run.recompute)
    differ = [f"{k} {settings.get(k)!r} (planned {v!r})" for k, v in want.items() if settings.get(k) != v]
    if data.get("config") != _planned_config(run).to_dict():
        differ.append("the model config")
    return ("measured with other settings than planned: " + ", ".join(differ)) if differ else None


def _signed_pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f}%"


def _demote(markdown: str) -> str:
    """One more '#' on every heading (a run's section nests under the page's headings)."""
    return "\n".join("#" + line if line.startswith("#") else line for line in markdown.splitlines())


def _planned_config(run: PlannedRun):
    from ..presets import get_preset

    return get_preset(run.preset).config.with_overrides(dict(item.split("=", 1) for item in run.overrides))
