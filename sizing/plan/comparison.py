"""Several models side by side: one Estimate per model under one workload, one row each.

>>> from sizing.plan.comparison import compare
>>> [e.params.total for e in compare(["llama2-7b", "mistral-7b"], seq_len=4096, tokens="1T").estimates]
[6738415616, 7241732096]

The models are compared at one context length when `seq_len` is given; left None, each runs
at its own (a preset's training context, a config file's max_position_embeddings) and
`same_context` of the result says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sizing.estimate import Estimate, estimate
from sizing.inputs import ModelConfig, Preset
from sizing.rows import COLUMNS, estimate_row
from sizing.validate import SizingError
from sizing.vocabulary import DEFAULT_GPU


@dataclass(frozen=True)
class Comparison:
    estimates: tuple[Estimate, ...]
    seq_len: int | None  # the one context every model ran at; None: each at its own

    @property
    def context_note(self) -> str:
        if self.seq_len is not None:
            return f"every model at T = {self.seq_len}"
        lengths = sorted({e.flops.seq_len for e in self.estimates})
        same = f" (all {lengths[0]})" if len(lengths) == 1 else ""
        return f"each model at its own context{same}: see seq_len and seq_len_source; pass --seq-len for one T"

    def rows(self) -> list[dict[str, Any]]:
        return [estimate_row(e) for e in self.estimates]

    def to_frame(self):
        """A pandas DataFrame, one row per model (pandas imported here)."""
        from sizing.rows import rows_frame

        return rows_frame(self.rows(), list(COLUMNS))

    def to_dict(self) -> dict[str, Any]:
        return {"context": self.context_note, "seq_len": self.seq_len, "columns": COLUMNS, "rows": self.rows()}


def compare(
    models: Sequence[str | ModelConfig | Preset],
    *,
    seq_len: int | str | None = None,
    attention: str = "full",
    recompute: str | None = None,
    tokens: int | str | None = None,
    gpu: str = DEFAULT_GPU,
    dtype: str | None = None,
    mfu: float | None = None,
    num_gpus: int | None = None,
    price_per_gpu_hour: float | None = None,
    memory: bool = True,
    names: Sequence[str] | None = None,
) -> Comparison:
    """sizing.estimate for each model (preset names, config file paths, Presets, ModelConfigs)
    with the same workload. A ModelConfig has no context of its own: give seq_len. The MFU is
    estimate()'s: `mfu` when given, the step model's with num_gpus, else the constant, assumed."""
    if not models:
        raise SizingError("models (none given) must name at least one model")
    if names is not None and len(names) != len(models):
        raise SizingError(f"names ({len(names)}) must give one name per model ({len(models)})")
    estimates = tuple(
        estimate(
            m,
            seq_len=seq_len,
            attention=attention,
            recompute=recompute,
            tokens=tokens,
            gpu=gpu,
            dtype=dtype,
            mfu=mfu,
            num_gpus=num_gpus,
            price_per_gpu_hour=price_per_gpu_hour,
            memory=memory,
            name=names[i] if names else None,
        )
        for i, m in enumerate(models)
    )
    return Comparison(estimates, estimates[0].flops.seq_len if seq_len is not None else None)
