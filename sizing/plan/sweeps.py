"""A grid over config and run fields: one row of headline figures per point.

>>> from sizing.plan.sweeps import sweep_rows
>>> rows, skipped = sweep_rows("llama2-7b", {"n_layers": [24, 32], "tokens": ["1T"]})
>>> [r["params_total"] for r in rows]
[5119348736, 6738415616]

Grid keys are ModelConfig fields (n_layers, d_model, n_heads, ...) or run fields (RUN_FIELDS:
seq_len, tokens, gpu, mfu, ...); values are lists (or one value), typed as Python values or as
the CLI takes them ("2T", "h100", "16:64:8" for 16, 24, ..., 64). A point whose config is invalid
(heads not dividing d_model, a context past a learned table) is skipped with its reason.

The lean path: each point's figures come from the same declarations as `estimate()` (the
params.PARAM_TERMS and flops.FLOP_TERMS functions, FlopBreakdown's totals, training_cost)
without building formula text or the memory model, so a grid of ten thousand points takes about
a second (benchmarks/sweep.py). memory=True adds the memory columns through the full
sizing.memory path (about a hundred points per second). Every count stays exact.
"""

from __future__ import annotations

import dataclasses
import difflib
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sizing.estimate import _resolve_model
from sizing.formulas import flops as F
from sizing.formulas import params as P
from sizing.inputs import ModelConfig, get_gpu, parse_field_value
from sizing.plan.sweep_values import parse_run_value, parse_values
from sizing.rows import COLUMNS
from sizing.training import TrainingRun, cost_usd, gpu_hours, training_flops, wall_clock_days
from sizing.validate import SizingError, require_choice, show
from sizing.vocabulary import (
    ATTENTION_CONVENTIONS,
    DEFAULT_ATTENTION,
    DEFAULT_GPU,
    DEFAULT_MFU,
    DEFAULT_RECOMPUTE,
    RECOMPUTE_MODES,
)

# Run fields a grid may hold, with their defaults (the rest of a grid's keys are config fields).
RUN_FIELDS: dict[str, Any] = {
    "seq_len": None,  # None: the model's own context
    "attention": DEFAULT_ATTENTION,
    "recompute": DEFAULT_RECOMPUTE,
    "tokens": None,  # None: the preset's published tokens, else no training columns
    "gpu": DEFAULT_GPU,
    "dtype": None,
    "mfu": DEFAULT_MFU,
    "num_gpus": 1,
    "price_per_gpu_hour": None,
}
# The figures of each point (a subset of sizing.rows.COLUMNS, same meaning); memory=True adds MEMORY_COLUMNS.
HEADLINE_COLUMNS = [
    "params_total",
    "params_active",
    "params_non_embedding",
    "seq_len",
    "attention",
    "recompute",
    "forward_flops_per_token",
    "training_flops_per_token",
    "flops_6n_per_token",
    "tokens",
    "training_flops",
    "gpu",
    "dtype",
    "mfu",
    "num_gpus",
    "gpu_hours",
    "days",
    "price_per_gpu_hour",
    "cost_usd",
]
MEMORY_COLUMNS = [
    "inference_memory_bytes",
    "inference_fits",
    "training_memory_bytes",
    "training_fits",
    "training_max_micro_batch",
]
assert set(HEADLINE_COLUMNS + MEMORY_COLUMNS) <= set(COLUMNS)
PROGRESS_EVERY = 2048  # points between two calls of sweep_rows' progress (every config with memory=True)


@dataclass(frozen=True)
class Skipped:
    point: dict[str, Any]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"point": self.point, "reason": self.reason}


def sweep_rows(
    model: Any, grid: dict[str, Any], *, memory: bool = False, progress: Callable[[int], None] | None = None
) -> tuple[list[dict[str, Any]], list[Skipped]]:
    """(rows, skipped): one row per valid point of the grid's product, config axes outermost.
    Each row holds the grid's fields, then HEADLINE_COLUMNS (and MEMORY_COLUMNS with memory=True).
    `progress(n)`: told that n more points are done, every PROGRESS_EVERY points or so (the CLI's bar)."""
    if not isinstance(grid, dict) or not all(isinstance(f, str) for f in grid):
        raise SizingError(f"grid ({show(grid)}) must be a dict of field -> values, e.g. {{'n_layers': [24, 32]}}")
    target = _resolve_model(model)
    axes = {field: parse_values(field, values) for field, values in grid.items()}
    unknown = [f for f in axes if f not in RUN_FIELDS and f not in ModelConfig.field_names()]
    if unknown:
        known = [*ModelConfig.field_names(), *RUN_FIELDS]
        close = difflib.get_close_matches(str(unknown[0]), known, n=1)
        hint = f"did you mean {close[0]}?" if close else "see ModelConfig.field_names()"
        raise SizingError(
            f"sweep field {show(unknown[0])} is neither a config field nor a run field "
            f"({', '.join(RUN_FIELDS)}); {hint}"
        )
    if target.context is None and "seq_len" not in axes:
        raise SizingError("seq_len must be given for a config that states no context (e.g. seq_len=4096)")
    types = {f.name: f.type for f in dataclasses.fields(ModelConfig)}
    # each axis value parsed once (a value the field cannot hold skips its points below)
    config_axes = {f: [_config_value(f, types[f], v) for v in vs] for f, vs in axes.items() if f not in RUN_FIELDS}
    run_axes = {f: [parse_run_value(f, v) for v in vs] for f, vs in axes.items() if f in RUN_FIELDS}
    defaults = {f: parse_run_value(f, v) for f, v in RUN_FIELDS.items()}
    base_fields = {name: getattr(target.config, name) for name in types}
    rows: list[dict[str, Any]] = []
    skipped: list[Skipped] = []
    run_points = [
        _RunPoint.prepare(dict(zip(run_axes, combo, strict=True)), defaults, target)
        for combo in itertools.product(*run_axes.values())
    ]
    done = 0  # points since progress was last told
    for combo in itertools.product(*config_axes.values()):
        done = _tell(progress, done, 1 if memory else PROGRESS_EVERY) + len(run_points)
        config_point = dict(zip(config_axes, combo, strict=True))
        try:
            bad = next((v for v in combo if isinstance(v, _Invalid)), None)
            if bad is not None:
                raise SizingError(bad.reason)
            # a new ModelConfig per point: its __post_init__ validates every field
            cfg = _config({**base_fields, **config_point}) if config_point else target.config
        except SizingError as exc:
            skipped += [Skipped({**_shown(config_point), **run.point}, str(exc)) for run in run_points]
            continue
        lean = _LeanModel(cfg)
        for run in run_points:
            point = {**config_point, **run.point}
            try:
                if run.error is not None:
                    raise SizingError(run.error)
                figures = lean.row(run, memory)  # None where not costed: the grid's own value stays
                rows.append({**point, **{k: v for k, v in figures.items() if v is not None or k not in point}})
            except SizingError as exc:
                skipped.append(Skipped(point, str(exc)))
    _tell(progress, done, 1)
    return rows, skipped


def _tell(progress: Callable[[int], None] | None, done: int, every: int) -> int:
    """Tell `progress` of the `done` points once they reach `every`; returns the points still untold."""
    if progress is None or done < every:
        return done
    progress(done)
    return 0


def _config(fields: dict[str, Any]) -> ModelConfig:
    """ModelConfig(**fields) for a dict holding every field: the same object, validated by the
    same __post_init__, without the dataclass __init__'s one frozen setattr per field (half the
    cost of a point; tests/test_sweep.py checks it equals ModelConfig(**fields) on every preset)."""
    cfg = object.__new__(ModelConfig)
    cfg.__dict__.update(fields)
    cfg.__post_init__()
    return cfg


@dataclass(frozen=True)
class _Invalid:
    """An axis value its field cannot hold: the points with it are skipped with `reason`."""

    text: str
    reason: str


def _config_value(field: str, type_name: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return parse_field_value(field, type_name, value)
    except SizingError as exc:
        return _Invalid(value, str(exc))


def _shown(point: dict[str, Any]) -> dict[str, Any]:
    return {k: v.text if isinstance(v, _Invalid) else v for k, v in point.items()}


@dataclass(frozen=True)
class _RunPoint:
    """One point of the run axes, checked once for every config: the TrainingRun (validated by
    its own __post_init__), the GPU's peak, or the reason the point is invalid."""

    point: dict[str, Any]
    seq_len: int | None
    attention: str
    recompute: str
    gpu: str
    run: TrainingRun | None = None  # None: no tokens
    dtype: str | None = None
    peak: float = 0.0
    error: str | None = None

    @classmethod
    def prepare(cls, point: dict[str, Any], defaults: dict[str, Any], target) -> _RunPoint:
        v = {**defaults, **point}
        seq_len = v["seq_len"] if v["seq_len"] is not None else target.context
        tokens = v["tokens"] if v["tokens"] is not None else target.preset and target.preset.training_tokens
        base = cls(point, seq_len, v["attention"], v["recompute"], v["gpu"])
        try:
            require_choice("attention", v["attention"], ATTENTION_CONVENTIONS)
            require_choice("recompute", v["recompute"], RECOMPUTE_MODES)
            if seq_len is None:
                raise SizingError("seq_len must be given (a config that is not a preset states no context)")
            gpu = get_gpu(v["gpu"])
            if not tokens:
                return dataclasses.replace(base, gpu=gpu.key)
            fields = ("dtype", "mfu", "num_gpus", "price_per_gpu_hour")
            run = TrainingRun(tokens=tokens, gpu=gpu.key, **{f: v[f] for f in fields})
            dtype = run.dtype or gpu.default_dtype
            return dataclasses.replace(base, gpu=gpu.key, run=run, dtype=dtype, peak=gpu.peak_flops_per_second(dtype))
        except SizingError as exc:
            return dataclasses.replace(base, error=str(exc))


class _LeanModel:
    """One config's figures, computed once and reused across the run points."""

    def __init__(self, cfg: ModelConfig):
        self.cfg = cfg
        self.total = P.total_params(cfg)
        self.embedding = P.embedding_params(cfg)
        self.active = self.total - P.inactive_expert_params(cfg)
        self._forward: dict[tuple[int, str], int] = {}

    def forward(self, seq_len: int, attention: str) -> int:
        """Forward FLOPs of one sequence (FlopBreakdown.forward, from the FLOP_TERMS functions
        without their formula text); recomputation does not enter the model FLOPs of a row."""
        key = (seq_len, attention)
        if key not in self._forward:
            self._forward[key] = F.forward_flops(self.cfg, seq_len, attention)
        return self._forward[key]

    def row(self, rp: _RunPoint, memory: bool) -> dict[str, Any]:
        """The headline figures at one run point: estimate()'s, from the same functions
        (model_flops_per_token is forward + backward per token; training_cost's steps, with the
        run checked once in _RunPoint)."""
        cfg = self.cfg
        cfg.check_context(rp.seq_len, "seq_len")
        forward = self.forward(rp.seq_len, rp.attention)
        per_token = F.per_token(F.TRAINING_PER_FORWARD * forward, rp.seq_len)
        row: dict[str, Any] = dict.fromkeys(HEADLINE_COLUMNS)
        row.update(
            params_total=self.total,
            params_active=self.active,
            params_non_embedding=self.total - self.embedding,
            seq_len=rp.seq_len,
            attention=rp.attention,
            recompute=rp.recompute,
            forward_flops_per_token=F.per_token(forward, rp.seq_len),
            training_flops_per_token=per_token,
            flops_6n_per_token=F.kaplan_6n_per_token(self.active),
            gpu=rp.gpu,
        )
        run = rp.run
        if run is not None:
            flops = training_flops(per_token, run.tokens)
            hours = gpu_hours(flops, rp.peak, run.mfu)
            row.update(
                tokens=run.tokens,
                training_flops=flops,
                dtype=rp.dtype,
                mfu=run.mfu,
                num_gpus=run.num_gpus,
                gpu_hours=hours,
                days=wall_clock_days(hours, run.num_gpus),
                price_per_gpu_hour=run.price_per_gpu_hour,
                cost_usd=cost_usd(hours, run.price_per_gpu_hour),
            )
        if memory:
            row.update(_memory_columns(cfg, rp.seq_len, rp.gpu))
        return row


def _memory_columns(cfg: ModelConfig, seq_len: int, gpu: str) -> dict[str, Any]:
    from sizing.memory import summary_for_estimate

    m = summary_for_estimate(cfg, seq_len, gpu)
    return {
        "inference_memory_bytes": m.inference.total_bytes,
        "inference_fits": m.inference.fits,
        "training_memory_bytes": m.training.per_gpu_bytes,
        "training_fits": m.training.fits,
        "training_max_micro_batch": m.training.max_micro_batch,
    }


def sweep(model: Any, grid: dict[str, Any] | None = None, *, memory: bool = False, **axes: Any):
    """A pandas DataFrame, one row per valid grid point (pandas imported here):

        sweep("llama2-7b", n_layers=[24, 32, 48], d_model="4096,5120", tokens=["1T", "2T"], gpu=["h100", "b200"])

    Columns: the grid's fields, then HEADLINE_COLUMNS (documented in sizing.rows.COLUMNS), and
    MEMORY_COLUMNS with memory=True. The skipped points and their reasons are in
    `frame.attrs["skipped"]` (a list of {"point": ..., "reason": ...})."""
    from sizing.rows import rows_frame

    if grid is not None and not isinstance(grid, dict):
        raise SizingError(f"grid ({show(grid)}) must be a dict of field -> values, e.g. {{'n_layers': [24, 32]}}")
    grid = {**(grid or {}), **axes}
    rows, skipped = sweep_rows(model, grid, memory=memory)
    columns = list(grid) + [c for c in HEADLINE_COLUMNS + (MEMORY_COLUMNS if memory else []) if c not in grid]
    frame = rows_frame(rows, columns)
    frame.attrs["skipped"] = [s.to_dict() for s in skipped]
    return frame


def grid_size(grid: dict[str, Iterable]) -> int:
    n = 1
    for field, values in grid.items():
        n *= len(parse_values(field, values))
    return n


__all__ = ["HEADLINE_COLUMNS", "MEMORY_COLUMNS", "RUN_FIELDS", "Skipped", "grid_size", "sweep", "sweep_rows"]
