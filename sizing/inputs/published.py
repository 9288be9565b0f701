"""Published training runs: the figures `reports/published-runs.md` compares against.

The entries of the project's file of published figures ("training_runs", "gpt3_table"; a copy
lives in tests/fixtures/reference-figures.json) that the report needs, as data in
`sizing/data/published_runs.json`, so that reports regenerate from a clean checkout;
tests/test_report.py checks that the two agree.
Each entry keeps its source.

Fields: model (as reference-figures.json names it), preset (our preset, or None), tokens,
flops (published total training compute, or None), gpu_hours (published GPU- or chip-hours,
or None), gpu (our hardware key for the implied MFU), reported_mfu / reported_tflops_per_gpu
(what the paper says it achieved), source, notes. Runs whose model is not a preset carry
the paper's parameter count in `params` and say how it was obtained in `params_note`.
"""

from __future__ import annotations

from sizing.inputs import data_files

A100_80GB = "a100-80gb"  # the GPU of the LLaMA, Llama-2, OPT and BLOOM runs (their sources below)
H100_80GB = "h100-sxm"  # "H100-80GB (TDP of 700W)": the SXM part
TABLES = ("GPT3_TABLE_D1", "LLAMA3_GPU_HOURS", "LLAMA_GPU_HOURS", "MOE_RUNS", "OTHER_RUNS", "PALM_540B_SHAPE")


@data_files.cached_table
def _tables() -> dict[str, list[dict]]:
    content = data_files.builtin("published_runs.json")
    return {
        name: content[name.lower()]
        if isinstance(content.get(name.lower()), dict)
        else data_files.entries(content, name.lower(), "published_runs.json")
        for name in TABLES
    }


def __getattr__(name: str):
    """Each table (GPT3_TABLE_D1, LLAMA_GPU_HOURS, ...), read from the data file on first use."""
    if name in TABLES:
        return _tables()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
