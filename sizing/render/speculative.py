"""`sizing speculate`: speculative decoding's step times, expected tokens, speedup and break-even."""

from __future__ import annotations

import json

from sizing.render.tables import csv_text, heading, table
from sizing.serve import Speculation


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def speculation_rows(s: Speculation) -> list[list]:
    """quantity, value, how."""
    even = s.break_even_acceptance
    return [
        ["target decode step", _ms(s.target_step_seconds), "one token per sequence (roofline)"],
        [f"draft step ({s.drafter})", _ms(s.draft_step_seconds), "one drafter token per sequence"],
        [f"verify step (k + 1 = {s.k + 1} tokens)", _ms(s.verify_step_seconds), "weights and KV read once"],
        [
            "expected tokens per target step",
            f"{s.tokens_per_step:.4f}",
            f"(1 - a^(k+1)) / (1 - a), a = {s.acceptance:g}, k = {s.k} (Leviathan et al. 2023)",
        ],
        ["time per output token", _ms(s.seconds_per_token), "(k x draft + verify) / E"],
        ["speedup", f"{s.speedup:.3f}x", "target step / time per output token"],
        ["break-even tokens per step", f"{s.break_even_tokens:.4f}", "(k x draft + verify) / target step"],
        [
            "break-even acceptance rate",
            "never pays (needs more than k + 1 tokens)" if even is None else f"{even:.4f}",
            "the a where E(a) = break-even tokens",
        ],
    ]


def render_speculation(s: Speculation, fmt: str, title: str) -> str:
    if fmt == "json":
        return json.dumps(s.to_dict(), indent=2, allow_nan=False)
    if fmt == "csv":
        return csv_text(["key", "value"], [[k, v] for k, v in s.to_dict().items()])
    verdict = f"{'pays' if s.speedup > 1 else 'does not pay'}: {s.speedup:.3f}x at acceptance {s.acceptance:g}"
    return "\n".join([heading(title, fmt), table(["quantity", "value", "how"], speculation_rows(s), fmt), verdict])
