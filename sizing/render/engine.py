"""`sizing memory --inference --engine`: the engine's split of one GPU, term by term."""

from __future__ import annotations

import json

from sizing.inputs import format_gib, format_int
from sizing.memory import EngineMemory
from sizing.render.tables import csv_text, heading, table


def engine_rows(e: EngineMemory) -> list[list]:
    """term, formula, GiB, source: the budget, what is taken from it, what is left for KV."""
    rows = [[t.name, t.formula, format_gib(t.bytes), t.source] for t in e.terms]
    taken = " - ".join(t.name for t in e.terms[1:])
    rows.append(["KV cache", f"budget - {taken}", format_gib(e.kv_budget_bytes), "what is left becomes KV blocks"])
    rows.append(["KV per token", "all layers, K and V (MLA: latent + rope key)", f"{e.kv_bytes_per_token:,} B", ""])
    rows.append(
        [
            "KV blocks",
            f"floor(KV cache / ({e.block_size} tokens x {e.kv_bytes_per_token:,} B))",
            format_int(e.num_blocks),
            "block_size tokens per block" if e.engine == "vllm" else "one token per page",
        ]
    )
    rows.append(["KV cache tokens", f"blocks x {e.block_size}", format_int(e.kv_tokens), "'GPU KV cache size'"])
    one = e.request_bytes or e.max_model_len * e.kv_bytes_per_token
    rows.append(
        [
            f"max concurrency at {e.max_model_len} tokens",
            f"KV blocks' bytes / one request's {format_gib(one)} (whole blocks; a local layer: window + batch)",
            f"{e.max_concurrency:.2f}x",
            "'Maximum concurrency for ... tokens per request'",
        ]
    )
    rows.append(
        [
            "CUDA graphs (outside the budget)",
            f"fits the {format_gib(e.outside_budget_bytes)} left outside",
            format_gib(e.cuda_graph_bytes),
            "assumed 0.5 GiB; captured after the KV cache",
        ]
    )
    return rows


def engine_verdict(e: EngineMemory) -> str:
    if e.kv_tokens < e.max_model_len:
        return (
            f"does not start: the KV cache holds {e.kv_tokens:,} tokens, fewer than one request of "
            f"max_model_len {e.max_model_len} (lower --context, raise --gpu-memory-utilization, quantize, or add GPUs)"
        )
    if e.cuda_graph_bytes > e.outside_budget_bytes:
        return "does not start: the CUDA graphs do not fit outside the budget (lower --gpu-memory-utilization)"
    return (
        f"starts: {e.kv_tokens:,} KV tokens, {e.max_concurrency:.2f} requests of {e.max_model_len} tokens at once "
        f"(at most --max-num-seqs {e.max_num_seqs} running)"
    )


def render_engine(e: EngineMemory, fmt: str = "table", weights: str = "") -> str:
    if fmt == "json":
        return json.dumps(e.to_dict() | {"weights": weights}, indent=2, allow_nan=False)
    if fmt == "csv":
        d = e.to_dict()
        terms = [[f"terms.{t['name']}", t["bytes"]] for t in d.pop("terms")]
        return csv_text(["key", "value"], [*terms, *([k, v] for k, v in d.items())])
    title = f"{e.engine} memory on {e.gpu} (tp {e.tp}), weights {weights}, max_model_len {e.max_model_len}"
    return "\n".join(
        [heading(title, fmt), table(["term", "formula", "size", "source"], engine_rows(e), fmt), engine_verdict(e)]
    )
