"""`serve()`: the serving estimate of one model on one GPU type: prefill and decode on the
roofline (roofline.py) from the work of each (work.py), time to first token, time per output
token, tokens/s, $ per million tokens and memory per GPU.

The batch is static: b sequences of P prompt tokens are prefilled together (in chunks of
`prefill_chunk` tokens when given), then decoded in lockstep for O - 1 steps (the prefill
yields the first output token). Tensor parallelism over tp GPUs splits FLOPs, weights and KV
heads evenly (tp must divide the kv heads); gpus / tp replicas serve independent batches.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..config import ModelConfig
from ..default_gpu import default_gpu_for
from ..hardware import GPU, get_gpu
from ..memory.kv import dtype_bytes, inference_weights_bytes, kv_cache_bytes
from ..memory.prefill import prefill_activation_peak_bytes, prefill_tokens
from ..presets import get_preset
from ..validate import MAX_PRICE, SizingError, require_choice, require_fraction, require_int, require_number, show
from ..vocabulary import (
    ATTENTION_CONVENTIONS,
    DEFAULT_SERVE_ATTENTION,
    DEFAULT_SERVE_BANDWIDTH_EFFICIENCY,
    DEFAULT_SERVE_COMPUTE_EFFICIENCY,
    DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
    SERVE_ACTIVATION_DTYPES,
    STORAGE_DTYPES,
    ceil_div,
)
from .result import ServeEstimate, ServeSettings, StepEstimate
from .roofline import (
    Roofline,
    compute_seconds,
    memory_seconds,
    ridge_intensity,
    smallest_compute_bound_batch,
    sum_of_steps,
    tp_allreduces_per_layer,
    tp_ring_allreduce_seconds,
)
from .work import decode_step_flops, prefill_flops, step_bytes

__all__ = ["ServeEstimate", "serve"]


@dataclass(frozen=True)
class _Machine:
    """The settings every roofline evaluation reads."""

    cfg: ModelConfig
    gpu: GPU
    s: ServeSettings
    peak: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "peak", self.gpu.peak_flops_per_second(self.s.activation_dtype))

    def roofline(self, flops: float, n_bytes: float, tokens: int) -> Roofline:
        """Per GPU: FLOPs and bytes split over tp, plus the all-reduces of `tokens` activations."""
        s, cfg = self.s, self.cfg
        comm = 0.0
        if s.tp > 1:
            buffer = tokens * cfg.d_model * dtype_bytes(1, s.activation_dtype)
            link = self.gpu.nvlink_gbs * 1e9
            comm = cfg.n_layers * tp_allreduces_per_layer(cfg.parallel_block)
            comm *= tp_ring_allreduce_seconds(buffer, s.tp, link, s.bandwidth_efficiency)
        return Roofline(
            flops / s.tp,
            n_bytes / s.tp,
            compute_seconds(flops / s.tp, self.peak, s.compute_efficiency),
            memory_seconds(n_bytes / s.tp, self.gpu.hbm_bytes_per_second, s.bandwidth_efficiency),
            comm,
        )

    def decode_step(self, context: int, batch: int | None = None) -> StepEstimate:
        b = self.s.batch if batch is None else batch
        flops = decode_step_flops(self.cfg, context, b)
        moved = step_bytes(self.cfg, context, b, self.s.weight_dtype, self.s.kv_dtype)
        return StepEstimate(context, flops, moved, self.roofline(flops, moved.total, b))

    def prefill(self) -> tuple[int, int, float, Roofline]:
        """(FLOPs, forwards, bytes, roofline) of the batch's prefill: the weights read once per
        forward (per chunk of `prefill_chunk` tokens when given), the KV cache written."""
        cfg, s = self.cfg, self.s
        per_forward = prefill_tokens(s.prompt, s.batch, s.prefill_chunk)
        forwards = ceil_div(s.prompt * s.batch, per_forward)
        flops = prefill_flops(cfg, s.prompt, s.batch, s.attention)
        weights = step_bytes(cfg, s.prompt, 1, s.weight_dtype, s.kv_dtype, new_tokens=per_forward).weight_bytes
        n_bytes = forwards * weights + kv_cache_bytes(cfg, s.prompt, s.batch, s.kv_dtype)
        return flops, forwards, n_bytes, self.roofline(flops, n_bytes, s.prompt * s.batch)

    def decode_seconds(self, first: int, last: int) -> float:
        """Σ of the decode steps at C = first..last: exact (roofline.sum_of_steps) up to the window,
        then all alike (the window caps the keys and the KV read)."""
        window = self.cfg.sliding_window
        ramp_end = last if window is None else min(last, max(first - 1, window))

        def seconds_at(context: int) -> tuple[float, float, float]:
            r = self.decode_step(context).roofline
            return r.compute_seconds, r.memory_seconds, r.comm_seconds

        capped = last - ramp_end
        return sum_of_steps(seconds_at, first, ramp_end) + capped * self.decode_step(last).roofline.seconds

    def memory(self, batch: int) -> tuple[int, int, int]:
        """(weights, KV cache, prefill peak) bytes per GPU: weights and KV split over tp, the
        prefill peak taken whole (conservative)."""
        cfg, s = self.cfg, self.s
        weights = ceil_div(inference_weights_bytes(cfg, s.weight_dtype), s.tp)
        kv = ceil_div(kv_cache_bytes(cfg, s.prompt + s.output, batch, s.kv_dtype), s.tp)
        n = prefill_tokens(s.prompt, batch, s.prefill_chunk)
        a = dtype_bytes(1, s.activation_dtype)
        return weights, kv, prefill_activation_peak_bytes(cfg, n, min(batch, max(1, n // s.prompt)), a)


def serve(
    model: ModelConfig | str,
    prompt: int,
    output: int,
    batch: int = 1,
    gpu: str | None = None,
    tp: int = 1,
    gpus: int | None = None,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    activation_dtype: str = "bf16",
    attention: str = DEFAULT_SERVE_ATTENTION,
    compute_efficiency: float = DEFAULT_SERVE_COMPUTE_EFFICIENCY,
    bandwidth_efficiency: float = DEFAULT_SERVE_BANDWIDTH_EFFICIENCY,
    price: float = DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
    prefill_chunk: int | None = None,
    name: str | None = None,
    trained_context: int | None = None,
) -> ServeEstimate:
    """Serving `model` (a preset name or a ModelConfig) on `gpu`: b sequences of `prompt` tokens
    generating `output` tokens each, prefilled together (in chunks of `prefill_chunk` tokens), then
    decoded in lockstep. `trained_context` (a preset's own by default) bounds the prompt. A
    SizingError names the field for any bad input. gpu: H100 unless the preset's published run
    names another (sizing.default_gpu)."""
    gpu = gpu if gpu is not None else default_gpu_for(model if isinstance(model, str) else None)
    cfg, name, trained_context = _resolve(model, name, trained_context)
    s = _settings(cfg, prompt, output, batch, tp, gpus, weight_dtype, kv_dtype, activation_dtype, attention)
    s = _with_rates(s, compute_efficiency, bandwidth_efficiency, price, prefill_chunk)
    gpu_entry = get_gpu(gpu)
    if tp > 1 and gpu_entry.nvlink_gbs is None:
        raise SizingError(f"tp ({tp}) needs a GPU link bandwidth; gpu {gpu_entry.key} has none in the table")
    machine = _Machine(cfg, gpu_entry, s)
    notes = _notes(cfg, s, trained_context)
    p_flops, forwards, p_bytes, prefill = machine.prefill()
    first, last = prompt + 1, prompt + output - 1  # the decode steps' contexts: the prefill gave token 1
    mean_context = (first + last + 1) // 2
    weights_gpu, kv_gpu, peak = machine.memory(batch)

    from ..memory.search import largest_fitting  # the one "largest n that fits" search

    return ServeEstimate(
        model=name,
        config=cfg,
        gpu=gpu_entry,
        settings=s,
        peak_flops_per_second=machine.peak,
        prefill_flops=p_flops,
        prefill_forwards=forwards,
        prefill_bytes=p_bytes,
        prefill=prefill,
        first_step=machine.decode_step(first),
        last_step=machine.decode_step(last),
        decode_seconds=machine.decode_seconds(first, last),
        mean_context=mean_context,
        ridge_batch=smallest_compute_bound_batch(lambda b: machine.decode_step(mean_context, b).roofline),
        ridge_intensity=ridge_intensity(
            machine.peak, gpu_entry.hbm_bytes_per_second, compute_efficiency, bandwidth_efficiency
        ),
        weights_bytes_per_gpu=weights_gpu,
        kv_bytes_per_request=kv_cache_bytes(cfg, prompt + output, 1, kv_dtype),
        kv_bytes_per_gpu=kv_gpu,
        prefill_peak_bytes=peak,
        max_batch=largest_fitting(lambda b: sum(machine.memory(b)), gpu_entry.memory_bytes),
        notes=tuple(notes),
    )


def _resolve(model: ModelConfig | str, name: str | None, trained: int | None) -> tuple[ModelConfig, str | None, int]:
    if isinstance(model, str):
        preset = get_preset(model)
        return preset.config, name or preset.name, trained if trained is not None else preset.context
    if not isinstance(model, ModelConfig):
        raise SizingError(f"model ({show(model)}) must be a preset name or a ModelConfig")
    return model, name, trained


def _settings(
    cfg: ModelConfig,
    prompt: int,
    output: int,
    batch: int,
    tp: int,
    gpus: int | None,
    weight_dtype: str,
    kv_dtype: str,
    activation_dtype: str,
    attention: str,
) -> ServeSettings:
    """The workload, every input checked, each error naming its field and what is valid."""
    require_int("batch", batch)
    require_int("prompt", prompt)
    require_int("output", output, minimum=2)
    cfg.check_context(prompt + output, "prompt + output")
    require_int("tp", tp)
    for field_name, heads in (("n_kv_heads", cfg.kv_heads), ("n_heads", cfg.n_heads)):
        if heads % tp:
            valid = ", ".join(str(n) for n in range(1, heads + 1) if heads % n == 0)
            raise SizingError(
                f"tp ({tp}) must divide {field_name} ({heads}), each rank holding whole heads; valid: {valid}"
            )
    gpus = tp if gpus is None else require_int("gpus", gpus)
    if gpus % tp:
        raise SizingError(f"gpus ({gpus}) must be a multiple of tp ({tp}): gpus / tp replicas")
    require_choice("weight_dtype", weight_dtype, STORAGE_DTYPES)
    require_choice("kv_dtype", kv_dtype, STORAGE_DTYPES)
    require_choice("activation_dtype", activation_dtype, SERVE_ACTIVATION_DTYPES)
    require_choice("attention", attention, ATTENTION_CONVENTIONS)
    return ServeSettings(batch, prompt, output, tp, gpus, weight_dtype, kv_dtype, activation_dtype, attention)


def _with_rates(
    s: ServeSettings, compute_efficiency: float, bandwidth_efficiency: float, price: float, chunk: int | None
) -> ServeSettings:
    require_fraction("compute_efficiency", compute_efficiency)
    require_fraction("bandwidth_efficiency", bandwidth_efficiency)
    require_number("price", price, 0, MAX_PRICE)
    if chunk is not None:
        require_int("prefill_chunk", chunk)
    return dataclasses.replace(
        s,
        compute_efficiency=compute_efficiency,
        bandwidth_efficiency=bandwidth_efficiency,
        price_per_gpu_hour=price,
        prefill_chunk=chunk,
    )


def _notes(cfg: ModelConfig, s: ServeSettings, trained_context: int | None) -> list[str]:
    notes = [
        f"prefill FLOPs counted {s.attention}"
        + (" (serving kernels skip the masked tiles)" if s.attention == "causal" else " (T keys per query)"),
        "static batch: prompts prefilled together, then decoded in lockstep; not counted: kernel launch and "
        "all-reduce latency, scheduling, sampling",
    ]
    if cfg.is_moe:
        notes.append(
            f"MoE: uniform independent routing assumed, E·(1 - (1 - k/E)^b) distinct experts of {cfg.n_experts} "
            "read per layer per step"
        )
    if trained_context is not None:
        if s.prompt > trained_context:
            raise SizingError(
                f"prompt ({s.prompt}) exceeds the model's context ({trained_context}); use a prompt of at most "
                f"{trained_context} tokens"
            )
        if s.prompt + s.output > trained_context:
            notes.append(
                f"prompt + output ({s.prompt + s.output}) runs past the model's context ({trained_context}): "
                "the cost is computed, the quality there is not the published one"
            )
    return notes
