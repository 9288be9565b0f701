"""Published parallel layouts of large training runs, with their reported utilisation and source,
for reports/parallel-layouts.md. Data only.

Each run is timed by the per-operation step model (sizing.parallel.steptime) with the software
stack and attention kernel its source used, and its real layer count: uneven pipeline stages
(Llama 3's 126 layers on 16 stages, BLOOM's 70 on 12) are split exactly, one layer fewer on the
first and last stage (sizing.parallel.schedule.stage_split).
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.parallel.layout import ParallelLayout


@dataclass(frozen=True)
class PublishedLayout:
    name: str
    preset: str
    gpu: str
    layout: ParallelLayout
    seq_len: int
    recompute: str
    recompute_note: str
    reported: str  # the utilisation as the source states it
    reported_share: tuple[float, float]  # (low, high) as a share of the bf16 peak
    counts_recompute: bool  # whether the reported figure counts recomputed FLOPs (hardware FLOPs)
    source: str
    notes: str = ""
    stack: str = "megatron-core"  # sizing/data/step_time.json "stacks"
    attention_kernel: str = "flash"  # flash, or unfused (2021-22: batched GEMMs + fused softmax)
    dropout: bool | None = None  # None: the stack's


PUBLISHED_LAYOUTS: tuple[PublishedLayout, ...] = (
    PublishedLayout(
        "Llama 3.1 405B",
        "llama3.1-405b",
        "h100-sxm",
        ParallelLayout(
            dp=128, tp=8, pp=16, zero=2, sequence_parallel=True, pp_schedule="interleaved", v=8, micro_batches=16
        ),
        8192,
        "selective",
        "not stated; Korthikanti's selective recomputation (the attention core, free under flash attention), "
        "which the memory model finds tight on stage 0; full recomputation would put the HFU at 51-57%",
        "400 TFLOP/s per GPU, 41% BF16 MFU (38-43% over the three 405B configurations of Table 4)",
        (0.38, 0.43),
        False,
        "Llama 3 paper, arXiv:2407.21783, section 3.3.2 and Table 4 (16,384 H100, TP 8, CP 1, PP 16, DP 128, "
        "T 8,192, batch per DP 16, 16M tokens per step)",
        "FSDP shards optimizer states and gradients, no resharding after forward (ZeRO-2 here); interleaved "
        "schedule with v not stated (v = 8, one layer per chunk, assumed); 126 layers, one fewer on the first and "
        "last stage (7 + 14 x 8 + 7).",
        stack="llama3",
    ),
    PublishedLayout(
        "Megatron-LM GPT-3 175B",
        "gpt3-175b",
        "a100-80gb",
        ParallelLayout(dp=12, tp=8, pp=16, pp_schedule="interleaved", v=2, micro_batches=128),
        2048,
        "full",
        "full activation recomputation (the paper's runs)",
        "163 TFLOP/s per GPU, 52% of peak",
        (0.52, 0.52),
        True,
        "Narayanan et al. 2021, arXiv:2104.04473, Table 1 (175B: TP 8, PP 16, 1,536 A100 80GB, batch 1,536)",
        "The paper counts recomputed FLOPs (hardware FLOPs, compare with our HFU); interleaved schedule, v = 2 "
        "assumed; data parallelism without ZeRO.",
        stack="megatron-2021",
        attention_kernel="unfused",
    ),
    PublishedLayout(
        "BLOOM-176B",
        "bloom-176b",
        "a100-80gb",
        ParallelLayout(dp=8, tp=4, pp=12, zero=1, micro_batches=128, micro_batch=2),
        2048,
        "full",
        "activation checkpointing (Megatron-DeepSpeed)",
        "156 TFLOP/s per GPU (50% of the bf16 peak)",
        (0.50, 0.50),
        True,
        "BLOOM paper, arXiv:2211.05100, section 3.4 (384 A100 80GB, DP 8, TP 4, PP 12, ZeRO-1, global batch "
        "2,048, micro-batch 2); 156 TFLOP/s: genci.fr",
        "70 layers over 12 stages (5 + 10 x 6 + 5); Megatron-DeepSpeed's TFLOP/s count recomputation; "
        "trained without dropout.",
        stack="megatron-deepspeed",
        attention_kernel="unfused",
        dropout=False,
    ),
    PublishedLayout(
        "OPT-175B",
        "opt-175b",
        "a100-80gb",
        ParallelLayout(dp=124, tp=8, fsdp="full", micro_batches=1, micro_batch=8),
        2048,
        "full",
        "activation checkpointing (metaseq)",
        "up to 147 TFLOP/s per GPU (47% of 312)",
        (0.47, 0.47),
        False,
        "OPT paper, arXiv:2205.01068, section 2.4 (992 A100 80GB, FSDP with Megatron-LM TP 8, ~2M-token batch)",
        "992 sequences of 2,048 per step modelled (8 per data-parallel rank) for OPT's 2M-token batch; "
        "attention as 2022's Megatron kernels (batched GEMMs + fused softmax).",
        stack="fsdp",
        attention_kernel="unfused",
    ),
)
