"""`sizing verify --parallel`: the sharded layouts on torch's fake process group
(parallel_probe.py) and the pipeline stages built directly (pipeline_probe.py), as one check."""

from __future__ import annotations

import time
import warnings

import torch

from reference_model.probes import PIPELINE_PROBES, PROBE_LAYOUTS, probe_layout, probe_pipeline
from reference_model.verify.check import CheckResult
from sizing.inputs import ModelConfig


def verify_parallel(name: str = "parallel", cfg: ModelConfig | None = None, **_options) -> CheckResult:
    """Every PROBE_LAYOUTS entry; one table (layout, quantity, formula, torch, difference)."""
    start = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings():  # FSDP2's "full backward hook ... no inputs require gradients"
            warnings.simplefilter("ignore", UserWarning)
            results = [probe_layout(p) for p in PROBE_LAYOUTS] + [probe_pipeline(p) for p in PIPELINE_PROBES]
    finally:
        torch.set_num_threads(threads)
    rows = [
        [f"{r.name} ({p.preset} toy, world {p.layout.world})"] + row
        for r, p in zip(results, PROBE_LAYOUTS + PIPELINE_PROBES, strict=True)
        for row in r.rows
    ]
    notes = [
        "toy configs: reference_model.model.small.small_config of each preset, T = 16, batch 2, fp32, one step",
        "pipeline stages are built directly from the reference model (no process group): each stage's "
        "parameters, and the activations of the micro-batches 1F1B holds in flight at its peak",
        "tp backward: one all-reduce per column-parallel linear (q, k, v, up, gate separate); Megatron's fused "
        "QKV and up/gate make it 2 per layer (traffic.tp_backward_all_reduces(fused=True))",
        "AdamW `step` counters (one 4-byte tensor per parameter) are bookkeeping, not counted",
        "sequence parallel: torch's DTensor saves the gathered attention and MLP inputs (b.T.d.a each, added to "
        "the formula as a named remainder) where Megatron saves the shard and gathers again in backward (2 more "
        "all-gathers per layer, counted with fused=True)",
    ]
    return CheckResult(
        "parallel",
        name,
        ["layout", "quantity", "formula", "torch", "difference"],
        rows,
        all(r.ok for r in results),
        time.perf_counter() - start,
        notes,
    )
