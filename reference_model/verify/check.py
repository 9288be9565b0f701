"""The result every check of `sizing verify` returns: a table (headers, raw rows) and an `ok`
flag. Its own module, with no torch and no probe imported, so that the probes (counting,
flop_verify, memory_probe) and the registry (verify) can all depend on it without depending
on each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class CheckResult:
    check: str  # "params", "flops", "memory": a key of reference_model.verify.registry.CHECKS
    model: str  # preset name or config path
    headers: list[str]
    rows: list[list[Any]]  # raw values (ints stay ints; the CLI formats them)
    ok: bool
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "model": self.model,
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
            "rows": [dict(zip(self.headers, row, strict=True)) for row in self.rows],
            "notes": self.notes,
        }
