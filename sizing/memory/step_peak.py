"""Where an eager training step of a model built *in* one dtype peaks, by formula.

`sizing profile` times the reference model built in bf16 / fp16 / fp32 (weights, gradients
and AdamW states in that dtype, no master copy) and sets its measured peak beside these
figures: sizing.memory's per-GPU total for the same settings (`training_memory_in_dtype`)
and the moment the step actually peaks (`step_peak_estimate_bytes`). Pure Python: the
profiler (reference_model/profile/run.py) and the report page (sizing/report/gpu_profile.py)
both call these, and neither needs torch for them.
"""

from __future__ import annotations

from sizing.inputs import ModelConfig
from sizing.memory import PRECISIONS, TrainingMemory, dtype_bytes, training_memory
from sizing.vocabulary import attention_impl

# sizing.memory precision policy with the same bytes per element as a model built in the dtype
# (fp16 has bf16's element sizes; neither keeps an fp32 master copy)
MEMORY_POLICY: dict[str, str] = {"bf16": "bf16", "fp16": "bf16", "fp32": "fp32"}
# Only `fits` and `max_micro_batch` depend on the GPU, never a byte figure: the profiled
# class of GPU when the caller does not know its own.
PROFILE_GPU = "h100-sxm"


def training_memory_in_dtype(
    cfg: ModelConfig, seq_len: int, micro_batch: int, dtype: str, attn_impl: str, recompute: str, gpu: str | None = None
) -> TrainingMemory:
    """sizing.memory for a profiled step: one GPU, no ZeRO, AdamW, the dtype's policy.
    `attn_impl` is the reference model's name ("sdpa" is sizing's "flash")."""
    return training_memory(
        cfg,
        seq_len,
        micro_batch,
        MEMORY_POLICY[dtype],
        "adamw",
        0,
        1,
        recompute,
        attention_impl(attn_impl),
        gpu or PROFILE_GPU,
    )


def logits_bytes(cfg: ModelConfig, seq_len: int, micro_batch: int, activation_bytes: int) -> int:
    """The logits the forward returns: b·T·V·a (V the padded vocabulary the head computes)."""
    return micro_batch * seq_len * cfg.padded_vocab * activation_bytes


def loss_backward_bytes(cfg: ModelConfig, seq_len: int, micro_batch: int, activation_bytes: int) -> int:
    """What the start of the loss backward holds besides the saved activations (which include
    the fp32 log-softmax): the logits and two fp32 b·T·V tensors, the gradient of the
    log-softmax output and the gradient of its input, which log_softmax's backward writes while
    the first is alive: b·T·V·(a + 8). sizing.memory's `transient` counts the logits and one
    fp32 gradient (b·T·V·(a + 4)), so this is b·T·V·4 more."""
    fp32_gradient_bytes = dtype_bytes(micro_batch * seq_len * cfg.padded_vocab, "fp32")
    return logits_bytes(cfg, seq_len, micro_batch, activation_bytes) + 2 * fp32_gradient_bytes


def step_peak_estimate_bytes(mem: TrainingMemory, extras_bytes: int = 0) -> int:
    """Where an eager training step peaks: at the start of the loss backward, after
    zero_grad(set_to_none=True) (no gradient exists yet) and before any block is recomputed:
    weights + optimizer states + saved activations (+ `extras_bytes`, what an implementation
    saves beyond the formula, e.g. the reference model's sdpa path) + `loss_backward_bytes`.
    Against sizing.memory's per-GPU total that is: minus the gradients, minus a recomputed
    block's activations (with recompute), plus b·T·V·4.

    That moment occurs in every step, so this is a lower bound of the step's peak; it is the
    peak itself when the vocabulary terms outweigh one block's backward, as with any real
    vocabulary (a toy vocabulary of 512 with recomputed math attention peaks later, in a
    block's backward). Checked on CPU with torch's MemTracker to within 0.2%
    (tests/test_profile.py) and on CUDA with max_memory_allocated (tests/test_profile_gpu.py)."""
    pg = mem.per_gpu
    a = PRECISIONS[mem.precision].activation_bytes
    return (
        pg["weights_bytes"]
        + pg["optimizer_bytes"]
        + pg["activations_bytes"]
        + extras_bytes
        + loss_backward_bytes(mem.config, mem.seq_len, mem.micro_batch, a)
    )


def model_states_bytes(mem: TrainingMemory) -> int:
    """Weights + gradients + optimizer states per GPU: what a step leaves allocated."""
    pg = mem.per_gpu
    return pg["weights_bytes"] + pg["gradients_bytes"] + pg["optimizer_bytes"]


__all__ = [
    "MEMORY_POLICY",
    "PROFILE_GPU",
    "logits_bytes",
    "loss_backward_bytes",
    "model_states_bytes",
    "step_peak_estimate_bytes",
    "training_memory_in_dtype",
]
