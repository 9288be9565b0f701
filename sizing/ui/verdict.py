"""The fit verdict of each endpoint's answer, read from its JSON: the one place the page and
`fits_by_gpu` learn "does it fit" for a question."""

from __future__ import annotations

# what each verdict means, shown beside it on the page
VERDICT_LABELS = {
    "estimate": "training memory per GPU: the assumed layout's most-loaded GPU with a GPU count, else one GPU "
    "(bf16-mixed AdamW, micro-batch 1, no ZeRO)",
    "memory": "memory per GPU for the settings given",
    "parallel": "the most-loaded rank of the layout",
    "serve": "weights + KV cache + prefill peak per GPU; with a rate, a layout that serves it",
    "plan": "at least one of the shapes, for training",
    "compare": "every model, training memory on one GPU",
    "hybrid": "weights + KV cache + recurrent state of the batch at the context, on the GPU given",
}


def verdict(endpoint: str, result: dict) -> bool | None:
    """True / False, or None where the answer carries no verdict (estimate --no-memory, hybrid
    without --gpu, the questions that ask no fit: vision, speculate, serve-layout, sweep)."""
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
    if endpoint == "hybrid":
        fit = result.get("fit")
        return None if fit is None else fit["max_batch_at_context"] >= result["batch"]
    return None


def verdict_label(endpoint: str, result) -> str | None:
    """What the verdict of this answer means (serve with a rate asks whether a layout serves it)."""
    if endpoint == "serve" and isinstance(result, dict) and "rate_requests_per_second" in result:
        return "some layout serves the rate within the latency bounds"
    return VERDICT_LABELS.get(endpoint)
