"""The fit verdict of each endpoint's answer, read from its JSON: the one place the page and
`fits_by_gpu` learn "does it fit" for a question."""

from __future__ import annotations

# what each verdict means, shown beside it on the page
VERDICT_LABELS = {
    "estimate": "training memory on one GPU (bf16-mixed AdamW, micro-batch 1, no ZeRO)",
    "memory": "memory per GPU for the settings given",
    "parallel": "the most-loaded rank of the layout",
    "serve": "weights + KV cache + prefill peak per GPU; with a rate, a layout that serves it",
    "plan": "at least one of the shapes, for training",
    "compare": "every model, training memory on one GPU",
}


def verdict(endpoint: str, result: dict) -> bool | None:
    """True / False, or None where the answer carries no verdict (estimate --no-memory)."""
    if endpoint == "estimate":
        memory = result.get("memory")
        return None if memory is None else memory["training"]["fits"]
    if endpoint in ("memory", "parallel"):
        return result["fits"]
    if endpoint == "serve":  # one layout's memory, or (with --rate) the capacity plan's best layout
        return result["memory"]["fits"] if "memory" in result else result.get("best") is not None
    if endpoint == "plan":
        return any(shape["fits"] for shape in result["shapes"])
    if endpoint == "compare":
        return all(row["training_fits"] for row in result["rows"])
    raise ValueError(endpoint)
