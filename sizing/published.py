"""Published training runs: the figures `reports/published-runs.md` compares against.

The entries of the project's file of published figures ("training_runs", "gpt3_table"; a copy
lives in tests/fixtures/reference-figures.json) that the report needs, written out here so that
reports regenerate from a clean checkout; tests/test_report.py checks that the two agree.
Each entry keeps its source.

Fields: model (as reference-figures.json names it), preset (our preset, or None), tokens,
flops (published total training compute, or None), gpu_hours (published GPU- or chip-hours,
or None), gpu (our hardware key for the implied MFU), reported_mfu / reported_tflops_per_gpu
(what the paper says it achieved), source, notes. Runs whose model is not a preset carry
the paper's parameter count in `params` and say how it was obtained in `params_note`.
"""

from __future__ import annotations

_GPT3_SRC = "arXiv:2005.14165 Table D.1"
_L1_SRC = (
    "arXiv:2302.13971 Table 15; tokens: github.com/meta-llama/llama MODEL_CARD.md @53011c3d "
    "(LLaMA v1 card, Table 1 hyperparameters)"
)
_L2_SRC = "github.com/meta-llama/llama-models models/llama2/MODEL_CARD.md @e2e67cd"

# GPT-3 Table D.1: total compute (FLOPs and PF-days) and the parameter count in millions.
GPT3_TABLE_D1: list[dict] = [
    dict(
        model=f"GPT-3 {label}",
        preset=preset,
        params_millions=params_m,
        pf_days=pf_days,
        flops=flops,
        tokens=300 * 10**9,
        source=_GPT3_SRC,
    )
    for label, preset, params_m, pf_days, flops in [
        ("Small", "gpt3-125m", 125, 2.6, 2.25e20),
        ("Medium", "gpt3-350m", 356, 7.42, 6.41e20),
        ("Large", "gpt3-760m", 760, 15.8, 1.37e21),
        ("XL", "gpt3-1.3b", 1320, 27.5, 2.38e21),
        ("2.7B", "gpt3-2.7b", 2650, 55.2, 4.77e21),
        ("6.7B", "gpt3-6.7b", 6660, 139, 1.2e22),
        ("13B", "gpt3-13b", 12850, 268, 2.31e22),
        ("175B", "gpt3-175b", 174600, 3640, 3.14e23),
    ]
]

# GPU-hours of the LLaMA runs. Llama-2-34B (unreleased, no exact count) is left out.
A100_80GB = "a100-80gb"  # the GPU of the LLaMA, Llama-2, OPT and BLOOM runs (their sources below)
LLAMA_GPU_HOURS: list[dict] = [
    dict(model="LLaMA-7B", preset="llama-7b", tokens=10**12, gpu_hours=82_432, gpu=A100_80GB, source=_L1_SRC),
    dict(model="LLaMA-13B", preset="llama-13b", tokens=10**12, gpu_hours=135_168, gpu=A100_80GB, source=_L1_SRC),
    dict(model="LLaMA-33B", preset="llama-33b", tokens=1_400 * 10**9, gpu_hours=530_432, gpu=A100_80GB, source=_L1_SRC),
    dict(
        model="LLaMA-65B", preset="llama-65b", tokens=1_400 * 10**9, gpu_hours=1_022_362, gpu=A100_80GB, source=_L1_SRC
    ),
    dict(model="Llama-2-7B", preset="llama2-7b", tokens=2 * 10**12, gpu_hours=184_320, gpu=A100_80GB, source=_L2_SRC),
    dict(model="Llama-2-13B", preset="llama2-13b", tokens=2 * 10**12, gpu_hours=368_640, gpu=A100_80GB, source=_L2_SRC),
    dict(
        model="Llama-2-70B", preset="llama2-70b", tokens=2 * 10**12, gpu_hours=1_720_320, gpu=A100_80GB, source=_L2_SRC
    ),
]

# GPU-hours of the Llama-3 and Llama-3.1 runs, from the model cards (H100-80GB, TDP 700 W). The
# cards give the tokens as "15T+" / "~15 trillion"; the Llama 3 paper (arXiv:2407.21783) gives
# the 405B's 15.6T tokens and its 3.8e25 FLOPs. Llama-3.1 8B/70B share Llama-3's architecture
# (our llama3-8b / llama3-70b presets).
H100_80GB = "h100-sxm"  # "H100-80GB (TDP of 700W)": the SXM part
_L3_CARD = "github.com/meta-llama/llama-models models/llama3/MODEL_CARD.md @1f0feb7"
_L31_CARD = "github.com/meta-llama/llama-models models/llama3_1/MODEL_CARD.md @1b58927"
LLAMA3_GPU_HOURS: list[dict] = [
    dict(
        model="Llama-3-8B", preset="llama3-8b", tokens=15 * 10**12, gpu_hours=1_300_000, gpu=H100_80GB, source=_L3_CARD
    ),
    dict(
        model="Llama-3-70B",
        preset="llama3-70b",
        tokens=15 * 10**12,
        gpu_hours=6_400_000,
        gpu=H100_80GB,
        source=_L3_CARD,
    ),
    dict(
        model="Llama-3.1-8B",
        preset="llama3-8b",
        tokens=15 * 10**12,
        gpu_hours=1_460_000,
        gpu=H100_80GB,
        source=_L31_CARD,
    ),
    dict(
        model="Llama-3.1-70B",
        preset="llama3-70b",
        tokens=15 * 10**12,
        gpu_hours=7_000_000,
        gpu=H100_80GB,
        source=_L31_CARD,
    ),
    dict(
        model="Llama-3.1-405B",
        preset="llama3.1-405b",
        tokens=15_600 * 10**9,
        gpu_hours=30_840_000,
        flops=3.8e25,
        gpu=H100_80GB,
        source=f"{_L31_CARD}; tokens and FLOPs: arXiv:2407.21783 (15.6T tokens, 3.8e25 FLOPs)",
    ),
]

# PaLM-540B (arXiv:2204.02311 Table 1): 118 layers, 48 heads of 256, trained at T = 2048.
# L, H, Q, T enter PaLM's own MFU formula, 6N + 12·L·H·Q·T (Appendix B).
PALM_540B_SHAPE = dict(n_layers=118, n_heads=48, head_dim=256, seq_len=2048)

OTHER_RUNS: list[dict] = [
    dict(
        model="Chinchilla-70B",
        preset=None,
        params=70 * 10**9,
        params_note="as the paper states it; no exact count is published",
        tokens=1_400 * 10**9,
        flops=5.76e23,
        gpu_hours=None,
        gpu=None,
        source="arXiv:2203.15556 (Chinchilla 70B, 1.4T tokens, same compute as Gopher = 5.76e23 FLOPs; "
        "Table 3 row 67B/5.76e23)",
        notes="5.76e23 is Gopher's budget, which Chinchilla was trained to match.",
    ),
    dict(
        model="PaLM-540B",
        preset=None,
        params=540 * 10**9,
        params_note="as the paper states it; 6 x 540e9 x 780e9 is its 2527.2 ZFLOPs exactly",
        tokens=780 * 10**9,
        flops=2.5272e24,
        gpu_hours=8_404_992,
        gpu="tpu-v4",
        reported_mfu=0.462,
        source="arXiv:2204.02311 - 6144 TPU v4, 780B tokens, MFU 46.2%, HFU 57.8%, 1200 h on 6144 chips + "
        "336 h on 3072 chips, training compute 2527.2 ZFLOPs",
        notes="Chip-hours = 1200 h x 6144 + 336 h x 3072, wall-clock including downtime.",
    ),
    dict(
        model="OPT-175B",
        preset="opt-175b",
        tokens=180 * 10**9,
        flops=None,
        gpu_hours=809_472,
        gpu=A100_80GB,
        reported_tflops_per_gpu=147,
        source="arXiv:2205.01068 - 992 x A100-80GB, up to 147 TFLOP/s per GPU, ~180B tokens; "
        "GPU-hours 809,472 from LLaMA Table 15 (arXiv:2302.13971)",
        notes="The GPU-hours include restarts and failures.",
    ),
    dict(
        model="BLOOM-176B",
        preset="bloom-176b",
        tokens=366 * 10**9,
        flops=None,
        gpu_hours=1_082_990,
        gpu=A100_80GB,
        reported_tflops_per_gpu=156,
        source="arXiv:2211.05100 p.18 '1,082,990 compute hours ... 48 nodes x 8 A100 80GB (384 GPUs)'; "
        "366B tokens; genci.fr (156 TFLOP/s per GPU); parameters: HF bigscience/bloom model card",
        notes="LLaMA Table 15 lists 1,082,880 GPU-hours; BLOOM's own paper says 1,082,990.",
    ),
]

# MoE runs of 2024-25 (not in reference-figures.json: their sources are cited here). GPU-hours
# are the pre-training share where the source splits them; `gpu_hours_total` is the whole run.
MOE_RUNS: list[dict] = [
    dict(
        model="DeepSeek-V3",
        preset="deepseek-v3",
        tokens=14_800 * 10**9,
        gpu_hours=2_664_000,
        gpu_hours_total=2_788_000,
        gpu="h800",
        source="arXiv:2412.19437 Table 1: pre-training 2,664K H800 GPU-hours on 14.8T tokens, context extension "
        "119K, post-training 5K, 2,788K in total",
        notes="Trained with FP8 GEMMs: against the FP8 peak (twice the bf16 one) each MFU halves. The "
        "multi-token-prediction module's FLOPs are not in the model FLOPs.",
    ),
    dict(
        model="gpt-oss-120b",
        preset="gpt-oss-120b",
        tokens=None,
        gpu_hours=2_100_000,
        gpu_hours_total=2_100_000,
        gpu="h100-sxm",
        source="arXiv:2508.10925 (gpt-oss model card) section 2: 'gpt-oss-120b required 2.1 million H100-hours "
        "to complete, with gpt-oss-20b needing almost 10x fewer'; tokens: 'trillions', not published",
        notes="No token count is published, so no MFU can be implied: the rows give the tokens the hours "
        "would buy at the reports' MFU instead.",
    ),
]
