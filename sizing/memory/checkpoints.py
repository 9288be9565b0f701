"""Published checkpoint sizes (sizing/data/published_checkpoints.json) beside the deployed-format
bytes of sizing/memory/quant.py: each row's predicted bytes and its error (reports/serving.md,
tests/test_quant_formats.py)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sizing.inputs import GIB, data_files, get_preset
from sizing.memory.quant import quantized_weights

UNITS = {"GB": 10**9, "GiB": GIB}


@dataclass(frozen=True)
class PublishedCheckpoint:
    model: str
    format: str
    size: float
    unit: str
    source: str

    @property
    def published_bytes(self) -> float:
        return self.size * UNITS[self.unit]

    @property
    def predicted_bytes(self) -> int:
        return quantized_weights(get_preset(self.model).config, self.format).bytes

    @property
    def error(self) -> float:
        """predicted / published - 1."""
        return self.predicted_bytes / self.published_bytes - 1


@cache
def published_checkpoints() -> tuple[PublishedCheckpoint, ...]:
    return tuple(PublishedCheckpoint(**r) for r in data_files.builtin("published_checkpoints.json")["rows"])
