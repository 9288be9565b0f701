"""The one rule for the default GPU: H100 (SXM) unless the preset's published run says otherwise.

Most runs sized in 2026 are on H100, H200 or B200, so a model with no published run (a config
file, a preset without one) is priced on an H100. A preset whose paper or model card publishes
its run's GPU keeps that GPU, so its published GPU-hours stay comparable: LLaMA, Llama-2, OPT
and BLOOM on A100-80GB, Llama-3 on H100, DeepSeek-V3 on H800 (sizing.inputs.published, each run with
its source). `--gpu` always wins.
"""

from __future__ import annotations

from sizing.vocabulary import DEFAULT_GPU


def published_gpu(preset_name: str | None) -> str | None:
    """The GPU of the preset's published training run, or None."""
    if preset_name is None:
        return None
    from sizing.inputs.published import LLAMA3_GPU_HOURS, LLAMA_GPU_HOURS, MOE_RUNS, OTHER_RUNS

    for run in (*LLAMA_GPU_HOURS, *LLAMA3_GPU_HOURS, *OTHER_RUNS, *MOE_RUNS):
        if run.get("preset") == preset_name and run.get("gpu"):
            return run["gpu"]
    return None


def default_gpu_for(preset_name: str | None) -> str:
    """DEFAULT_GPU (H100) unless the preset's published run names another GPU."""
    return published_gpu(preset_name) or DEFAULT_GPU
