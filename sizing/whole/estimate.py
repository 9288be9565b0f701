"""`sizing estimate` for a WholeModel: parameters, FLOPs per token, training cost and a memory
summary, in the same JSON places as a stack's estimate (sizing.estimate) so that a reader of
`params.total` or `flops.forward_per_token` finds them whatever the architecture.

Training FLOPs per token are 3 x the forward (backward = 2 x forward, as sizing.formulas.flops
counts), with no recomputation; GPU-hours, days and dollars follow sizing.training at the MFU
given. Memory: bf16 weights with the KV cache and recurrent state of one sequence of T for
inference; for training, bf16-mixed AdamW model states (16 bytes per parameter:
sizing.memory.model_states_per_gpu) plus the activations of one sequence where the WholeModel
knows them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sizing.formulas import ATTENTION_NOTES, per_token
from sizing.inputs import GPU, get_gpu
from sizing.training import TrainingRun, cost_usd, gpu_hours, training_flops, wall_clock_days
from sizing.whole.memory import whole_inference_memory, whole_training_memory
from sizing.whole.model import WholeModel

TRAINING_PER_FORWARD = 3  # forward + backward (2 x forward)
KAPLAN_FLOPS_PER_PARAM = 6


@dataclass(frozen=True)
class WholeTraining:
    run: TrainingRun
    gpu: GPU
    dtype: str
    flops: int | float
    flops_6n: int
    gpu_hours: float
    gpu_hours_6n: float
    wall_clock_days: float
    cost_usd: float | None


@dataclass(frozen=True)
class WholeEstimate:
    model: WholeModel
    run: TrainingRun | None
    memory_gpu: str | None  # None: no memory summary

    @property
    def training_flops_per_token(self) -> int | float:
        return per_token(TRAINING_PER_FORWARD * self.model.forward_flops_per_sequence, self.model.seq_len)

    @cached_property
    def training(self) -> WholeTraining | None:
        if self.run is None:
            return None
        gpu = get_gpu(self.run.gpu)
        dtype = self.run.dtype or gpu.default_dtype
        peak = gpu.peak_flops_per_second(dtype)
        flops = training_flops(self.training_flops_per_token, self.run.tokens)
        flops_6n = training_flops(KAPLAN_FLOPS_PER_PARAM * self.model.active_params, self.run.tokens)
        hours = gpu_hours(flops, peak, self.run.mfu)
        return WholeTraining(
            self.run,
            gpu,
            dtype,
            flops,
            flops_6n,
            hours,
            gpu_hours(flops_6n, peak, self.run.mfu),
            wall_clock_days(hours, self.run.num_gpus),
            cost_usd(hours, self.run.price_per_gpu_hour),
        )

    @cached_property
    def memory(self) -> dict[str, Any] | None:
        """Inference (bf16 weights, KV cache and state of one sequence of T) and training
        (bf16-mixed AdamW states, no ZeRO, plus one sequence's activations where known), each
        against the GPU's memory less the CUDA context."""
        if self.memory_gpu is None:
            return None
        return {
            "inference": whole_inference_memory(self.model, self.memory_gpu),
            "training": whole_training_memory(self.model, self.memory_gpu),
        }

    def to_dict(self) -> dict[str, Any]:
        m = self.model
        out: dict[str, Any] = {
            "model": m.to_dict(),
            "params": {
                "total": m.total_params,
                "non_embedding": m.non_embedding_params,
                "active": m.active_params,
                "embedding": m.embedding_params,
                "components": dict(m.params),
            },
            "flops": {
                "attention": m.attention,
                "attention_note": ATTENTION_NOTES[m.attention],
                "seq_len": m.seq_len,
                "seq_len_source": m.seq_len_source,
                "recompute": "none",
                "forward_per_token": m.forward_flops_per_token,
                "backward_per_token": per_token(2 * m.forward_flops_per_sequence, m.seq_len),
                "training_per_token": self.training_flops_per_token,
                "kaplan_6n_per_token": KAPLAN_FLOPS_PER_PARAM * m.active_params,
                "decode_per_token": m.decode_flops_per_token,
                "components": m.forward_flops_per_token_by_component(),
            },
            "training": None,
            "memory": self.memory,
        }
        t = self.training
        if t is not None:
            out["training"] = {
                "tokens": t.run.tokens,
                "flops": t.flops,
                "flops_6n": t.flops_6n,
                "gpu": t.gpu.key,
                "gpu_name": t.gpu.name,
                "dtype": t.dtype,
                "mfu": t.run.mfu,
                "gpu_hours": t.gpu_hours,
                "gpu_hours_6n": t.gpu_hours_6n,
                "num_gpus": t.run.num_gpus,
                "wall_clock_days": t.wall_clock_days,
                "price_per_gpu_hour": t.run.price_per_gpu_hour,
                "cost_usd": t.cost_usd,
            }
        return out
