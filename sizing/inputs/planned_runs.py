"""The planned GPU runs of `sizing profile` (issue 7), as data.

`sizing profile --planned NAME` takes a run's model and settings, benchmarks/gpu_profile.sh
runs each of them (in this order; tests/test_profile.py checks the script names the same
runs), and the report page (sizing/report/gpu_profile.py) sets sizing's predictions beside
what they measured. Pure Python, light imports.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.inputs.config import ModelConfig
from sizing.inputs.presets import get_preset
from sizing.validate import require_choice

SCRIPT = "benchmarks/gpu_profile.sh"  # runs every planned run on one CUDA GPU
TARGET_MFU = 0.5  # issue 7: >= 50% MFU (full convention) for the ~1.3B GPT at T 2048 on H100/H200
# The reference model names its attention paths after torch: "sdpa" (the fused kernel, flash
# on CUDA) and "math". sizing's vocabulary calls the first "flash" (vocabulary.attention_impl).
REFERENCE_ATTENTION_IMPLS: tuple[str, ...] = ("sdpa", "math")


@dataclass(frozen=True)
class PlannedRun:
    name: str
    preset: str
    overrides: tuple[str, ...]
    seq_len: int
    micro_batch: int
    steps: int
    warmup: int
    compile: bool
    purpose: str
    dtype: str = "bf16"
    attention_impl: str = "sdpa"
    recompute: str = "none"

    def args(self) -> list[str]:
        """The `sizing profile` options that reproduce this run."""
        return model_args(self.preset, None, self.overrides) + settings_args(self)

    def config(self) -> ModelConfig:
        """The preset's config with this run's overrides."""
        return get_preset(self.preset).config.with_overrides(dict(item.split("=", 1) for item in self.overrides))


_PAD = "vocab_pad_multiple=64"  # 50257 -> 50304 rows (nanoGPT): tensor-core friendly lm_head; FLOPs count the padded V
PLANNED_RUNS: tuple[PlannedRun, ...] = (
    PlannedRun(
        "gpt-1.3b",
        "gpt3-1.3b",
        (_PAD,),
        2048,
        8,
        10,
        3,
        True,
        "issue 7's target: GPT-2-style ~1.3B (24 layers, d 2048, 16 heads of 128), T 2048, bf16, SDPA "
        "(flash), fused AdamW, torch.compile: at least 50% MFU (full convention) on an H100/H200",
    ),
    PlannedRun(
        "llama-1b-gqa",
        "llama3-8b",
        ("d_model=2048", "n_layers=16", "n_heads=32", "n_kv_heads=8", "d_ff=8192", "tied_embeddings=true"),
        2048,
        8,
        10,
        3,
        True,
        "Llama-3.2-1B shape (SwiGLU, RMSNorm, RoPE, GQA 32/8 heads, vocab 128,256, tied), compiled; the "
        "GPU-hours projection applies its MFU to llama3-8b's published run",
    ),
    PlannedRun(
        "gpt2-124m",
        "gpt2",
        (_PAD,),
        1024,
        16,
        20,
        3,
        False,
        "nanoGPT's GPT-2 small at T 1024, eager (no compile): the eager baseline, and the run whose peak "
        "memory the eager formula describes",
    ),
)
PLANNED_RUN_NAMES: tuple[str, ...] = tuple(run.name for run in PLANNED_RUNS)


def planned_run(name: str) -> PlannedRun:
    """The planned run called `name` (a SizingError naming the valid ones otherwise)."""
    require_choice("planned run", name, PLANNED_RUN_NAMES)
    return next(run for run in PLANNED_RUNS if run.name == name)


def model_args(preset: str | None, config_path: str | None, overrides) -> list[str]:
    """--preset NAME | --config PATH, then one --set per override."""
    out = ["--preset", preset] if preset else ["--config", config_path]
    for item in overrides:
        out += ["--set", item]
    return out


def settings_args(s) -> list[str]:
    """The `sizing profile` settings options of `s`, anything with the attributes of a
    PlannedRun's settings (seq_len ... recompute): a planned run or the profiler's settings."""
    out = [
        "--seq-len",
        str(s.seq_len),
        "--micro-batch",
        str(s.micro_batch),
        "--steps",
        str(s.steps),
        "--warmup",
        str(s.warmup),
        "--dtype",
        s.dtype,
        "--attention-impl",
        s.attention_impl,
    ]
    if s.compile:
        out.append("--compile")
    return out + ["--recompute", s.recompute]
