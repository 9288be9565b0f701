"""The serving step model's efficiencies: one (compute, bandwidth) pair per GPU type and one set
of engine overheads, read from sizing/data/serve_efficiency.json, where each carries its source.

    step seconds = max(FLOPs / (peak x compute), bytes / (HBM x bandwidth)) + TP all-reduces
                   + prefill_forward (a prefill forward) or decode_step (a decode step)
                   + per_sequence x sequences in the forward

The pairs and the overheads are fitted together (log-space least squares; the pair on a 0.05
grid over [0.1, 1]^2, the overheads on the grid the file states) to the published static-batch
rows whose `use` is "calibration" (sizing/data/published_serving.json): one pair per GPU type
with rows, one overhead set for all (the engine's own cost, outside the GPU's roofline). No
per-row fitting: the same numbers serve every model, batch and length on that GPU.

    GPU        rows  compute  bandwidth   (overheads: prefill 5 ms, decode step 3 ms, 40 us/sequence)
    h100-sxm   10    0.40     0.90
    a100-80gb  5     0.65     1.00
    h200       7     0.40     0.90

A GPU without rows takes the pair of the GPU the file names for it (the same die, or the same
kernel generation), with the reason; a GPU absent from the file keeps the stated assumptions
DEFAULT_SERVE_COMPUTE_EFFICIENCY / DEFAULT_SERVE_BANDWIDTH_EFFICIENCY. Every command that
times a forward (`serve`, `serve --rate`, `speculate`, `serve-layout`, the UI) takes its
numbers from serve_efficiency(), so they agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sizing.inputs import data_files, get_gpu
from sizing.serve.roofline import StepOverhead
from sizing.vocabulary import DEFAULT_SERVE_BANDWIDTH_EFFICIENCY, DEFAULT_SERVE_COMPUTE_EFFICIENCY

CALIBRATION_SOURCE = "fit to sizing/data/published_serving.json (rows used for calibration)"
GRID_STEP = 0.05
_MS, _US = 1e3, 1e6  # per second


@dataclass(frozen=True)
class ServeEfficiency:
    """What one GPU type reaches when serving: its pair, the engine's overheads, and why."""

    gpu: str
    compute: float
    bandwidth: float
    overhead: StepOverhead
    basis: str  # "fitted on N rows", "as <gpu>: why", or "assumed"
    attention: float | None = None  # the decode attention kernel's share of HBM on its KV reads (None: bandwidth)

    @property
    def pair(self) -> tuple[float, float]:
        return self.compute, self.bandwidth


@cache
def _table() -> tuple[dict[str, tuple[float, float, float | None, str]], StepOverhead]:
    content = data_files.builtin("serve_efficiency.json")
    o = content["overhead"]
    overhead = StepOverhead(
        o["prefill_forward_us_per_layer"] / _US, o["decode_step_us_per_layer"] / _US, o["per_sequence_us"] / _US
    )
    pairs = {
        r["gpu"]: (r["compute"], r["bandwidth"], r.get("attention"), f"fitted on {r['rows']} rows: {r['source']}")
        for r in content["fitted"]
    }
    for r in content["borrowed"]:
        c, b, a, _ = pairs[r["from"]]
        pairs[r["gpu"]] = (c, b, a, f"as {r['from']}: {r['why']}; {r['uncertainty']}")
    return pairs, overhead


def engine_overhead() -> StepOverhead:
    """The engine's fixed costs per forward (the file's `overhead`)."""
    return _table()[1]


def session_per_sequence_seconds() -> float:
    """The per-sequence cost of TensorRT-LLM's static gptSessionBenchmark (v0.5-v0.7), fitted with
    the overheads on the published rows it measured; the model of a current engine has none."""
    content = data_files.builtin("serve_efficiency.json")
    return content["overhead"]["static_session_per_sequence_us"] / _US


def serve_efficiency(gpu: str) -> ServeEfficiency:
    """The efficiencies `gpu` serves at when none are given."""
    key = get_gpu(gpu).key
    pairs, overhead = _table()
    c, b, a, basis = pairs.get(
        key, (DEFAULT_SERVE_COMPUTE_EFFICIENCY, DEFAULT_SERVE_BANDWIDTH_EFFICIENCY, None, "assumed: no row, no kin")
    )
    return ServeEfficiency(key, c, b, overhead, basis, a)


def borrowed_note(gpu: str) -> str | None:
    """A note for the output when `gpu`'s efficiencies are not fitted on its own rows."""
    e = serve_efficiency(gpu)
    if e.basis.startswith("fitted"):
        return None
    return f"{e.gpu}'s efficiencies {e.compute:g} / {e.bandwidth:g} are not its own: {e.basis}"


def fitted_efficiencies() -> dict[str, tuple[float, float]]:
    """The pairs fitted on each GPU's own rows (not the borrowed ones)."""
    content = data_files.builtin("serve_efficiency.json")
    return {r["gpu"]: (r["compute"], r["bandwidth"]) for r in content["fitted"]}


def fit_groups() -> dict[str, list[str]]:
    """GPUs fitted together on their rows, by group (one die: H100 and H200 share the GH100's pair)."""
    groups: dict[str, list[str]] = {}
    for r in data_files.builtin("serve_efficiency.json")["fitted"]:
        groups.setdefault(r.get("group", r["gpu"]), []).append(r["gpu"])
    return groups


def fitted_attention() -> dict[str, float | None]:
    """The attention efficiency fitted with each GPU's pair (None where the file gives none)."""
    content = data_files.builtin("serve_efficiency.json")
    return {r["gpu"]: r.get("attention") for r in content["fitted"]}


def default_efficiencies(gpu: str) -> tuple[float, float]:
    """(compute, bandwidth) efficiency a serving command uses on `gpu` when none is given."""
    return serve_efficiency(gpu).pair


def __getattr__(name: str):
    if name == "SERVE_EFFICIENCY_BY_GPU":  # the fitted pairs, by GPU (read from the data file)
        return fitted_efficiencies()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
