"""A profile's figures (`ProfileResult`): what was measured, the figures derived from it (step
time, tokens/s, achieved FLOP/s, MFU) beside sizing's predictions, and its renderings (JSON,
a text table, a markdown section)."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import Any

from sizing import ATTENTION_CONVENTIONS
from sizing.inputs import GIB, GPU, ModelConfig, ProfileSettings, format_gib, format_int, format_si
from sizing.memory import (
    MEMORY_POLICY,
    TrainingMemory,
    model_states_bytes,
    step_peak_estimate_bytes,
)
from sizing.render import table

MIB = 2**20


@dataclass(frozen=True)
class Measurement:
    """What the timed steps gave: one time and one loss per step, and on CUDA the allocator's
    peak over the timed steps, what a step leaves allocated and what was held before the model."""

    step_times_s: list[float]
    losses: list[float]
    optimizer: str
    timer: str
    measured_peak_bytes: int | None = None
    allocated_after_step_bytes: int | None = None
    baseline_bytes: int | None = None


@dataclass
class ProfileResult:
    model: str
    config: ModelConfig = field(repr=False)
    preset: str | None
    params: int
    settings: ProfileSettings
    env: dict
    date: str
    measurement: Measurement
    flops_per_step: dict  # full, causal, hardware_full
    gpu: GPU | None
    peak_flops_per_second: float | None
    peak_source: str | None
    memory: TrainingMemory = field(repr=False)
    reference_extras_bytes: int
    projection: dict | None
    command: str | None = None
    notes: list[str] = field(default_factory=list)

    # ---- derived figures
    @property
    def step_time_s(self) -> float:
        return statistics.median(self.measurement.step_times_s)

    @property
    def tokens_per_second(self) -> float:
        return self.settings.tokens_per_step / self.step_time_s

    def achieved_flops_per_second(self, convention: str = "full") -> float:
        return self.flops_per_step[convention] / self.step_time_s

    def mfu(self, convention: str = "full") -> float | None:
        if self.peak_flops_per_second is None:
            return None
        return self.achieved_flops_per_second(convention) / self.peak_flops_per_second

    @property
    def hfu(self) -> float | None:
        return self.mfu("hardware_full")

    @property
    def predicted_bytes(self) -> int:
        return self.memory.per_gpu_bytes

    @property
    def step_peak_estimate_bytes(self) -> int:
        return step_peak_estimate_bytes(self.memory, self.reference_extras_bytes)

    @property
    def model_states_bytes(self) -> int:
        return model_states_bytes(self.memory)

    @property
    def is_cpu(self) -> bool:
        return self.env.get("device") == "cpu"

    def measured_vs(self, predicted_bytes: int) -> float | None:
        """measured peak / a prediction - 1 (None on CPU, where no peak is measured)."""
        measured = self.measurement.measured_peak_bytes
        return None if measured is None else measured / predicted_bytes - 1

    def to_dict(self) -> dict[str, Any]:
        s, m = self.settings, self.measurement
        return {
            "model": self.model,
            "preset": self.preset,
            "config": self.config.to_dict(),
            "params": self.params,
            "settings": {
                "seq_len": s.seq_len,
                "micro_batch": s.micro_batch,
                "tokens_per_step": s.tokens_per_step,
                "steps": s.steps,
                "warmup": s.warmup,
                "dtype": s.dtype,
                "memory_policy": MEMORY_POLICY[s.dtype],
                "attention_impl": s.attention_impl,
                "compile": s.compile,
                "recompute": s.recompute,
                "optimizer": m.optimizer,
                "timer": m.timer,
            },
            "environment": dict(self.env),
            "date": self.date,
            "command": self.command,
            "smoke_test_only": self.is_cpu,
            "step_time_s": {
                "median": self.step_time_s,
                "min": min(m.step_times_s),
                "max": max(m.step_times_s),
                "all": list(m.step_times_s),
            },
            "tokens_per_second": self.tokens_per_second,
            "losses": {"first": m.losses[0], "last": m.losses[-1]},
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
                "measured_peak_bytes": m.measured_peak_bytes,
                "allocated_after_step_bytes": m.allocated_after_step_bytes,
                "baseline_bytes": m.baseline_bytes,
                "predicted_bytes": self.predicted_bytes,
                "predicted": {k: v for k, v in self.memory.per_gpu.items() if k != "total_bytes"},
                "model_states_bytes": self.model_states_bytes,
                "reference_extras_bytes": self.reference_extras_bytes,
                "step_peak_estimate_bytes": self.step_peak_estimate_bytes,
                "measured_vs_predicted": self.measured_vs(self.predicted_bytes),
                "measured_vs_step_peak_estimate": self.measured_vs(self.step_peak_estimate_bytes),
            },
            "published_run": self.projection,
            "notes": list(self.notes),
        }

    # ---- rendering
    def sections(self) -> list[tuple[str, list[list[str]]]]:
        """(title, rows of [quantity, value, note]) for the table and markdown renderers."""
        out = [
            ("Environment", environment_rows(self)),
            ("Settings", settings_rows(self)),
            ("Step", step_rows(self)),
            ("Memory", memory_rows(self)),
        ]
        if self.projection is not None:
            out.append(("Published run", projection_rows(self.projection)))
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


# ---------------------------------------------------------------- the sections' rows
def _bytes(n: int | None) -> str:
    """GiB (2**30) as everywhere in sizing; MiB below a tenth of a GiB (toy runs)."""
    if n is None:
        return "n/a"
    return format_gib(n) if n >= GIB / 10 else f"{n / MIB:,.2f} MiB"


def environment_rows(r: ProfileResult) -> list[list[str]]:
    env = r.env
    rows = [["device", f"{env['device']}: {env.get('device_name', '')}", ""]]
    if r.gpu is not None:
        rows.append(["sizing GPU entry", f"{r.gpu.key} ({r.gpu.name})", ""])
    if env.get("device") == "cuda":
        for key, label in (
            ("driver", "NVIDIA driver"),
            ("cuda", "CUDA (torch build)"),
            ("cudnn", "cuDNN"),
            ("compute_capability", "compute capability"),
        ):
            rows.append([label, str(env.get(key) or "unknown"), ""])
    if env.get("device") == "cpu":
        rows.append(["CPU threads", str(env.get("cpu_threads")), ""])
    return rows + [["torch", env["torch"], ""], ["python", env["python"], ""], ["date (UTC)", r.date, ""]]


def settings_rows(r: ProfileResult) -> list[list[str]]:
    s, c = r.settings, r.config
    shape = (
        f"L {c.n_layers}, d {c.d_model}, h {c.n_heads} (kv {c.kv_heads}) x d_h {c.d_head}, "
        f"d_ff {c.d_ff}" + (f", {c.n_experts} experts top-{c.top_k}" if c.is_moe else "") + f", V {c.padded_vocab}"
    )
    kinds = (
        f"{c.mlp}, {c.norm} ({c.norm_placement}), {c.position} positions"
        + (", tied embeddings" if c.tied_embeddings else "")
        + (f", window {c.sliding_window}" if c.sliding_window else "")
    )
    return [
        ["model", r.model, ""],
        ["config", shape, kinds],
        ["parameters", format_int(r.params), ""],
        ["sequence length T", format_int(s.seq_len), ""],
        ["micro-batch b", format_int(s.micro_batch), f"{format_int(s.tokens_per_step)} tokens per step"],
        [
            "dtype",
            s.dtype,
            (f"weights, gradients and AdamW states in {s.dtype} (sizing.memory policy '{MEMORY_POLICY[s.dtype]}')"),
        ],
        ["attention", s.attention_impl, ""],
        ["torch.compile", "yes" if s.compile else "no", ""],
        ["recompute", s.recompute, ""],
        ["optimizer", r.measurement.optimizer, ""],
        ["steps", f"{s.warmup} warm-up + {s.steps} timed", r.measurement.timer],
    ]


def step_rows(r: ProfileResult) -> list[list[str]]:
    ms = [t * 1e3 for t in r.measurement.step_times_s]
    losses = r.measurement.losses
    rows = [
        ["step time (median)", f"{r.step_time_s * 1e3:,.2f} ms", f"min {min(ms):,.2f}, max {max(ms):,.2f} ms"],
        ["tokens/s", f"{r.tokens_per_second:,.0f}", ""],
    ]
    for c in ATTENTION_CONVENTIONS:
        rows.append(
            [
                f"model FLOPs per step ({c})",
                format_si(r.flops_per_step[c]),
                "forward + backward matmuls (sizing.formulas.flops)",
            ]
        )
    for c in ATTENTION_CONVENTIONS:
        rows.append([f"achieved TFLOP/s ({c})", f"{r.achieved_flops_per_second(c) / 1e12:,.2f}", ""])
    if r.peak_flops_per_second is not None:
        rows.append(["peak TFLOP/s", f"{r.peak_flops_per_second / 1e12:,.1f}", r.peak_source or ""])
        for c in ATTENTION_CONVENTIONS:
            rows.append([f"MFU ({c})", f"{r.mfu(c) * 100:.1f}%", ""])
        if r.settings.recompute != "none":
            rows.append(["HFU (full, with recompute)", f"{r.hfu * 100:.1f}%", ""])
    else:
        rows.append(["MFU", "n/a", r.peak_source or "no peak rate"])
    rows.append(["loss (first, last)", f"{losses[0]:.4f}, {losses[-1]:.4f}", "random tokens"])
    return rows


def memory_rows(r: ProfileResult) -> list[list[str]]:
    pg, m = r.memory.per_gpu, r.measurement
    vs_formula, vs_estimate = r.measured_vs(r.predicted_bytes), r.measured_vs(r.step_peak_estimate_bytes)
    rows = [
        [
            "measured peak (max_memory_allocated)",
            _bytes(m.measured_peak_bytes),
            "not measured on CPU" if m.measured_peak_bytes is None else "",
        ],
        [
            "formula per GPU (sizing.memory)",
            _bytes(r.predicted_bytes),
            "" if vs_formula is None else f"measured {vs_formula:+.1%}",
        ],
        ["  weights + gradients + AdamW", _bytes(r.model_states_bytes), ""],
        ["  saved activations", _bytes(pg["activations_bytes"]), ""],
        ["  transient (logits and their gradient)", _bytes(pg["transient_bytes"]), ""],
        [
            "eager step-peak estimate",
            _bytes(r.step_peak_estimate_bytes),
            (
                "start of the loss backward: weights + AdamW + activations + b·T·V·(a + 8)"
                + (f" + {_bytes(r.reference_extras_bytes)} reference sdpa extras" if r.reference_extras_bytes else "")
                + ("" if vs_estimate is None else f"; measured {vs_estimate:+.1%}")
            ),
        ],
    ]
    if m.allocated_after_step_bytes is not None:
        rows.append(
            [
                "allocated after a step",
                _bytes(m.allocated_after_step_bytes),
                f"model states by the formula: {_bytes(r.model_states_bytes)}",
            ]
        )
    return rows


def projection_rows(p: dict) -> list[list[str]]:
    return [
        ["preset", p["preset"], f"{format_si(p['tokens'])} tokens at T {format_int(p['seq_len'])}"],
        ["model FLOPs", f"{p['model_flops']:.3e}", "full attention"],
        [f"GPU-hours at the measured MFU ({p['mfu'] * 100:.1f}%)", f"{p['gpu_hours']:,.0f}", p["note"]],
        [
            f"GPU-hours at the default MFU ({p['default_mfu']:g})",
            f"{p['gpu_hours_at_default_mfu']:,.0f}",
            "what `sizing estimate` assumes",
        ],
    ]
