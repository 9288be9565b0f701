"""Render a sizing.serve ServeEstimate as a table, markdown, JSON or CSV (`sizing serve`)."""

from __future__ import annotations

import json

from sizing.inputs import format_gib, format_int, format_si
from sizing.render.memory import flat_items
from sizing.render.tables import csv_text, heading, table
from sizing.serve import ServeEstimate


def render_serve(est: ServeEstimate, fmt: str = "table") -> str:
    if fmt == "json":
        return json.dumps(est.to_dict(), indent=2, allow_nan=False)
    if fmt == "csv":
        return csv_text(["key", "value"], [list(item) for item in flat_items(est)])
    parts = [
        heading(serve_heading(est), fmt),
        table(["quantity", "value", "how"], serve_rows(est), fmt),
        "",
        summary_line(est),
    ]
    parts += [f"note: {note}" for note in est.notes]
    return "\n".join(parts)


def format_seconds(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:,.3g} s" if seconds < 100 else f"{seconds:,.0f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def _usd(value: float) -> str:
    return f"${value:,.4g}"


def _rate(value: float) -> str:
    return f"{value:,.1f}" if value < 1e5 else format_si(value)


def serve_heading(est: ServeEstimate) -> str:
    s = est.settings
    return (
        f"Serving {est.model or 'model'} on {s.gpus} x {est.gpu.key} (tp {s.tp}): batch {s.batch}, "
        f"prompt {s.prompt}, output {s.output}; weights {s.weight_dtype}, KV {s.kv_dtype}, "
        f"compute {s.activation_dtype}"
    )


def serve_rows(est: ServeEstimate) -> list[list]:
    """The table of `sizing serve`: prefill, decode, throughput, cost, then memory."""
    return _prefill_rows(est) + _decode_rows(est) + _throughput_rows(est) + _cost_rows(est) + _memory_rows(est)


def _prefill_rows(est: ServeEstimate) -> list[list]:
    s, gpu = est.settings, est.gpu
    peak = f"{est.peak_flops_per_second / 1e12:,.4g} TFLOP/s x {s.compute_efficiency:g}"
    bw = f"{gpu.bandwidth_tbs:g} TB/s x {s.bandwidth_efficiency:g}"
    chunk = f", {est.prefill_forwards} chunks of {s.prefill_chunk}" if est.prefill_forwards > 1 else ""
    return [
        [f"prefill FLOPs ({s.attention})", format_si(est.prefill_flops), "b·(blocks over P + lm_head on the last)"],
        [
            "prefill bytes (weights + KV written)",
            format_gib(est.prefill_bytes),
            f"weights once per forward{chunk}",
        ],
        ["time to first token", format_seconds(est.ttft_seconds), f"{est.prefill.bound}-bound ({peak}; {bw})"],
    ]


def _decode_rows(est: ServeEstimate) -> list[list]:
    """The first and last decode steps' work, the expert reads of MoE, TPOT and its TP share."""
    s, gpu = est.settings, est.gpu
    first, last = est.first_step, est.last_step
    rows = [
        [
            f"decode step FLOPs (C = {first.context}..{last.context})",
            f"{format_si(first.flops)}..{format_si(last.flops)}",
            "b·decode FLOPs per token at C",
        ],
        [
            "decode step bytes: weights + KV read",
            f"{format_gib(first.bytes.weight_bytes)} + {format_gib(first.bytes.kv_bytes)}"
            f"..{format_gib(last.bytes.kv_bytes)}",
            "touched parameters + KV slices",
        ],
    ]
    if est.config.is_moe:
        rows.append(
            [
                "MoE experts read per layer",
                f"{first.bytes.experts_read_per_layer:.3g} of {est.config.n_experts}",
                "E·(1 - (1 - k/E)^b), uniform routing",
            ]
        )
    rows += [
        [
            "time per output token",
            format_seconds(est.tpot_seconds),
            f"{est.decode_bound}-bound, {last.roofline.arithmetic_intensity:.3g} FLOPs/byte at C = {last.context}",
        ],
    ]
    if s.tp > 1:
        rows.append(
            [
                "  of which TP all-reduce",
                format_seconds(last.roofline.comm_seconds),
                f"ring 2(n-1)/n·b·d·a per all-reduce, {gpu.nvlink_gbs:g} GB/s x {s.bandwidth_efficiency:g}",
            ]
        )
    return rows


def _throughput_rows(est: ServeEstimate) -> list[list]:
    s = est.settings
    ridge = "never" if est.ridge_batch is None else format_int(est.ridge_batch)
    return [
        ["request latency", format_seconds(est.request_seconds), "TTFT + (O - 1) decode steps"],
        ["tokens/s per sequence", _rate(est.decode_tokens_per_second_per_sequence), "1 / TPOT"],
        ["tokens/s per GPU", _rate(est.decode_tokens_per_second_per_gpu), "b / TPOT / tp"],
        ["tokens/s total", _rate(est.decode_tokens_per_second), f"{s.replicas} replica(s) x b / TPOT"],
        ["output tokens/s with prefill", _rate(est.output_tokens_per_second), "b·O per request time"],
        [
            f"compute-bound from batch (C = {est.mean_context})",
            ridge,
            f"ridge {est.ridge_intensity:.4g} FLOPs/byte at the efficiencies "
            f"(ideal {est.peak_flops_per_second / est.gpu.hbm_bytes_per_second:.4g})"
            + ("; the KV read grows as fast" if ridge == "never" else ""),
        ],
    ]


def _cost_rows(est: ServeEstimate) -> list[list]:
    price = est.settings.price_per_gpu_hour
    return [
        ["$ per M input tokens", _usd(est.usd_per_million_input_tokens), f"${price:g}/GPU-h x TTFT"],
        ["$ per M output tokens", _usd(est.usd_per_million_output_tokens), f"${price:g}/GPU-h x TPOT"],
    ]


def _memory_rows(est: ServeEstimate) -> list[list]:
    s = est.settings
    return [
        ["weights per GPU", format_gib(est.weights_bytes_per_gpu), f"N·bytes / tp ({s.weight_dtype})"],
        ["KV cache per GPU", format_gib(est.kv_bytes_per_gpu), f"b sequences at P + O, this rank's KV ({s.kv_dtype})"],
        ["KV cache per request", format_gib(est.kv_bytes_per_request), "one sequence at P + O"],
        ["prefill activation peak", format_gib(est.prefill_peak_bytes), "largest transient of a prefill forward"],
        [
            "memory per GPU",
            format_gib(est.memory_bytes_per_gpu),
            f"{'fits' if est.fits else 'does NOT fit'} {format_gib(est.gpu.memory_bytes)}",
        ],
        ["max batch at P + O", format_int(est.max_batch) if est.max_batch else "none fits", "per replica"],
    ]


def summary_line(est: ServeEstimate) -> str:
    return (
        f"TTFT {format_seconds(est.ttft_seconds)} ({est.prefill.bound}-bound), "
        f"{format_seconds(est.tpot_seconds)} per output token ({est.decode_bound}-bound), "
        f"{_rate(est.decode_tokens_per_second)} tokens/s, "
        f"{_usd(est.usd_per_million_output_tokens)}/M output tokens, "
        f"{_usd(est.usd_per_million_input_tokens)}/M input tokens"
    )
