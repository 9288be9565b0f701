"""What a step-time prediction takes besides the model, layout, sequence and GPU: the software
stack and what a run states about itself (its kernels, dtypes, bandwidths, power cap), each
defaulting to the stack's or the GPU's (sizing/data/step_time.json)."""

from __future__ import annotations

from dataclasses import dataclass

from sizing.parallel.stepdata import DEFAULT_STACK

DEFAULT_BUCKET_PARAMS = 40_000_000  # Megatron-Core's DDP bucket (max(40M, 1M x dp) parameters)


@dataclass(frozen=True)
class StepOptions:
    stack: str = DEFAULT_STACK
    attention_kernel: str = "flash"  # flash, or unfused (batched GEMMs + softmax kernel)
    flash_kernel: str | None = None  # None: the stack's (fa1, fa2, fa3, cudnn; a run that states its own)
    precision: str = "bf16"  # bf16 / fp16 GEMMs, or fp8 (GEMMs at the fp8 peak, bf16 elsewhere)
    capacity_factor: float | None = None  # MoE load factor; None: step_time.json "moe" (dropless skew)
    dp_overlap: bool | None = None  # None: the stack's
    dropout: bool | None = None  # None: the stack's
    stage_layers: tuple[int, ...] | None = None
    nvlink_gbs: float | None = None
    network_gbs: float | None = None
    hbm_tbs: float | None = None  # None: sizing/inputs/hardware.py's (a run's own HBM where its source states one)
    power_limit_w: float | None = None  # a stated power cap: compute clocks scale (stepdata.clock_fraction)
    bucket_params: int = DEFAULT_BUCKET_PARAMS
    grad_bytes: int | None = None  # None: the stack's gradient reduction dtype (a run that states its own)
    # how the stack stores memory (sizing.parallel.memory_stack; read by the plan's Workload, not the step)
    reference_memory: bool = False  # True: the reference model's eager accounting instead of the stack's
    fp8_recipe: str = "tensorwise"  # tensorwise (delayed / current), blockwise, mxfp8 (sizing.memory.fp8)
    fp8_params: bool | None = None  # primary fp8 weights (--fp8-param-gather); None: the stack's
    grad_reduce: str | None = None  # gradient buffer "fp32" / "bf16"; None: the stack's
    document_tokens: int | None = None  # packed sequences: documents of this length attend within themselves
    overhead: float | None = None  # None: the stack's fitted overhead (sizing.parallel.overhead); 0 turns it off
    schedule: str | None = None  # pipeline schedule beyond the layout's: zero-bubble, dualpipe (schedule.py)
    ep_overlap: str | None = None  # what hides the MoE all-to-alls: none, shared, paired; None: the stack's
    unfolded_experts: bool = False  # ep ranks tp x cp apart (Megatron-Core before MoE Parallel Folding)
    routed_groups: int | None = None  # node-/device-limited routing: a token goes once to at most this many
