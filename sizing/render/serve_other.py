"""`sizing serve` of a hybrid or a vision-language preset (sizing.serve.hybrid_vlm): latency,
throughput and memory per GPU, term by term."""

from __future__ import annotations

import json

from sizing.inputs import format_gib
from sizing.render.tables import csv_text, heading, table


def render_other_serve(r, fmt: str = "table", memory_only: bool = False) -> str:
    """The answer as a table (or JSON / CSV); `memory_only`: the memory terms alone, as
    `sizing memory --inference` asks."""
    if fmt == "json":
        return json.dumps(r.to_dict(), indent=2, allow_nan=False)
    timing = [
        ["time to first token", f"{r.ttft_seconds * 1e3:,.1f} ms"],
        ["time per output token", f"{r.tpot_seconds * 1e3:,.2f} ms"],
        ["tokens/s (the batch)", f"{r.tokens_per_second:,.1f}"],
    ]
    rows = [
        *([] if memory_only else timing),
        *([f"memory: {name}", format_gib(b)] for name, b in r.memory.items()),
        ["memory per GPU", f"{format_gib(r.memory_bytes)} of {format_gib(r.gpu_memory_bytes)}"],
    ]
    if fmt == "csv":
        return csv_text(["quantity", "value"], rows)
    what = f"Inference memory of {r.name}" if memory_only else f"Serving {r.name}"
    tokens = f"context {r.prompt}" if memory_only else f"prompt {r.prompt}, output {r.output}"
    title = f"{what} ({r.kind}) on {r.tp} x {r.gpu}: batch {r.batch}, {tokens}"
    verdict = "fits" if r.fits else "does not fit: more memory per GPU than the GPU has (raise --tp or quantize)"
    notes = "\n".join(f"note: {n}" for n in r.notes)
    return "\n".join([heading(title, fmt), table(["quantity", "value"], rows, fmt), verdict, notes])
