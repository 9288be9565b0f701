"""`serve()`: the serving estimate of one model on one GPU type: prefill and decode on the
roofline (roofline.py) from the work of each (work.py), time to first token, time per output
token, tokens/s, $ per million tokens and memory per GPU.

The batch is static: b sequences of P prompt tokens are prefilled together (in chunks of
`prefill_chunk` tokens when given), then decoded in lockstep for O - 1 steps (the prefill
yields the first output token). Tensor parallelism over tp GPUs splits FLOPs and weights
evenly and the KV heads as kv_heads_per_rank says (replicated when tp > h_kv; the MLA latent
whole on every rank); gpus / tp replicas serve independent batches. Under MLA, `mla` picks the
decode implementation, its FLOPs and its bytes together (absorbed by default).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from sizing.inputs import GPU, ModelConfig, default_gpu_for, get_gpu, get_preset
from sizing.memory import dtype_bytes, kv_heads_per_rank, prefill_activation_peak_bytes, prefill_tokens
from sizing.serve.calibration import borrowed_note, serve_efficiency
from sizing.serve.chunked import chunked_decode_seconds
from sizing.serve.notes import context_notes, serve_notes
from sizing.serve.quant_bytes import WEIGHT_CHOICES, model_weights_bytes, weights_step_bytes
from sizing.serve.result import ServeEstimate, ServeSettings, StepEstimate
from sizing.serve.roofline import (
    GPUS_PER_NODE,
    Roofline,
    StepOverhead,
    compute_seconds,
    memory_seconds,
    ridge_intensity,
    smallest_compute_bound_batch,
    sum_of_steps,
    tp_allreduce_latency_seconds,
    tp_allreduces_per_layer,
    tp_ring_allreduce_seconds,
)
from sizing.serve.work import chunked_prefill_kv_reread_bytes, decode_step_flops, kv_read_bytes_per_rank, prefill_flops
from sizing.validate import SizingError, require_choice, require_efficiency, require_int, require_price, show
from sizing.vocabulary import (
    ATTENTION_CONVENTIONS,
    DEFAULT_MLA_IMPL,
    DEFAULT_SERVE_ATTENTION,
    DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
    MLA_IMPLS,
    SERVE_ACTIVATION_DTYPES,
    STORAGE_DTYPES,
    ceil_div,
)

__all__ = ["ServeEstimate", "context_notes", "serve"]


@dataclass(frozen=True)
class StepModel:
    """The serving step model: the time of one forward (prefill, decode step, verify step, or a
    continuous-batching iteration) on one GPU of a replica, from its FLOPs and bytes on the
    roofline at the settings' efficiencies, plus the TP all-reduces and the engine's overhead.
    Every serving command times its forwards here (serve, serve --rate, speculate, serve-layout)."""

    cfg: ModelConfig
    gpu: GPU
    s: ServeSettings
    peak: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "peak", self.gpu.peak_flops_per_second(self.s.activation_dtype))

    def roofline(
        self,
        flops: float,
        rank_bytes: float,
        tokens: int,
        sequences: int | None = None,
        prefill: bool = False,
        kv_bytes: float = 0.0,
    ) -> Roofline:
        """Per GPU: FLOPs split over tp, the bytes one rank moves (of which `kv_bytes` are the
        attention kernel's KV reads, at the attention efficiency; the rest at the bandwidth
        efficiency), plus the all-reduces of `tokens` activations, each its bandwidth term and its
        fixed latency (NVLink inside a node of GPUS_PER_NODE, the network past it), plus the
        engine's overhead for a forward over `sequences` sequences (a prefill forward's when
        `prefill`)."""
        s, cfg = self.s, self.cfg
        comm = 0.0
        if s.tp > 1:
            buffer = tokens * cfg.d_model * activation_bytes(s.activation_dtype)
            gbs = self.gpu.nvlink_gbs if s.tp <= GPUS_PER_NODE else self.gpu.network_gbs
            comm = cfg.n_layers * tp_allreduces_per_layer(cfg.parallel_block)
            comm *= tp_ring_allreduce_seconds(buffer, s.tp, gbs * 1e9, s.bandwidth_efficiency) + (
                tp_allreduce_latency_seconds(s.tp)
            )
        return Roofline(
            flops / s.tp,
            rank_bytes,
            compute_seconds(flops / s.tp, self.peak, s.compute_efficiency),
            memory_seconds(rank_bytes - kv_bytes, self.gpu.hbm_bytes_per_second, s.bandwidth_efficiency)
            + memory_seconds(kv_bytes, self.gpu.hbm_bytes_per_second, s.kv_efficiency),
            comm,
            s.overhead.seconds(tokens if sequences is None else sequences, prefill, cfg.n_layers),
        )

    def decode_step(self, context: int, batch: int | None = None) -> StepEstimate:
        b, s = (self.s.batch if batch is None else batch), self.s
        flops = decode_step_flops(self.cfg, context, b, s.mla)
        moved = weights_step_bytes(self.cfg, context, b, s.weight_dtype, s.kv_dtype, tp=s.tp, mla=s.mla)
        r = self.roofline(flops, moved.per_rank(s.tp, s.kv_read_repeat), b, kv_bytes=self._kv_read(moved))
        return StepEstimate(context, flops, moved, r)

    def _kv_read(self, moved) -> float:
        """The KV bytes one rank's attention kernel reads in a step: its slice, kv_read_repeat times."""
        return moved.per_rank(self.s.tp, self.s.kv_read_repeat) - moved.weight_bytes / self.s.tp

    def verify_step(self, context: int, batch: int, new_tokens: int) -> Roofline:
        """One forward of `new_tokens` tokens for each of b sequences at C = context .. context +
        new_tokens - 1 (speculative decoding's verify): their decode FLOPs, the weights read once
        (an MoE's experts for b·new_tokens tokens) and the KV cache read once; one step's overhead."""
        s = self.s
        flops = sum(decode_step_flops(self.cfg, context + i, batch, s.mla) for i in range(new_tokens))
        end = context + new_tokens - 1
        moved = weights_step_bytes(self.cfg, end, batch, s.weight_dtype, s.kv_dtype, new_tokens, s.tp, s.mla)
        rank = moved.per_rank(s.tp, s.kv_read_repeat)
        return self.roofline(flops, rank, batch * new_tokens, batch, kv_bytes=self._kv_read(moved))

    def prefill(self) -> tuple[int, int, float, Roofline]:
        """(FLOPs, forwards, bytes per GPU, roofline) of the batch's prefill: the weights read once
        per forward (per chunk of `prefill_chunk` tokens when given), the KV cache written, and
        under chunking each later chunk's re-read of the earlier chunks' KV. The KV a prefill
        writes is what the decode reads (the latent under absorbed MLA: prefill computes K/V
        per head on the fly, as DeepSeek's naive prefill does, and caches the latent)."""
        cfg, s = self.cfg, self.s
        per_forward = prefill_tokens(s.prompt, s.batch, s.prefill_chunk)
        forwards = ceil_div(s.prompt * s.batch, per_forward)
        flops = prefill_flops(cfg, s.prompt, s.batch, s.attention)
        weights = weights_step_bytes(cfg, s.prompt, 1, s.weight_dtype, s.kv_dtype, new_tokens=per_forward).weight_bytes
        written = kv_read_bytes_per_rank(cfg, s.prompt, s.batch, s.kv_dtype, s.tp, s.mla)
        reread = chunked_prefill_kv_reread_bytes(cfg, s.prompt, s.prefill_chunk, s.batch, s.kv_dtype, s.tp, s.mla)
        n_bytes = forwards * weights / s.tp + written + reread
        per_forward_overhead = s.overhead.seconds(s.batch, True, cfg.n_layers) * (forwards - 1)  # the first: roofline's
        r = self.roofline(flops, n_bytes, s.prompt * s.batch, s.batch, prefill=True, kv_bytes=reread)
        return (
            flops,
            forwards,
            n_bytes,
            dataclasses.replace(r, overhead_seconds=r.overhead_seconds + per_forward_overhead),
        )

    def decode_seconds(self, first: int, last: int) -> float:
        """Σ of the decode steps at C = first..last: exact (roofline.sum_of_steps) up to the window,
        then all alike (the window caps the keys and the KV read); with chunked attention, exact
        chunk by chunk (serve/chunked.py: keys grow within a chunk and restart at the next)."""
        window = self.cfg.sliding_window
        ramp_end = last if window is None else min(last, max(first - 1, window))

        def seconds_at(context: int) -> tuple[float, float, float]:
            r = self.decode_step(context).roofline
            return r.compute_seconds, r.memory_seconds, r.comm_seconds + r.overhead_seconds

        if self.cfg.attention_chunk is not None:  # a chunked layer's keys restart at each chunk
            return chunked_decode_seconds(seconds_at, first, last, self.cfg.attention_chunk)
        capped = last - ramp_end
        return sum_of_steps(seconds_at, first, ramp_end) + capped * self.decode_step(last).roofline.seconds

    def memory(self, batch: int) -> tuple[int, int, int]:
        """(weights, KV cache, prefill peak) bytes per GPU: weights and KV split over tp, the
        prefill peak taken whole (conservative)."""
        cfg, s = self.cfg, self.s
        weights = ceil_div(model_weights_bytes(cfg, s.weight_dtype), s.tp)
        kv = kv_read_bytes_per_rank(cfg, s.prompt + s.output, batch, s.kv_dtype, s.tp, s.mla)
        n = prefill_tokens(s.prompt, batch, s.prefill_chunk)
        a = activation_bytes(s.activation_dtype)
        return weights, kv, prefill_activation_peak_bytes(cfg, n, min(batch, max(1, n // s.prompt)), a)


def activation_bytes(activation_dtype: str) -> int:
    """Bytes of one activation element the matmuls read and the all-reduces move: the dtype's,
    and 1 for fp4 (its activations are cast per block from 8-bit and all-reduced no smaller)."""
    return 1 if activation_dtype == "fp4" else dtype_bytes(1, activation_dtype)


def serving_machine(cfg: ModelConfig, gpu: GPU, settings: ServeSettings) -> StepModel:
    """The roofline evaluator of these settings, for the models built on serve's (batching.py)."""
    return StepModel(cfg, gpu, settings)


def serve_settings_for(
    cfg: ModelConfig,
    gpu: GPU,
    context: int,
    batch: int,
    weight_dtype: str,
    kv_dtype: str,
    compute_efficiency: float | None = None,
    bandwidth_efficiency: float | None = None,
    tp: int = 1,
    mla: str = DEFAULT_MLA_IMPL,
) -> ServeSettings:
    """The settings `serve` would build for one decode step of b sequences at `context` (the
    prompt context - 1, output 2), with the GPU's calibrated efficiencies and overheads unless
    given: what speculate and serve-layout time their steps with."""
    s = _settings(cfg, max(1, context - 1), 2, batch, tp, None, weight_dtype, kv_dtype, "bf16", "causal")
    return _with_gpu_rates(
        s, gpu, compute_efficiency, bandwidth_efficiency, DEFAULT_SERVE_PRICE_PER_GPU_HOUR, None, mla
    )


def memory_bytes_per_gpu(cfg: ModelConfig, gpu: GPU, settings: ServeSettings, batch: int | None = None) -> int:
    """Weights + KV cache + prefill peak on one GPU for these settings (batch: theirs by default)."""
    return sum(StepModel(cfg, gpu, settings).memory(settings.batch if batch is None else batch))


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
    compute_efficiency: float | None = None,
    bandwidth_efficiency: float | None = None,
    price: float = DEFAULT_SERVE_PRICE_PER_GPU_HOUR,
    prefill_chunk: int | None = None,
    name: str | None = None,
    trained_context: int | None = None,
    mla: str = DEFAULT_MLA_IMPL,
    served_context: int | None = None,
    overhead: StepOverhead | None = None,
    kv_read_repeat: int = 1,
    attention_efficiency: float | None = None,
) -> ServeEstimate:
    """Serving `model` (a preset name or a ModelConfig) on `gpu`: b sequences of `prompt` tokens
    generating `output` tokens each, prefilled together (in chunks of `prefill_chunk` tokens), then
    decoded in lockstep. `served_context` (a preset's serving_context by default) bounds the
    prompt; past `trained_context` (the pretraining context) a note says so. `mla`: "absorbed"
    or "naive" (latent attention only). Efficiencies left None are the GPU's calibrated pair,
    `overhead` None the engine's calibrated overheads (calibration.serve_efficiency; NO_OVERHEAD
    for the bound). A SizingError names the field for any bad input. gpu:
    H100 unless the preset's published run names another (sizing.inputs.default_gpu)."""
    gpu = gpu if gpu is not None else default_gpu_for(model if isinstance(model, str) else None)
    cfg, name, trained_context, served_context = _resolve(model, name, trained_context, served_context)
    s = _settings(cfg, prompt, output, batch, tp, gpus, weight_dtype, kv_dtype, activation_dtype, attention)
    gpu_entry = get_gpu(gpu)
    s = _with_gpu_rates(
        s,
        gpu_entry,
        compute_efficiency,
        bandwidth_efficiency,
        price,
        prefill_chunk,
        mla,
        overhead,
        attention_efficiency,
    )
    s = dataclasses.replace(s, kv_read_repeat=require_int("kv_read_repeat", kv_read_repeat))
    machine = StepModel(cfg, gpu_entry, s)
    notes = serve_notes(cfg, s, trained_context, served_context)
    if compute_efficiency is None and bandwidth_efficiency is None and (borrowed := borrowed_note(gpu_entry.key)):
        notes.append(borrowed)
    return _estimate(name, machine, notes)


def _with_gpu_rates(
    s: ServeSettings,
    gpu_entry: GPU,
    compute_efficiency: float | None,
    bandwidth_efficiency: float | None,
    price: float,
    prefill_chunk: int | None,
    mla: str,
    overhead: StepOverhead | None = None,
    attention_efficiency: float | None = None,
) -> ServeSettings:
    """The settings with their rates: efficiencies and overheads left None are the GPU's
    calibrated ones (the attention efficiency follows a given bandwidth efficiency: at 1 and 1,
    the bound); tp > 1 needs the GPU's link bandwidth for its all-reduces."""
    calibrated = serve_efficiency(gpu_entry.key)
    if attention_efficiency is None:
        attention_efficiency = calibrated.attention if bandwidth_efficiency is None else bandwidth_efficiency
    compute_efficiency = calibrated.compute if compute_efficiency is None else compute_efficiency
    bandwidth_efficiency = calibrated.bandwidth if bandwidth_efficiency is None else bandwidth_efficiency
    s = _with_rates(s, compute_efficiency, bandwidth_efficiency, price, prefill_chunk)
    overhead = calibrated.overhead if overhead is None else overhead
    if attention_efficiency is not None:
        require_efficiency("attention_efficiency", attention_efficiency)  # item 3: a floor keeps it finite
    s = dataclasses.replace(
        s, mla=require_choice("mla", mla, MLA_IMPLS), overhead=overhead, attention_efficiency=attention_efficiency
    )
    if s.tp > 1 and gpu_entry.nvlink_gbs is None:
        raise SizingError(f"tp ({s.tp}) needs a GPU link bandwidth; gpu {gpu_entry.key} has none in the table")
    return s


def _estimate(name: str | None, machine: StepModel, notes: list[str]) -> ServeEstimate:
    """The prefill, the first and last decode steps, their totals, memory and the largest batch."""
    from sizing.memory import largest_fitting  # the one "largest n that fits" search

    cfg, gpu_entry, s = machine.cfg, machine.gpu, machine.s
    p_flops, forwards, p_bytes, prefill = machine.prefill()
    first, last = s.prompt + 1, s.prompt + s.output - 1  # the decode steps' contexts: the prefill gave token 1
    mean_context = (first + last + 1) // 2
    weights_gpu, kv_gpu, peak = machine.memory(s.batch)
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
            machine.peak, gpu_entry.hbm_bytes_per_second, s.compute_efficiency, s.bandwidth_efficiency
        ),
        weights_bytes_per_gpu=weights_gpu,
        kv_bytes_per_request=kv_read_bytes_per_rank(cfg, s.prompt + s.output, 1, s.kv_dtype, s.tp, s.mla),
        kv_bytes_per_gpu=kv_gpu,
        prefill_peak_bytes=peak,
        max_batch=largest_fitting(lambda b: sum(machine.memory(b)), gpu_entry.memory_bytes),
        notes=tuple(notes),
    )


def _resolve(
    model: ModelConfig | str, name: str | None, trained: int | None, served: int | None
) -> tuple[ModelConfig, str | None, int | None, int | None]:
    """(config, name, pretraining context, served context): a preset's own unless given."""
    if isinstance(model, str):
        preset = get_preset(model)
        trained = trained if trained is not None else preset.context
        served = served if served is not None else preset.serving_context
        return preset.config, name or preset.name, trained, served
    if not isinstance(model, ModelConfig):
        raise SizingError(f"model ({show(model)}) must be a preset name or a ModelConfig")
    return model, name, trained, served if served is not None else trained


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
    if cfg.n_heads % tp:
        valid = ", ".join(str(n) for n in range(1, cfg.n_heads + 1) if cfg.n_heads % n == 0)
        raise SizingError(
            f"tp ({tp}) must divide n_heads ({cfg.n_heads}), each rank holding whole heads; valid: {valid}"
        )
    kv_heads_per_rank(cfg, tp)  # divides h_kv, or a multiple of it (replicated heads); else it says which
    gpus = tp if gpus is None else require_int("gpus", gpus)
    if gpus % tp:
        raise SizingError(f"gpus ({gpus}) must be a multiple of tp ({tp}): gpus / tp replicas")
    require_choice("weight_dtype", weight_dtype, WEIGHT_CHOICES)  # a dtype or a deployed format
    require_choice("kv_dtype", kv_dtype, STORAGE_DTYPES)
    require_choice("activation_dtype", activation_dtype, SERVE_ACTIVATION_DTYPES)
    require_choice("attention", attention, ATTENTION_CONVENTIONS)
    return ServeSettings(batch, prompt, output, tp, gpus, weight_dtype, kv_dtype, activation_dtype, attention)


def _with_rates(
    s: ServeSettings, compute_efficiency: float, bandwidth_efficiency: float, price: float, chunk: int | None
) -> ServeSettings:
    require_efficiency("compute_efficiency", compute_efficiency)
    require_efficiency("bandwidth_efficiency", bandwidth_efficiency)
    require_price("price", price)  # as the CLI's --price
    if chunk is not None:
        require_int("prefill_chunk", chunk)
    return dataclasses.replace(
        s,
        compute_efficiency=compute_efficiency,
        bandwidth_efficiency=bandwidth_efficiency,
        price_per_gpu_hour=price,
        prefill_chunk=chunk,
    )
