"""Serving layouts across GPUs: pure tensor parallelism against expert parallelism with
data-parallel attention (DeepSeek-V3 style, MoE only) and against TP in a node with pipeline
stages across nodes (pipeline.py), for one decode step at context C.

Layouts over G GPUs (nodes of 8):
* `tp`: every weight split over G (Megatron-LM); each step all-reduces b·d activations twice
  per layer over the G ranks (ring; across nodes the network link is the bottleneck). The
  KV cache splits by KV heads (a head shared by several ranks when h_kv < G), but an MLA latent
  (one per token, shared by the heads) is replicated: every rank holds the whole batch's cache.
* `ep-dp`: attention, dense layers, shared experts, embedding and head replicated on every
  rank, each rank decoding its own b sequences (DP attention); the E routed experts spread
  E/G per rank (EP). Per MoE layer the b·k routed token copies are sent to their experts'
  ranks and back (dispatch + combine all-to-all, DeepSeek-V3 arXiv:2412.19437 sec. 3.4 and its
  inference deployment sec. 3.4.2: attention DP + EP over 320 GPUs for decoding), (G - 1)/G of
  them leaving the rank.
* Expert load: with B = G·b tokens routed uniformly and independently, each picks k of E; a
  given expert is reached with probability 1 - (1 - k/E)^B (sizing.serve.work
  expected_experts_hit), so a rank reads that share of its E/G experts.

Step time per GPU = max(FLOPs / (peak x eff), bytes / (HBM x eff)) + communication; FLOPs per
GPU = B x decode FLOPs per token / G in both (balanced). Memory per GPU = weights held + KV
held must fit `reserve` of the GPU (0.9 as vLLM's default utilization), which sets the largest
batch; tokens/s per GPU = B / step / G at that batch.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sizing.inputs import GPU, ModelConfig, get_gpu
from sizing.memory import FORMATS as QUANT_FORMATS
from sizing.memory import dtype_bytes, kv_cache_bytes, largest_fitting
from sizing.serve.calibration import serve_efficiency
from sizing.serve.pipeline import pipeline_stage
from sizing.serve.quant_bytes import weight_split_bytes
from sizing.serve.roofline import GPUS_PER_NODE, NO_OVERHEAD, StepOverhead, compute_seconds, memory_seconds
from sizing.serve.work import decode_step_flops, expected_experts_hit
from sizing.validate import SizingError, require_choice, require_efficiency, require_int
from sizing.vocabulary import DTYPE_BITS, ceil_div

LAYOUTS = ("tp", "ep-dp", "tp-pp")
DEFAULT_RESERVE = 0.9


@dataclass(frozen=True)
class LayoutStep:
    layout: str
    gpus: int
    batch: int  # sequences over all G GPUs
    weights_bytes_per_gpu: int
    kv_bytes_per_gpu: int
    compute_seconds: float
    memory_seconds: float
    comm_seconds: float
    experts_read_per_gpu: float  # per MoE layer
    overhead_seconds: float = 0.0  # the engine's per-step cost (calibration.py)

    @property
    def seconds(self) -> float:
        return max(self.compute_seconds, self.memory_seconds) + self.comm_seconds + self.overhead_seconds

    @property
    def memory_bytes_per_gpu(self) -> int:
        return self.weights_bytes_per_gpu + self.kv_bytes_per_gpu

    @property
    def tokens_per_second_per_gpu(self) -> float:
        return self.batch / self.seconds / self.gpus

    def to_dict(self) -> dict:
        return {
            "layout": self.layout,
            "gpus": self.gpus,
            "batch": self.batch,
            "weights_bytes_per_gpu": self.weights_bytes_per_gpu,
            "kv_bytes_per_gpu": self.kv_bytes_per_gpu,
            "memory_bytes_per_gpu": self.memory_bytes_per_gpu,
            "compute_seconds": self.compute_seconds,
            "memory_seconds": self.memory_seconds,
            "comm_seconds": self.comm_seconds,
            "overhead_seconds": self.overhead_seconds,
            "step_seconds": self.seconds,
            "tpot_seconds": self.seconds,
            "experts_read_per_gpu_per_layer": self.experts_read_per_gpu,
            "tokens_per_second_per_gpu": self.tokens_per_second_per_gpu,
        }


def _link_bytes_per_second(gpu: GPU, gpus: int) -> float:
    """The slowest link a collective over `gpus` crosses: NVLink inside a node, the network across."""
    if gpu.nvlink_gbs is None:
        raise SizingError(f"gpu {gpu.key} has no link bandwidth in the table")
    return (gpu.nvlink_gbs if gpus <= GPUS_PER_NODE else gpu.network_gbs) * 1e9


def _kv_per_gpu(cfg: ModelConfig, context: int, sequences: int, kv_dtype: str, shards: int) -> int:
    """The KV cache a TP rank holds: ceil(h_kv / G) of the h_kv heads (a head shared by the ranks
    of its query group when h_kv < G); an MLA latent is one per token, whole on every rank."""
    whole = kv_cache_bytes(cfg, context, sequences, kv_dtype)
    if cfg.is_mla:
        return whole
    return ceil_div(whole * ceil_div(cfg.kv_heads, shards), cfg.kv_heads)


@dataclass(frozen=True)
class _Setup:
    cfg: ModelConfig
    gpu: GPU
    context: int
    weights: str
    kv_dtype: str
    compute_efficiency: float
    bandwidth_efficiency: float
    overhead: StepOverhead = NO_OVERHEAD

    def step(self, layout: str, gpus: int, batch: int) -> LayoutStep:
        """One decode step of `batch` sequences (all GPUs together) in `layout` over `gpus`."""
        if layout == "tp-pp":
            return self._pipeline(gpus, batch, weight_split_bytes(self.cfg, self.weights))
        if layout == "tp":
            return self._tensor_parallel(gpus, batch)
        return self._expert_parallel(gpus, batch)

    def _tensor_parallel(self, gpus: int, batch: int) -> LayoutStep:
        """Pure TP over `gpus`: the time is `sizing serve`'s decode step at tp = gpus (the
        serving step model, so the two agree); the memory held is the rank's share."""
        from sizing.serve.estimate import serve_settings_for, serving_machine

        cfg = self.cfg
        rest, one = weight_split_bytes(cfg, self.weights)
        effs = (self.compute_efficiency, self.bandwidth_efficiency)
        settings = serve_settings_for(cfg, self.gpu, self.context, batch, self.weights, self.kv_dtype, *effs, tp=gpus)
        settings = dataclasses.replace(settings, overhead=self.overhead)
        r = serving_machine(cfg, self.gpu, settings).decode_step(self.context, batch).roofline
        hit = expected_experts_hit(cfg.n_experts, cfg.top_k, batch) if cfg.is_moe else 0.0
        held = ceil_div(rest + one * cfg.n_moe_layers * cfg.n_experts, gpus)
        kv = _kv_per_gpu(cfg, self.context, batch, self.kv_dtype, gpus)
        return LayoutStep(
            "tp",
            gpus,
            batch,
            held,
            kv,
            r.compute_seconds,
            r.memory_seconds,
            r.comm_seconds,
            hit / gpus,
            r.overhead_seconds,
        )

    def _expert_parallel(self, gpus: int, batch: int) -> LayoutStep:
        """EP + DP attention: attention and dense parts whole on each rank, E/G experts each."""
        cfg, gpu, a = self.cfg, self.gpu, dtype_bytes(1, "bf16")
        rest, one = weight_split_bytes(cfg, self.weights)
        hit = expected_experts_hit(cfg.n_experts, cfg.top_k, batch) if cfg.is_moe else 0.0
        flops = decode_step_flops(cfg, self.context, batch) / gpus
        link = _link_bytes_per_second(gpu, gpus) * self.bandwidth_efficiency if gpus > 1 else 1.0
        per_rank = ceil_div(batch, gpus)
        held = rest + one * cfg.n_moe_layers * ceil_div(cfg.n_experts, gpus)
        local_hit = hit / gpus
        read = rest + one * cfg.n_moe_layers * local_hit
        kv = kv_cache_bytes(cfg, self.context, per_rank, self.kv_dtype)
        routed = per_rank * cfg.top_k * cfg.d_model * a * (gpus - 1) / gpus
        comm = 2 * cfg.n_moe_layers * routed / link if gpus > 1 else 0.0
        return LayoutStep(
            "ep-dp",
            gpus,
            batch,
            held,
            kv,
            compute_seconds(flops, gpu.peak_flops_per_second("bf16"), self.compute_efficiency),
            memory_seconds(read + kv, gpu.hbm_bytes_per_second, self.bandwidth_efficiency),
            comm,
            local_hit,
            self.overhead.seconds(per_rank, layers=cfg.n_layers),
        )

    def _pipeline(self, gpus: int, batch: int, split: tuple[int, int]) -> LayoutStep:
        """tp 8 in a node, gpus / 8 stages; `batch` = pp micro-batches in flight (pipeline.py).
        Times are pp x the stage's, so `seconds` is the time per output token."""
        pp = gpus // GPUS_PER_NODE
        st = pipeline_stage(
            self.cfg,
            self.gpu,
            self.context,
            split,
            self.kv_dtype,
            GPUS_PER_NODE,
            pp,
            batch // pp,
            (self.compute_efficiency, self.bandwidth_efficiency),
        )
        return LayoutStep(
            "tp-pp",
            gpus,
            batch,
            st["weights"],
            st["kv"],
            pp * st["compute"],
            pp * st["memory"],
            pp * st["comm"],
            st["experts_read"] / GPUS_PER_NODE,
            pp * self.overhead.seconds(batch // pp, layers=ceil_div(self.cfg.n_layers, pp)),  # each stage's layers
        )


def layout_step(
    cfg: ModelConfig, gpu: str, context: int, weights: str, kv_dtype: str, layout: str, gpus: int, batch: int
) -> LayoutStep:
    """One decode step of `batch` sequences in `layout` over `gpus` at the GPU's calibrated
    efficiencies and overheads: what `serve-layout` ranks (pure TP is `sizing serve --tp gpus`'s step)."""
    require_choice("layout", layout, LAYOUTS)
    entry = get_gpu(gpu)
    e = serve_efficiency(entry.key)
    setup = _Setup(cfg, entry, context, weights, kv_dtype, e.compute, e.bandwidth, e.overhead)
    return setup.step(layout, require_int("gpus", gpus), require_int("batch", batch))


def best_step(setup: _Setup, layout: str, gpus: int, reserve: float = DEFAULT_RESERVE) -> LayoutStep | None:
    """The step at the largest batch whose weights + KV fit `reserve` of each GPU; None if none."""
    capacity = int(setup.gpu.memory_bytes * reserve)
    # DP attention: the same batch on every rank; a pipeline: the same micro-batch per stage
    unit = gpus if layout == "ep-dp" else gpus // GPUS_PER_NODE if layout == "tp-pp" else 1
    n = largest_fitting(lambda b: setup.step(layout, gpus, b * unit).memory_bytes_per_gpu, capacity)
    return None if n is None else setup.step(layout, gpus, n * unit)


def compare_layouts(
    cfg: ModelConfig,
    gpu: str,
    context: int,
    weights: str = "fp8",
    kv_dtype: str = "bf16",
    gpu_counts: tuple[int, ...] = (8, 16, 32),
    compute_efficiency: float | None = None,
    bandwidth_efficiency: float | None = None,
    overhead: StepOverhead | None = None,
) -> list[LayoutStep]:
    """Every layout x GPU count that fits, at its largest batch, best tokens/s per GPU first;
    at the GPU's calibrated efficiencies and overheads (calibration.py) unless given, so pure TP
    on G GPUs times its step as `sizing serve --tp G` does."""
    require_int("context", context)
    require_choice("weights", weights, (*DTYPE_BITS, *QUANT_FORMATS))
    require_choice("kv_dtype", kv_dtype, DTYPE_BITS)
    entry = get_gpu(gpu)
    calibrated = serve_efficiency(entry.key)
    setup = _Setup(
        cfg,
        entry,
        context,
        weights,
        kv_dtype,
        calibrated.compute
        if compute_efficiency is None
        else require_efficiency("compute_efficiency", compute_efficiency),
        calibrated.bandwidth
        if bandwidth_efficiency is None
        else require_efficiency("bandwidth_efficiency", bandwidth_efficiency),
        calibrated.overhead if overhead is None else overhead,
    )
    found = []
    for layout in LAYOUTS:
        for gpus in gpu_counts:
            tp = GPUS_PER_NODE if layout == "tp-pp" else gpus
            if layout != "ep-dp" and (cfg.n_heads % tp):
                continue  # each rank holds whole heads
            if (layout == "ep-dp" and not cfg.is_moe) or (layout == "tp-pp" and gpus <= GPUS_PER_NODE):
                continue  # EP needs experts; a pipeline here spans nodes
            if layout == "tp-pp" and gpus % GPUS_PER_NODE:
                continue
            step = best_step(setup, layout, require_int("gpus", gpus))
            if step is not None:
                found.append(step)
    return sorted(found, key=lambda s: -s.tokens_per_second_per_gpu)


def why_best(steps: list[LayoutStep], cfg: ModelConfig) -> str:
    """Why the fastest layout beats the fastest pure-TP one, from their own numbers."""
    if not steps:
        return "no layout fits"
    best = steps[0]
    tp = next((s for s in steps if s.layout == "tp"), None)
    if best.layout == "tp" or tp is None:
        return f"{best.layout} on {best.gpus} GPUs is fastest here"
    if best.layout == "tp-pp":
        ratio = best.tokens_per_second_per_gpu / tp.tokens_per_second_per_gpu
        return (
            f"tp 8 x pp {best.gpus // GPUS_PER_NODE} gives {ratio:.1f}x "
            f"the tokens/s per GPU of tp on {tp.gpus}: only b·d activations cross the network between stages, "
            "where tp across nodes all-reduces twice per layer over it"
        )
    kv_note = (
        "the MLA latent cache is one per token, so every TP rank holds the whole batch's cache"
        if cfg.is_mla
        else "TP splits the KV heads, but every rank still reads all the experts the whole batch touches"
    )
    return (
        f"{best.layout} on {best.gpus} GPUs gives {best.tokens_per_second_per_gpu / tp.tokens_per_second_per_gpu:.1f}x "
        f"the tokens/s per GPU of tp on {tp.gpus}: each rank caches only its own {best.batch // best.gpus} sequences "
        f"and reads {best.experts_read_per_gpu:.1f} experts per layer, so {best.batch} sequences fit against "
        f"{tp.batch} under tp, where {kv_note}"
    )
