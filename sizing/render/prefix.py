"""`sizing serve --prefix-cached`: the prefix-cached prefill and KV cache beside the plain ones."""

from __future__ import annotations

import json

from sizing.inputs import format_gib
from sizing.render.tables import heading, table
from sizing.serve import PrefixCache


def prefix_rows(p: PrefixCache) -> list[list]:
    return [
        ["shared prefix", f"{p.shared} of {p.prefix} tokens", f"whole blocks of {p.block} tokens"],
        [
            "prefill FLOPs",
            f"{p.prefill_flops:.4g} (uncached {p.prefill_flops_uncached:.4g})",
            "causal P - S (lm_head once)",
        ],
        [
            "time to first token",
            f"{p.ttft_seconds * 1e3:.1f} ms (uncached {p.ttft_seconds_uncached * 1e3:.1f} ms)",
            "suffix prefill; prefix KV read",
        ],
        [
            "KV cache at P + O",
            f"{format_gib(p.kv_bytes)} (unshared {format_gib(p.kv_bytes_unshared)})",
            "b·KV(P + O) - (b - 1)·KV(S)",
        ],
    ]


def with_prefix_cache(text: str, p: PrefixCache, fmt: str) -> str:
    """The serve report with the prefix-cache section added (JSON: a "prefix_cache" key)."""
    if fmt == "json":
        return json.dumps(json.loads(text) | {"prefix_cache": p.to_dict()}, indent=2, allow_nan=False)
    if fmt == "csv":
        return text + "\n" + "\n".join(f"prefix_cache.{k},{v}" for k, v in p.to_dict().items())
    section = [heading("Prefix caching", fmt), table(["quantity", "value", "how"], prefix_rows(p), fmt)]
    return "\n".join([text, "", *section])
