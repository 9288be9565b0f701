"""Time training steps of the reference model and set the figures beside sizing's predictions.

`profile_training(cfg, seq_len, micro_batch, ...)` builds the reference GPT, runs warm-up
steps, then times whole training steps (zero_grad, forward, backward, optimizer step) and
returns a `ProfileResult`: step time (median, min, max), tokens/s, achieved FLOP/s by the
formula's model FLOPs (forward + backward; `full` and `causal` attention conventions), MFU
against the GPU's dense peak for the dtype (sizing.hardware, found from
torch.cuda.get_device_name(); `peak_tflops` overrides), peak memory against sizing.memory,
and the GPU-hours the calculator predicts for the preset's published run at the measured MFU.

Precision: the model is built *in* the dtype (bf16 / fp16 / fp32 weights, gradients and AdamW
states; no autocast, no fp32 master copy). That is sizing.memory's pure `bf16` policy (8 bytes
per parameter; fp16 has the same element sizes) or `fp32` (16 bytes), whose saved-activation
terms were derived from this very model in that dtype (reference_model/memory_probe.py), so
the measured peak can be set against the formula term for term. The matmuls and attention run
in the dtype exactly as under autocast; only the optimizer's update is cheaper than with an
fp32 master copy. fp16 runs without loss scaling: fine for timing, not for training. fp32 runs
leave TF32 off (torch's default for matmuls), so the fp32 peak is the right one.

Optimizer: torch.optim.AdamW, fused=True on CUDA (one kernel for all parameters); the plain
(for-loop) implementation on CPU.

Timing: on CUDA a pair of CUDA events around each step (recorded in stream order, so launch
gaps count), one synchronisation after the last step, median of the N step times. On CPU
time.perf_counter around each step (CPU kernels are synchronous). A CPU run is a functional
smoke test of the code path, never a performance figure.

Memory: on CUDA torch.cuda.max_memory_allocated() over the timed steps (reset after the
warm-up), beside sizing.memory.training_memory(...).per_gpu_bytes for the same settings
(weights + gradients + AdamW states + saved activations + transient) and beside
`step_peak_estimate_bytes`, where an eager step actually peaks (see its docstring). Under
torch.compile the saved tensors are inductor's, not the eager ones the formula describes.
"""

from __future__ import annotations

import datetime
import gc
import json
import math
import platform
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from sizing import memory as M
from sizing.config import ModelConfig
from sizing.flops import ATTENTION_CONVENTIONS, flop_breakdown
from sizing.hardware import GPU, gpu_for_device_name
from sizing.params import total_params
from sizing.presets import Preset
from sizing.render.tables import table
from sizing.training import TrainingRun, gpu_hours, training_flops
from sizing.units import format_gib, format_int, format_si

from .model import ATTN_IMPLS, build

TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
# sizing.memory precision policy with the same bytes per element as a model built in the dtype
MEMORY_POLICY = {"bf16": "bf16", "fp16": "bf16", "fp32": "fp32"}
RECOMPUTE = ("none", "selective", "full")  # the reference model's checkpointing: none, attention core, blocks
DEVICES = ("cuda", "cpu")
DEFAULT_MFU = TrainingRun.__dataclass_fields__["mfu"].default  # the calculator's default assumption
LR = 1e-4  # any value: the step time does not depend on it


class ProfileError(ValueError):
    """A setting that cannot be profiled (no CUDA, does not fit, bad value): one line for the user."""


# ---------------------------------------------------------------- predictions (no measurement)
def loss_backward_bytes(cfg: ModelConfig, seq_len: int, micro_batch: int, activation_bytes: int) -> int:
    """What the start of the loss backward holds besides the saved activations (which include the
    fp32 log-softmax): the logits (b.T.V.a, returned by forward) and two fp32 b.T.V tensors, the
    gradient of the log-softmax output and the gradient of its input, which log_softmax's
    backward writes while the first is alive. sizing.memory's `transient` counts the logits and
    one fp32 gradient (b.T.V.(a + 4)), so this is b.T.V.4 more."""
    return micro_batch * seq_len * cfg.padded_vocab * (activation_bytes + 2 * M.FP32_BYTES)


def reference_extras_bytes(cfg: ModelConfig, seq_len: int, micro_batch: int, dtype: str, attn_impl: str,
                           recompute: str) -> int:
    """Bytes the reference model's sdpa path saves beyond the fused-kernel formula, all layers
    (memory_probe.reference_sdpa_extras: GQA's repeated K/V, a window mask, partial-rotary copy).
    0 with the math path (the formula's `math` terms are the reference path) or with full
    recompute (blocks keep only their input); with selective recompute, the position indices
    the checkpointed core keeps (memory_probe.reference_selective_extras)."""
    from .memory_probe import reference_sdpa_extras, reference_selective_extras

    if recompute == "selective":
        return sum(cfg.n_layers * r.per_layer + r.outside for r in reference_selective_extras(cfg, seq_len))
    if attn_impl != "sdpa" or recompute == "full":
        return 0
    a = torch.tensor([], dtype=TORCH_DTYPES[dtype]).element_size()
    return cfg.n_layers * sum(r.per_layer for r in reference_sdpa_extras(cfg, seq_len, micro_batch, a))


def step_peak_estimate_bytes(mem: M.TrainingMemory, extras: int = 0) -> int:
    """Where an eager training step of the reference model peaks: at the start of the loss
    backward, after zero_grad(set_to_none=True) (no gradient exists yet) and before any block
    is recomputed: weights + optimizer states + saved activations (+ the reference sdpa path's
    `extras`) + `loss_backward_bytes`. Against sizing.memory's per-GPU total that is: minus the
    gradients, minus a recomputed block's activations (with recompute), plus b.T.V.4.
    That moment occurs in every step, so this is a lower bound of the step's peak; it is the
    peak itself when the vocabulary terms outweigh one block's backward, as with any real
    vocabulary (a toy vocabulary of 512 with recomputed math attention peaks later, in a
    block's backward). Checked on CPU with torch's MemTracker to within 0.2%
    (tests/test_profile.py) and on CUDA with max_memory_allocated (tests/test_profile_gpu.py)."""
    pg = mem.per_gpu
    a = M.get_precision(mem.precision).activation_bytes
    return (pg["weights_bytes"] + pg["optimizer_bytes"] + pg["activations_bytes"] + extras
            + loss_backward_bytes(mem.config, mem.seq_len, mem.micro_batch, a))


def predicted_memory(cfg: ModelConfig, seq_len: int, micro_batch: int, dtype: str, attn_impl: str,
                     recompute: str, gpu_key: str | None = None) -> M.TrainingMemory:
    """sizing.memory for the profiled settings: one GPU, no ZeRO, AdamW, the dtype's policy."""
    return M.training_memory(cfg, seq_len, micro_batch, MEMORY_POLICY[dtype], "adamw", 0, 1, recompute,
                             "flash" if attn_impl == "sdpa" else "math", gpu_key or "h100-sxm")


def model_flops_per_step(cfg: ModelConfig, seq_len: int, micro_batch: int, recompute: str = "none") -> dict:
    """Forward + backward matmul FLOPs of one step (b sequences), per attention convention,
    and what the hardware runs with recomputation (full convention)."""
    out = {}
    for convention in ATTENTION_CONVENTIONS:
        fb = flop_breakdown(cfg, seq_len, convention, recompute)
        out[convention] = micro_batch * (fb.forward + fb.backward)
        if convention == "full":
            out["hardware_full"] = micro_batch * fb.training
    return out


def published_run_projection(preset: Preset | None, peak_flops_per_second: float | None, mfu: float | None,
                             measured_config: ModelConfig, measured_seq_len: int) -> dict | None:
    """GPU-hours the calculator predicts for the preset's published run (its own config, context
    and tokens, full attention, no recompute) at the measured MFU, and at the default MFU."""
    if preset is None or not preset.training_tokens or peak_flops_per_second is None or not mfu:
        return None
    fb = flop_breakdown(preset.config, preset.context, "full")
    flops = training_flops(fb.per_token(fb.forward + fb.backward), preset.training_tokens)
    same = measured_config == preset.config and measured_seq_len == preset.context
    return {
        "preset": preset.name,
        "tokens": preset.training_tokens,
        "seq_len": preset.context,
        "model_flops": flops,
        "mfu": mfu,
        "gpu_hours": gpu_hours(flops, peak_flops_per_second, mfu),
        "default_mfu": DEFAULT_MFU,
        "gpu_hours_at_default_mfu": gpu_hours(flops, peak_flops_per_second, DEFAULT_MFU),
        "measured_on_same_shape": same,
        "note": "MFU measured on the published shape" if same else (
            f"MFU measured on the profiled shape (T {measured_seq_len}"
            + ("" if measured_config == preset.config else ", config changed by --set") + f"), applied to "
            f"{preset.name} at T {preset.context}"),
    }


# ---------------------------------------------------------------- environment
def _driver_version() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().splitlines()[0].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:  # pynvml ships with some torch installs
        import pynvml

        pynvml.nvmlInit()
        version = pynvml.nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # noqa: BLE001 - optional: any failure means "unknown"
        return None


def environment(device: torch.device) -> dict[str, Any]:
    env: dict[str, Any] = {
        "device": device.type,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env.update(
            device_name=torch.cuda.get_device_name(device),
            compute_capability=f"{props.major}.{props.minor}",
            device_memory_bytes=props.total_memory,
            cuda=torch.version.cuda,
            cudnn=torch.backends.cudnn.version(),
            driver=_driver_version(),
        )
    else:
        env.update(device_name=platform.processor() or platform.machine() or "cpu", cpu_threads=torch.get_num_threads())
    return env


# ---------------------------------------------------------------- result
def _bytes(n: int | None) -> str:
    """GiB (2**30) as everywhere in sizing; MiB below a tenth of a GiB (toy runs)."""
    if n is None:
        return "n/a"
    return format_gib(n) if n >= 2**30 / 10 else f"{n / 2**20:,.2f} MiB"


@dataclass
class ProfileResult:
    model: str
    config: ModelConfig = field(repr=False)
    preset: str | None
    params: int
    seq_len: int
    micro_batch: int
    steps: int
    warmup: int
    dtype: str
    attn_impl: str
    compile: bool
    recompute: str
    optimizer: str
    timer: str
    env: dict
    date: str
    step_times_s: list[float]
    losses: list[float]
    flops_per_step: dict  # full, causal, hardware_full
    gpu: GPU | None
    peak_flops_per_second: float | None
    peak_source: str | None
    memory: M.TrainingMemory = field(repr=False)
    reference_extras_bytes: int
    measured_peak_bytes: int | None
    allocated_after_step_bytes: int | None
    baseline_bytes: int | None  # allocated before the model was built (CUDA)
    projection: dict | None
    command: str | None = None
    notes: list[str] = field(default_factory=list)

    # ---- derived figures
    @property
    def tokens_per_step(self) -> int:
        return self.micro_batch * self.seq_len

    @property
    def step_time_s(self) -> float:
        return statistics.median(self.step_times_s)

    @property
    def tokens_per_second(self) -> float:
        return self.tokens_per_step / self.step_time_s

    def achieved_flops_per_second(self, convention: str = "full") -> float:
        return self.flops_per_step[convention] / self.step_time_s

    def mfu(self, convention: str = "full") -> float | None:
        if self.peak_flops_per_second is None:
            return None
        return self.achieved_flops_per_second(convention) / self.peak_flops_per_second

    @property
    def hfu(self) -> float | None:
        if self.peak_flops_per_second is None:
            return None
        return self.achieved_flops_per_second("hardware_full") / self.peak_flops_per_second

    @property
    def predicted_bytes(self) -> int:
        return self.memory.per_gpu_bytes

    @property
    def step_peak_estimate_bytes(self) -> int:
        return step_peak_estimate_bytes(self.memory, self.reference_extras_bytes)

    @property
    def model_states_bytes(self) -> int:
        pg = self.memory.per_gpu
        return pg["weights_bytes"] + pg["gradients_bytes"] + pg["optimizer_bytes"]

    @property
    def is_cpu(self) -> bool:
        return self.env.get("device") == "cpu"

    def to_dict(self) -> dict[str, Any]:
        pg = self.memory.per_gpu
        measured = self.measured_peak_bytes
        return {
            "model": self.model,
            "preset": self.preset,
            "config": self.config.to_dict(),
            "params": self.params,
            "settings": {
                "seq_len": self.seq_len, "micro_batch": self.micro_batch, "tokens_per_step": self.tokens_per_step,
                "steps": self.steps, "warmup": self.warmup, "dtype": self.dtype,
                "memory_policy": MEMORY_POLICY[self.dtype], "attention_impl": self.attn_impl,
                "compile": self.compile, "recompute": self.recompute, "optimizer": self.optimizer,
                "timer": self.timer,
            },
            "environment": dict(self.env),
            "date": self.date,
            "command": self.command,
            "smoke_test_only": self.is_cpu,
            "step_time_s": {"median": self.step_time_s, "min": min(self.step_times_s),
                            "max": max(self.step_times_s), "all": list(self.step_times_s)},
            "tokens_per_second": self.tokens_per_second,
            "losses": {"first": self.losses[0], "last": self.losses[-1]},
            "model_flops_per_step": {c: self.flops_per_step[c] for c in ATTENTION_CONVENTIONS},
            "hardware_flops_per_step": self.flops_per_step["hardware_full"],
            "achieved_flops_per_second": {c: self.achieved_flops_per_second(c) for c in ATTENTION_CONVENTIONS},
            "achieved_tflops": {c: self.achieved_flops_per_second(c) / 1e12 for c in ATTENTION_CONVENTIONS},
            "gpu": None if self.gpu is None else {"key": self.gpu.key, "name": self.gpu.name},
            "peak_flops_per_second": self.peak_flops_per_second,
            "peak_source": self.peak_source,
            "mfu": {c: self.mfu(c) for c in ATTENTION_CONVENTIONS},
            "hfu": self.hfu,
            "memory": {
                "measured_peak_bytes": measured,
                "allocated_after_step_bytes": self.allocated_after_step_bytes,
                "baseline_bytes": self.baseline_bytes,
                "predicted_bytes": self.predicted_bytes,
                "predicted": {k: v for k, v in pg.items() if k != "total_bytes"},
                "model_states_bytes": self.model_states_bytes,
                "reference_extras_bytes": self.reference_extras_bytes,
                "step_peak_estimate_bytes": self.step_peak_estimate_bytes,
                "measured_vs_predicted": None if measured is None else measured / self.predicted_bytes - 1,
                "measured_vs_step_peak_estimate": None if measured is None
                else measured / self.step_peak_estimate_bytes - 1,
            },
            "published_run": self.projection,
            "notes": list(self.notes),
        }

    # ---- rendering
    def sections(self) -> list[tuple[str, list[list[str]]]]:
        """(title, rows of [quantity, value, note]) for the table and markdown renderers."""
        env = self.env
        dev = env.get("device_name", "")
        environment_rows = [["device", f"{env['device']}: {dev}", ""]]
        if self.gpu is not None:
            environment_rows.append(["sizing GPU entry", f"{self.gpu.key} ({self.gpu.name})", ""])
        for key, label in (("driver", "NVIDIA driver"), ("cuda", "CUDA (torch build)"), ("cudnn", "cuDNN"),
                           ("compute_capability", "compute capability")):
            if env.get("device") == "cuda":
                environment_rows.append([label, str(env.get(key) or "unknown"), ""])
        if env.get("device") == "cpu":
            environment_rows.append(["CPU threads", str(env.get("cpu_threads")), ""])
        environment_rows += [["torch", env["torch"], ""], ["python", env["python"], ""], ["date (UTC)", self.date, ""]]

        tokens = self.tokens_per_step
        c = self.config
        shape = (f"L {c.n_layers}, d {c.d_model}, h {c.n_heads} (kv {c.kv_heads}) x d_h {c.d_head}, "
                 f"d_ff {c.d_ff}" + (f", {c.n_experts} experts top-{c.top_k}" if c.is_moe else "")
                 + f", V {c.padded_vocab}")
        kinds = f"{c.mlp}, {c.norm} ({c.norm_placement}), {c.position} positions" + (
            ", tied embeddings" if c.tied_embeddings else "") + (
            f", window {c.sliding_window}" if c.sliding_window else "")
        settings = [
            ["model", self.model, ""],
            ["config", shape, kinds],
            ["parameters", format_int(self.params), ""],
            ["sequence length T", format_int(self.seq_len), ""],
            ["micro-batch b", format_int(self.micro_batch), f"{format_int(tokens)} tokens per step"],
            ["dtype", self.dtype, f"weights, gradients and AdamW states in {self.dtype} "
                                  f"(sizing.memory policy '{MEMORY_POLICY[self.dtype]}')"],
            ["attention", self.attn_impl, ""],
            ["torch.compile", "yes" if self.compile else "no", ""],
            ["recompute", self.recompute, ""],
            ["optimizer", self.optimizer, ""],
            ["steps", f"{self.warmup} warm-up + {self.steps} timed", self.timer],
        ]
        ms = [t * 1e3 for t in self.step_times_s]
        results = [
            ["step time (median)", f"{self.step_time_s * 1e3:,.2f} ms", f"min {min(ms):,.2f}, max {max(ms):,.2f} ms"],
            ["tokens/s", f"{self.tokens_per_second:,.0f}", ""],
        ]
        for c in ATTENTION_CONVENTIONS:
            results.append([f"model FLOPs per step ({c})", format_si(self.flops_per_step[c]),
                            "forward + backward matmuls (sizing.flops)"])
        for c in ATTENTION_CONVENTIONS:
            results.append([f"achieved TFLOP/s ({c})", f"{self.achieved_flops_per_second(c) / 1e12:,.2f}", ""])
        if self.peak_flops_per_second is not None:
            results.append(["peak TFLOP/s", f"{self.peak_flops_per_second / 1e12:,.1f}", self.peak_source or ""])
            for c in ATTENTION_CONVENTIONS:
                results.append([f"MFU ({c})", f"{self.mfu(c) * 100:.1f}%", ""])
            if self.recompute != "none":
                results.append(["HFU (full, with recompute)", f"{self.hfu * 100:.1f}%", ""])
        else:
            results.append(["MFU", "n/a", self.peak_source or "no peak rate"])
        results.append(["loss (first, last)", f"{self.losses[0]:.4f}, {self.losses[-1]:.4f}", "random tokens"])

        pg = self.memory.per_gpu
        measured = self.measured_peak_bytes
        memory = [
            ["measured peak (max_memory_allocated)", _bytes(measured),
             "not measured on CPU" if measured is None else ""],
            ["formula per GPU (sizing.memory)", _bytes(self.predicted_bytes),
             "" if measured is None else f"measured {measured / self.predicted_bytes - 1:+.1%}"],
            ["  weights + gradients + AdamW", _bytes(self.model_states_bytes), ""],
            ["  saved activations", _bytes(pg["activations_bytes"]), ""],
            ["  transient (logits and their gradient)", _bytes(pg["transient_bytes"]), ""],
            ["eager step-peak estimate", _bytes(self.step_peak_estimate_bytes),
             ("start of the loss backward: weights + AdamW + activations + b·T·V·(a + 8)"
              + (f" + {_bytes(self.reference_extras_bytes)} reference sdpa extras" if self.reference_extras_bytes
                 else "")
              + ("" if measured is None else f"; measured {measured / self.step_peak_estimate_bytes - 1:+.1%}"))],
        ]
        if self.allocated_after_step_bytes is not None:
            memory.append(["allocated after a step", _bytes(self.allocated_after_step_bytes),
                           f"model states by the formula: {_bytes(self.model_states_bytes)}"])
        out = [("Environment", environment_rows), ("Settings", settings), ("Step", results), ("Memory", memory)]
        p = self.projection
        if p is not None:
            out.append(("Published run", [
                ["preset", p["preset"], f"{format_si(p['tokens'])} tokens at T {format_int(p['seq_len'])}"],
                ["model FLOPs", f"{p['model_flops']:.3e}", "full attention"],
                [f"GPU-hours at the measured MFU ({p['mfu'] * 100:.1f}%)", f"{p['gpu_hours']:,.0f}", p["note"]],
                [f"GPU-hours at the default MFU ({p['default_mfu']:g})", f"{p['gpu_hours_at_default_mfu']:,.0f}",
                 "what `sizing estimate` assumes"],
            ]))
        return out

    def title(self) -> str:
        where = self.env.get("device_name") or self.env.get("device")
        return f"Profile: {self.model} on {where}"

    def render_markdown(self, level: int = 2) -> str:
        h = "#" * level
        parts = [f"{h} {self.title()}"]
        if self.is_cpu:
            parts.append("**CPU run: a functional smoke test of the code path, not a performance figure.**")
        if self.command:
            parts.append(f"Measured with `{self.command}` on {self.date}.")
        for title, rows in self.sections():
            parts.append(f"{h}# {title}")
            parts.append(table(["quantity", "value", "note"], rows, "markdown"))
        if self.notes:
            parts.append("\n".join(f"- {n}" for n in self.notes))
        return "\n\n".join(parts) + "\n"

    def render(self, fmt: str = "table") -> str:
        if fmt == "json":
            return json.dumps(self.to_dict(), indent=2) + "\n"
        if fmt == "markdown":
            return self.render_markdown()
        lines = [self.title()]
        if self.is_cpu:
            lines.append("CPU run: a functional smoke test of the code path, not a performance figure.")
        for title, rows in self.sections():
            lines += ["", title, table(["quantity", "value", "note"], rows, "table")]
        if self.notes:
            lines += [""] + [f"note: {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- measurement
def _check(cfg: ModelConfig, seq_len, micro_batch, steps, warmup, dtype, attn_impl, compile, recompute, device,
           peak_tflops) -> torch.device:
    for name, value, minimum in (("seq_len", seq_len, 1), ("micro_batch", micro_batch, 1), ("steps", steps, 1),
                                 ("warmup", warmup, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ProfileError(f"{name} ({value!r}) must be an integer >= {minimum}")
    if dtype not in TORCH_DTYPES:
        raise ProfileError(f"dtype ({dtype!r}) must be one of: {', '.join(TORCH_DTYPES)}")
    if attn_impl not in ATTN_IMPLS:
        raise ProfileError(f"attention impl ({attn_impl!r}) must be one of: {', '.join(ATTN_IMPLS)}")
    if recompute not in RECOMPUTE:
        raise ProfileError(f"recompute ({recompute!r}) must be one of: {', '.join(RECOMPUTE)} "
                           "(the reference model checkpoints whole blocks)")
    if compile and warmup < 1:
        raise ProfileError("compile needs at least one warm-up step (the first step compiles)")
    if peak_tflops is not None and not (isinstance(peak_tflops, (int, float)) and peak_tflops > 0):
        raise ProfileError(f"peak TFLOP/s ({peak_tflops!r}) must be a positive number")
    if cfg.position == "learned" and seq_len > cfg.max_positions:
        raise ProfileError(f"seq_len ({seq_len}) exceeds the learned position table (max_positions "
                           f"{cfg.max_positions}); use a shorter --seq-len or --set max_positions={seq_len}")
    dev = torch.device(device)
    if dev.type not in DEVICES:
        raise ProfileError(f"device ({device!r}) must be one of: {', '.join(DEVICES)}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ProfileError("no CUDA device: profiling times training steps on a GPU; "
                           "--device cpu times a tiny run for testing (not a performance figure)")
    return dev


def _peak(dev: torch.device, dtype: str, peak_tflops: float | None, env: dict) -> tuple[GPU | None, float | None, str]:
    gpu = gpu_for_device_name(env["device_name"]) if dev.type == "cuda" else None
    if peak_tflops is not None:
        return gpu, peak_tflops * 1e12, "--peak-tflops"
    if dev.type != "cuda":
        return None, None, "CPU: no peak rate (give --peak-tflops for an MFU)"
    if gpu is None:
        return None, None, f"'{env['device_name']}' is not in sizing's GPU table: give --peak-tflops"
    if dtype not in gpu.peak_tflops:
        return gpu, None, f"{gpu.key} has no {dtype} peak in sizing's table: give --peak-tflops"
    return gpu, gpu.peak_flops_per_second(dtype), f"sizing GPU table: {gpu.key}, dense {dtype}"


def profile_training(cfg: ModelConfig, seq_len: int, micro_batch: int = 1, steps: int = 10, warmup: int = 3,
                     dtype: str = "bf16", attn_impl: str = "sdpa", compile: bool = False, recompute: str = "none",
                     device: str = "cuda", peak_tflops: float | None = None, *, name: str | None = None,
                     preset: Preset | None = None, seed: int = 0, command: str | None = None,
                     check_fit: bool = True) -> ProfileResult:
    """Warm up, then time `steps` training steps of the reference model for `cfg`. See the
    module docstring for the precision, optimizer, timer and memory conventions. Raises
    ProfileError for settings that cannot run (no CUDA, predicted not to fit, out of memory)."""
    dev = _check(cfg, seq_len, micro_batch, steps, warmup, dtype, attn_impl, compile, recompute, device, peak_tflops)
    cuda = dev.type == "cuda"
    env = environment(dev)
    gpu, peak, peak_source = _peak(dev, dtype, peak_tflops, env)
    memory = predicted_memory(cfg, seq_len, micro_batch, dtype, attn_impl, recompute, gpu.key if gpu else None)
    extras = reference_extras_bytes(cfg, seq_len, micro_batch, dtype, attn_impl, recompute)
    if cuda and check_fit:
        free, _total = torch.cuda.mem_get_info(dev)
        need = max(memory.per_gpu_bytes, step_peak_estimate_bytes(memory, extras))
        if need > free:
            raise ProfileError(
                f"predicted {format_gib(need)} for this step, more than the {format_gib(free)} free on "
                f"{env['device_name']}: scale the model down with --set (e.g. --set n_layers=...), lower "
                "--micro-batch or --seq-len, or use --recompute full")

    torch_dtype = TORCH_DTYPES[dtype]
    try:
        return _run(cfg, seq_len, micro_batch, steps, warmup, dtype, torch_dtype, attn_impl, compile, recompute,
                    dev, env, gpu, peak, peak_source, memory, extras, name, preset, seed, command)
    except torch.cuda.OutOfMemoryError as exc:
        torch.cuda.empty_cache()
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "out of memory"
        raise ProfileError(f"CUDA out of memory ({first[:160]}); scale down with --set, --micro-batch, --seq-len "
                           "or --recompute full") from None


def _run(cfg, seq_len, micro_batch, steps, warmup, dtype, torch_dtype, attn_impl, compile, recompute, dev, env, gpu,
         peak, peak_source, memory, extras, name, preset, seed, command) -> ProfileResult:
    cuda = dev.type == "cuda"
    baseline = None
    if cuda:  # what the process already holds (nothing in a fresh `sizing profile`; earlier tests' leftovers)
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.synchronize(dev)
        baseline = torch.cuda.memory_allocated(dev)
    model = build(cfg, dev, attn_impl=attn_impl, dtype=torch_dtype, seed=seed, checkpoint=recompute)
    model.train()
    if cuda:
        optimizer = torch.optim.AdamW(model.parameters(), lr=LR, fused=True)
        optimizer_name = "AdamW (fused=True)"
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=LR, foreach=False)
        optimizer_name = "AdamW (for-loop, CPU)"
    run = torch.compile(model) if compile else model

    generator = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, cfg.vocab_size, (micro_batch, seq_len), generator=generator).to(dev)
    targets = torch.randint(0, cfg.vocab_size, (micro_batch, seq_len), generator=generator).to(dev)

    def step() -> torch.Tensor:
        optimizer.zero_grad(set_to_none=True)
        _, loss = run(idx, targets)
        loss.backward()
        optimizer.step()
        return loss.detach()

    for _ in range(warmup):
        step()
    losses: list[torch.Tensor] = []
    if cuda:
        torch.cuda.synchronize(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(steps)]
        for start, end in events:
            start.record()
            losses.append(step())
            end.record()
        torch.cuda.synchronize(dev)
        times = [start.elapsed_time(end) / 1e3 for start, end in events]
        measured_peak = torch.cuda.max_memory_allocated(dev)
        allocated_after = torch.cuda.memory_allocated(dev)
        timer = f"CUDA events per step, median of {steps}"
    else:
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            losses.append(step())
            times.append(time.perf_counter() - t0)
        measured_peak = allocated_after = None
        timer = f"time.perf_counter per step, median of {steps}"
    loss_values = [float(x) for x in losses]

    flops = model_flops_per_step(cfg, seq_len, micro_batch, recompute)
    median = statistics.median(times)
    mfu_full = None if peak is None else flops["full"] / median / peak
    notes = []
    if dev.type == "cpu":
        notes.append("CPU run: checks that the code path works; its timings are not performance figures and "
                     "are not to be reported as such.")
    if compile:
        notes.append("torch.compile: the memory formula describes the eager model's saved tensors; inductor "
                     "saves its own (usually fewer), so the measured peak may sit below the eager estimate.")
    if dtype == "fp16":
        notes.append("fp16 weights without loss scaling: a timing run, not a recipe for training.")
    if not all(math.isfinite(x) for x in loss_values):
        notes.append("the loss was not finite in some timed steps (does not affect the timing).")
    if preset is not None and not preset.training_tokens:
        notes.append(f"{preset.name} has no published token count: no GPU-hours projection.")
    return ProfileResult(
        model=name or "custom", config=cfg, preset=preset.name if preset else None, params=total_params(cfg),
        seq_len=seq_len, micro_batch=micro_batch, steps=steps, warmup=warmup, dtype=dtype, attn_impl=attn_impl,
        compile=compile, recompute=recompute, optimizer=optimizer_name, timer=timer, env=env,
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        step_times_s=times, losses=loss_values, flops_per_step=flops, gpu=gpu, peak_flops_per_second=peak,
        peak_source=peak_source, memory=memory, reference_extras_bytes=extras, measured_peak_bytes=measured_peak,
        allocated_after_step_bytes=allocated_after, baseline_bytes=baseline,
        projection=published_run_projection(preset, peak, mfu_full, cfg, seq_len), command=command, notes=notes,
    )


__all__ = ["ProfileError", "ProfileResult", "loss_backward_bytes", "model_flops_per_step", "predicted_memory",
           "profile_training", "published_run_projection", "reference_extras_bytes", "step_peak_estimate_bytes"]
