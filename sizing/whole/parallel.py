"""Training a WholeModel that sizing.parallel does not lay out tensor by tensor (Gemma 3n, and any
architecture counted by transformers on the meta device) on N GPUs: data parallelism with ZeRO / FSDP
sharding of the model states, as Hugging Face's Trainer and Accelerate train any transformers model
(FSDP or DeepSpeed ZeRO over the data-parallel ranks; tensor and pipeline parallelism need a parallel
plan of the model's own, which these models do not bring).

Per GPU: the model states of sizing.memory (16 bytes per parameter for bf16-mixed AdamW, sharded over
dp by the ZeRO stage), plus one micro-batch's activations where the WholeModel knows them (None
otherwise: the fit is then "unknown" unless the states alone do not fit). The ZeRO stage is the lowest
that fits, unless one is given.

Step time, an estimate (no per-operation model: the model's operations are not known by formula):
the training FLOPs of the GPU's sequences (3 x the forward: the WholeModel's FLOPs per sequence) at
a constant compute efficiency (sizing.vocabulary.DEFAULT_MFU, assumed and said so), plus what of the
data-parallel collectives exceeds the compute they overlap (the backward, 2/3 of it): ZeRO 0 an
all-reduce of the gradients, ZeRO 1-2 a reduce-scatter of the gradients and an all-gather of the
weights, ZeRO 3 the weights all-gathered for forward and backward and the gradients
reduce-scattered, on the GPUs' link (NVLink within a node of 8, the network past it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sizing.inputs import GPU, get_gpu
from sizing.memory import get_precision
from sizing.parallel import (
    default_global_batch,
    ring_all_gather_seconds,
    ring_all_reduce_seconds,
    ring_reduce_scatter_seconds,
)
from sizing.validate import SizingError, require_int, require_mfu
from sizing.vocabulary import DEFAULT_MFU
from sizing.whole.memory import whole_training_memory
from sizing.whole.model import WholeModel

GPUS_PER_NODE = 8
ZERO_STAGES = (0, 1, 2, 3)
BACKWARD_SHARE = 2 / 3  # of the training FLOPs: what the gradient collectives overlap
LAYOUT_NOTE = (
    "data parallel with ZeRO / FSDP sharding, as Hugging Face's Trainer and Accelerate train any transformers "
    "model (no tensor or pipeline parallelism: they need the model's own parallel plan)"
)


@dataclass(frozen=True)
class WholePlan:
    model: WholeModel
    gpu: GPU
    gpus: int
    zero: int
    micro_batch: int
    global_batch: int
    precision: str
    optimizer: str
    memory: dict  # sizing.whole.memory.whole_training_memory on one GPU
    compute_seconds: float
    comm_seconds: float
    exposed_comm_seconds: float
    efficiency: float
    tokens: int | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def step_seconds(self) -> float:
        return self.compute_seconds + self.exposed_comm_seconds

    @property
    def mfu(self) -> float:
        return self.efficiency * self.compute_seconds / self.step_seconds

    @property
    def gpu_hours(self) -> float | None:
        if self.tokens is None:
            return None
        steps = self.tokens / (self.global_batch * self.model.seq_len)
        return steps * self.step_seconds * self.gpus / 3600

    def to_dict(self) -> dict:
        return {
            "model": self.model.to_dict(),
            "kind": self.model.kind,
            "layout": {"dp": self.gpus, "zero": self.zero, "tp": 1, "pp": 1, "cp": 1, "ep": 1},
            "layout_label": f"dp {self.gpus} (ZeRO-{self.zero})",
            "layout_note": LAYOUT_NOTE,
            "gpu": self.gpu.key,
            "seq_len": self.model.seq_len,
            "micro_batch": self.micro_batch,
            "global_batch": self.global_batch,
            "precision": self.precision,
            "optimizer": self.optimizer,
            "per_gpu": dict(self.memory),
            "fits": self.memory["fits"],
            "step_model": f"estimated: training FLOPs at a constant compute efficiency {self.efficiency:g} (assumed)",
            "compute_seconds": self.compute_seconds,
            "comm_seconds": self.comm_seconds,
            "exposed_comm_seconds": self.exposed_comm_seconds,
            "step_seconds": self.step_seconds,
            "mfu": self.mfu,
            "tokens": self.tokens,
            "gpu_hours": self.gpu_hours,
            "notes": list(self.notes),
        }


def _link_gbs(gpu: GPU, gpus: int) -> float:
    gbs = gpu.nvlink_gbs if gpus <= GPUS_PER_NODE else gpu.network_gbs
    return gbs or gpu.nvlink_gbs or gpu.network_gbs or 1.0


def dp_comm_seconds(params: int, gpus: int, zero: int, gpu: GPU, precision: str) -> float:
    """The data-parallel collectives of one step (module docstring)."""
    if gpus == 1:
        return 0.0
    prec = get_precision(precision)
    grads, weights, gbs = params * prec.grad_bytes, params * prec.weight_bytes, _link_gbs(gpu, gpus)
    if zero == 0:
        return ring_all_reduce_seconds(grads, gpus, gbs)
    gather = ring_all_gather_seconds(weights, gpus, gbs)
    scatter = ring_reduce_scatter_seconds(grads, gpus, gbs)
    return scatter + (2 * gather if zero == 3 else gather)


def _memory(model: WholeModel, gpu: GPU, gpus: int, zero: int, precision: str, optimizer: str, micro_batch: int):
    return whole_training_memory(model, gpu.key, micro_batch, precision, optimizer, zero, gpus)


def choose_zero(model: WholeModel, gpu: GPU, gpus: int, precision: str, optimizer: str, micro_batch: int) -> int:
    """The lowest ZeRO stage whose GPU holds the states (and the activations, where known)."""
    for zero in ZERO_STAGES if gpus > 1 else (0,):
        if _memory(model, gpu, gpus, zero, precision, optimizer, micro_batch)["fits"] is not False:
            return zero
    return 3 if gpus > 1 else 0


def fewest_gpus(model: WholeModel, gpu: GPU, precision: str, optimizer: str, micro_batch: int, max_gpus: int) -> int:
    """The fewest GPUs (a power of two up to max_gpus) whose fullest sharding holds the model (max_gpus
    when none does: the plan then says it does not fit)."""
    n = 1
    while n < max_gpus:
        zero = 3 if n > 1 else 0
        if _memory(model, gpu, n, zero, precision, optimizer, micro_batch)["fits"] is not False:
            return n
        n *= 2
    return max_gpus


def whole_parallel_plan(
    model: WholeModel,
    gpus: int | None,
    gpu: str = "h100",
    zero: int | None = None,
    micro_batch: int = 1,
    global_batch: int | None = None,
    precision: str = "bf16-mixed",
    optimizer: str = "adamw",
    tokens: int | None = None,
    efficiency: float | None = None,
    max_gpus: int | None = None,
) -> WholePlan:
    """`model` trained data-parallel on `gpus` GPUs (module docstring); None: the fewest that hold it."""
    b = require_int("micro_batch", micro_batch, 1)
    entry = get_gpu(gpu)
    efficiency = DEFAULT_MFU if efficiency is None else require_mfu("compute_efficiency", efficiency)
    if gpus is None:
        gpus = fewest_gpus(model, entry, precision, optimizer, b, require_int("max_gpus", max_gpus or 2**15, 1))
    N = require_int("gpus", gpus, 1)
    batch = global_batch or default_global_batch(model.seq_len)
    batch = max(batch, N * b) // (N * b) * (N * b)  # whole micro-batches on every GPU
    if zero is None:
        zero = choose_zero(model, entry, N, precision, optimizer, b)
    elif zero not in ZERO_STAGES:
        raise SizingError(f"zero ({zero}) must be one of 0, 1, 2, 3")
    memory = _memory(model, entry, N, zero, precision, optimizer, b)
    per_gpu = batch // N
    flops = 3 * model.forward_flops_per_sequence * per_gpu
    compute = flops / (entry.peak_flops_per_second("bf16" if "bf16" in entry.peak_tflops else "fp16") * efficiency)
    comm = dp_comm_seconds(model.total_params, N, zero, entry, precision)
    exposed = max(0.0, comm - BACKWARD_SHARE * compute)
    notes = (
        LAYOUT_NOTE,
        f"step time estimated: no per-operation model for this architecture; compute at an assumed {efficiency:g} "
        "of the dense bf16 peak, the data-parallel collectives overlapped with the backward",
        f"global batch {batch} sequences of {model.seq_len} tokens ({per_gpu} per GPU, micro-batch {b})",
    )
    return WholePlan(
        model, entry, N, zero, b, batch, precision, optimizer, memory, compute, comm, exposed, efficiency, tokens, notes
    )
