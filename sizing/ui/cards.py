"""The answer cards: the few numbers a person asked each question for, read from the command's
own JSON (never computed here: each card names the JSON path its value comes from, and the tests
compare the two), with the band the step-time model puts on a time answer where the JSON carries
one, and for the memory questions the stacked bar of what fills the GPU and the advice that
makes it fit.

A card: {label, path, value, unit, band, band_path, note}. `unit` is one of sizing.ui.fields'
units; `band` is [low, high] from the JSON (`<path>_band`, or the path's band named in BANDS).
"""

from __future__ import annotations

from collections.abc import Callable

from sizing.inputs import format_si

# Where the JSON puts the band of a time answer when it is not the sibling `<key>_band`
# (the step-time model's, sizing.parallel.band): card path -> candidate band paths.
BANDS = {
    "step_seconds": ("step.band", "step.step_band"),
    "mfu": ("step.mfu_band",),
    "training.mfu": ("training.mfu_layout.mfu_band",),
    "training.gpu_hours": ("training.gpu_hours_band", "training.mfu_layout.gpu_hours_band"),
    "training.wall_clock_days": ("training.wall_clock_days_band", "training.mfu_layout.wall_clock_days_band"),
}


def get(result, path: str):
    """The value at a dotted path (list items by index), or None where the path is absent."""
    value = result
    for key in path.split("."):
        if isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        elif isinstance(value, dict) and key in value:
            value = value[key]
        else:
            return None
    return value


def band(result, path: str) -> tuple[list[float] | None, str | None]:
    """[low, high] of the value at `path`, as the JSON states it, and where it was found."""
    for where in (path + "_band", *BANDS.get(path, ())):
        found = get(result, where)
        if isinstance(found, list) and len(found) == 2:
            return found, where
        if isinstance(found, dict):
            low = next((v for k, v in found.items() if k.startswith("low")), None)
            high = next((v for k, v in found.items() if k.startswith("high")), None)
            if isinstance(low, (int, float)) and isinstance(high, (int, float)):
                return [low, high], where
    return None, None


def card(result, path: str, label: str, unit: str, note: str | None = None) -> dict | None:
    """One card, or None where the JSON has no value there."""
    value = get(result, path)
    if value is None:
        return None
    low_high, where = band(result, path)
    return {"label": label, "path": path, "value": value, "unit": unit, "band": low_high, "band_path": where,
            "note": note}  # fmt: skip


def cards_of(result, rows) -> list[dict]:
    """The cards of (path, label, unit[, note]) rows that the JSON has."""
    made = (card(result, *row) for row in rows)
    return [c for c in made if c is not None]


def _on(r, capacity: str = "gpu_memory_bytes") -> str:
    return f"on {r['gpu']} ({r[capacity] / 2**30:.0f} GiB)"


def _gpus(n, gpu) -> str:
    return f"on {n:,} × {gpu}" if isinstance(n, int) else f"on {gpu}"


def estimate(r) -> list[dict]:
    t = r.get("training") or {}
    where = _gpus(t.get("num_gpus"), t.get("gpu_name") or t.get("gpu"))
    rows = [("params.total", "Parameters", "params")]
    if r["params"]["active"] != r["params"]["total"]:
        rows.append(("params.active", "Active parameters", "params", "per token (mixture of experts)"))
    return cards_of(r, rows + [
        ("training.tokens", "Training tokens", "tokens"),
        ("training.flops", "Training compute", "flops", "forward + backward, exact"),
        ("training.gpu_hours", "GPU-hours", "hours", "at the step model's MFU for these GPUs" if t.get("mfu_layout")
         else f"at MFU {t.get('mfu')}"),
        ("training.wall_clock_days", "Days", "days", where),
        ("training.cost_usd", "Cost", "usd", f"at ${t.get('price_per_gpu_hour')} per GPU-hour"),
        ("training.energy_kwh", "Energy", "kwh", f"{t.get('tco2eq') or 0:,.0f} tCO2eq at PUE {t.get('pue')}"),
        ("training.mfu", "MFU", "ratio", f"on {t['mfu_layout']['layout']}" if t.get("mfu_layout") else "assumed"),
    ])  # fmt: skip


def memory(r) -> list[dict]:
    if "terms" in r:  # --engine: the engine's split
        return cards_of(r, [
            ("fits", "Engine starts", "bool"), ("kv_budget_bytes", "KV cache budget", "bytes"),
            ("kv_tokens", "KV tokens", "tokens"), ("max_running_requests", "Requests at max_model_len", "number"),
        ])  # fmt: skip
    if "kv_cache_bytes" in r:  # --inference
        return cards_of(r, [
            ("peak_bytes", "Peak memory", "bytes", _on(r)),
            ("weights_bytes", "Weights", "bytes", r.get("quant") or r.get("weight_dtype")),
            ("kv_cache_bytes", "KV cache", "bytes", f"{r['batch']} × {r['context']:,} tokens"),
            ("max_batch", "Largest batch", "number", f"at {r['context']:,} tokens"),
            ("max_context", "Longest context", "tokens", f"at batch {r['batch']}"),
        ])  # fmt: skip
    if "layout" in r:  # fine-tuning: the plan of sizing parallel
        return parallel(r)
    return cards_of(r, [
        ("per_gpu_bytes", "Memory per GPU", "bytes", _on(r)),
        ("headroom_bytes", "Headroom", "bytes"), ("max_micro_batch", "Largest micro-batch", "number"),
        ("params", "Parameters", "params"),
    ])  # fmt: skip


DIMENSIONS = (("dp", "data-parallel"), ("tp", "tensor-parallel"), ("pp", "pipeline stages"), ("cp", "context-parallel"),
              ("ep", "expert-parallel"))  # fmt: skip


def layout_words(layout: dict) -> str:
    """'512 data-parallel (FSDP full) × 4 tensor-parallel (sequence parallel)': the layout's dict in words."""
    if all(layout.get(key, 1) == 1 for key, _ in DIMENSIONS):
        return "one GPU"
    parts = []
    for key, words in DIMENSIONS:
        if layout.get(key, 1) > 1 or key == "dp":
            extra = []
            if key == "dp" and layout.get("fsdp"):
                extra.append(f"FSDP {layout['fsdp']}")
            elif key == "dp" and layout.get("zero"):
                extra.append(f"ZeRO-{layout['zero']}")
            if key == "tp" and layout.get("sequence_parallel"):
                extra.append("sequence parallel")
            if key == "pp":
                extra.append(f"{layout.get('pp_schedule')}, {layout.get('micro_batches')} micro-batches")
            parts.append(f"{layout[key]:,} {words}" + (f" ({', '.join(extra)})" if extra else ""))
    return " × ".join(parts)


def parallel(r) -> list[dict]:
    gpus = r["workload"].get("gpus")
    many = f" = {gpus:,} GPUs" if gpus and gpus > 1 else ""
    where = f"{layout_words(r['layout'])}{many}, global batch {r['global_batch']:,}"
    return cards_of(r, [
        ("layout_label", "Layout", "text", where),
        ("step_seconds", "Step time", "seconds", f"{r.get('step_model')} step model"),
        ("mfu", "MFU", "ratio", "model FLOPs / (GPU-seconds × peak)"),
        ("wall_clock_days", "Days", "days", "for the training tokens given"),
        ("gpu_hours", "GPU-hours", "hours"),
        ("per_gpu_bytes", "Memory per GPU", "bytes", f"the most-loaded GPU, {_on(r)}"),
    ])  # fmt: skip


def serve(r) -> list[dict]:
    if "rate_requests_per_second" in r:  # --rate: the capacity plan
        return capacity(r)
    return cards_of(r, [
        ("latency.ttft_seconds", "Time to first token", "seconds"),
        ("latency.tpot_seconds", "Time per output token", "seconds"),
        ("throughput.output_tokens_per_second", "Output tokens/s", "tokens_per_second",
         f"batch {get(r, 'settings.batch')} on {get(r, 'settings.gpus')} × {r['gpu']}"),
        ("cost.usd_per_million_output_tokens", "$ per million output tokens", "usd"),
        ("memory.total_bytes_per_gpu", "Memory per GPU", "bytes"), ("memory.max_batch", "Largest batch", "number"),
    ])  # fmt: skip


def capacity(r) -> list[dict]:
    """serve --rate: the layout that serves the rate, and its latency percentiles at that load."""
    best = r.get("best") or {}
    layout = f"tp {best.get('tp')} × pp {best.get('pp')}, weights {best.get('weight_dtype')}" if best else None
    p = f"p{round(100 * r['percentile'])}" if isinstance(r.get("percentile"), (int, float)) else "p99"
    at = (best.get("at_load") or {}) if best else {}
    if p not in (at.get("ttft_seconds") or {}):
        p = "p99"
    return cards_of(r, [
        ("best.gpus", "GPUs", "number", layout), ("best.replicas", "Replicas", "number"),
        ("best.usd_per_million_output_tokens", "$ per million output tokens", "usd"),
        (f"best.at_load.ttft_seconds.{p}", f"Time to first token ({p})", "seconds", "at the rate asked"),
        (f"best.at_load.tpot_seconds.{p}", f"Time per output token ({p})", "seconds", "at the rate asked"),
        ("best.at_load.output_tokens_per_second", "Output tokens/s", "tokens_per_second"),
        ("best.max_requests_per_second_per_replica", "Most requests/s per replica", "per_second",
         f"bound by the {best.get('binding')}" if best.get("binding") else None),
    ])  # fmt: skip


def plan(r) -> list[dict]:
    law = r["law_for_shapes"]
    i = next((n for n, o in enumerate(r["optima"]) if o["key"] == law), 0)
    name = r["optima"][i]["name"]
    return cards_of(r, [
        ("flops", "Compute budget", "flops", r.get("budget")),
        (f"optima.{i}.params", "Compute-optimal parameters", "params", name),
        (f"optima.{i}.tokens", "Compute-optimal tokens", "tokens", name),
        (f"optima.{i}.tokens_per_param", "Tokens per parameter", "number"),
        (f"optima.{i}.losses.{law}", "Predicted loss", "number", "nats per token"),
    ])  # fmt: skip


def compare(r) -> list[dict]:
    rows = []
    for i, row in enumerate(r["rows"][:4]):
        rows += [(f"rows.{i}.params_total", f"{row['model']}: parameters", "params"),
                 (f"rows.{i}.gpu_hours", f"{row['model']}: GPU-hours", "hours")]  # fmt: skip
    return cards_of(r, rows)


def hybrid(r) -> list[dict]:
    return cards_of(r, [
        ("total_params", "Parameters", "params", f"active {format_si(r['active_params'])}"),
        ("memory_bytes.total", "Inference memory", "bytes", f"batch {r['batch']} at {r['context']:,} tokens"),
        ("memory_bytes.all_attention_total", "All-attention model", "bytes", "the same shape, every layer attention"),
        ("memory_bytes.kv_cache", "KV cache", "bytes", f"{r['layers']['attention']} attention layers"),
        ("memory_bytes.ssm_state", "Recurrent state", "bytes", f"{r['layers']['state']} state layers"),
        ("fit.max_batch_at_context", "Largest batch", "number", f"on {get(r, 'fit.gpu')}"),
        ("fit.max_context_at_batch", "Longest context", "tokens", f"on {get(r, 'fit.gpu')}"),
    ])  # fmt: skip


def vision(r) -> list[dict]:
    return cards_of(r, [
        ("params.total", "Parameters", "params", "language model + vision tower + projector"),
        ("params.vision_tower", "Vision tower", "params"),
        ("image_tokens_per_image", "Tokens per image", "tokens"),
        ("flops_per_image", "Encoder FLOPs per image", "flops"),
        ("prefill_flops", "Prefill FLOPs", "flops", f"{r['images']} image(s) + {r['prompt_tokens']} text tokens"),
    ])  # fmt: skip


def speculate(r) -> list[dict]:
    return cards_of(r, [
        ("speedup", "Speed-up", "times", f"k {r['k']}, acceptance {r['acceptance']}"),
        ("tokens_per_step", "Tokens per target step", "number"),
        ("seconds_per_token", "Time per token", "seconds"),
        ("break_even_acceptance", "Break-even acceptance", "ratio"),
    ])  # fmt: skip


def serve_layout(r) -> list[dict]:
    return cards_of(r, [
        ("layouts.0.layout", "Best layout", "text", r.get("why")), ("layouts.0.gpus", "GPUs", "number"),
        ("layouts.0.tokens_per_second_per_gpu", "Tokens/s per GPU", "tokens_per_second"),
        ("layouts.0.tpot_seconds", "Time per output token", "seconds"), ("layouts.0.batch", "Batch", "number"),
    ])  # fmt: skip


def sweep(r) -> list[dict]:
    return cards_of(r, [("notes.0", "Grid", "text")])


CARDS: dict[str, Callable[[dict], list[dict]]] = {
    "estimate": estimate, "memory": memory, "parallel": parallel, "serve": serve, "plan": plan,
    "compare": compare, "hybrid": hybrid, "vision": vision, "speculate": speculate, "serve-layout": serve_layout,
    "sweep": sweep,
}  # fmt: skip


def cards(endpoint: str, result) -> list[dict]:
    return CARDS[endpoint](result)


# What the answer assumed and how its numbers were found, in its own words (shown under the cards).
NOTES = ("training.mfu_source", "training.mfu_meaning", "mfu_meaning", "step.assumptions", "not_modelled", "notes",
         "budget", "convention", "reason_not_modelled", "why")  # fmt: skip


def notes(result) -> list[str]:
    """The answer's own sentences about what it assumed (the JSON's notes, sources and meanings)."""
    found = []
    for path in NOTES:
        value = get(result, path)
        for line in value if isinstance(value, list) else [value]:
            if isinstance(line, str) and line and line not in found:
                found.append(line)
    return found
