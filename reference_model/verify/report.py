"""reports/verification.md: every check of `sizing verify`, model by model and component by
component, written by `sizing report --with-verification` (needs torch), which calls
`verification_report_markdown`. Deterministic: no timings, fixed seeds, sorted keys."""

from __future__ import annotations

from reference_model.verify.registry import CheckResult, check_units, iter_checks
from sizing.inputs import PRESETS

# One preset per architecture family: the FLOP and memory checks run on these in full detail;
# the parameter check runs on every preset.
FAMILY_PRESETS = (
    "gpt2",
    "gpt3-175b",
    "opt-125m",
    "pythia-160m",
    "llama2-7b",
    "llama2-70b",
    "llama3.1-405b",
    "mistral-7b",
    "mixtral-8x7b",
    "qwen2-7b",
    "gemma-2b",
    "gemma-7b",
    "phi-2",
    "falcon-7b",
    "bloom-560m",
    "deepseek-v2-lite",  # latent attention, shared experts, a dense first layer
    "llama-4-maverick",  # chunked and NoPE layers, MoE every other layer, a shared expert
    "gpt-oss-20b",  # sinks, 128-key windows every other layer, biased router and experts
    "gemma-3-27b",  # four norms per block, qk-norm, a global layer every sixth
    "olmo-2-7b",  # output norms inside the residual branch, qk-norm over the whole width
    "deepseek-v3.2-exp",  # DSA: the lightning indexer, top-k sparse attention, index keys in the cache
)


def _int(value) -> str:
    return (
        f"{value:,}"
        if isinstance(value, int) and not isinstance(value, bool)
        else ("" if value is None else str(value))
    )


def _table(headers: list[str], rows: list[list]) -> str:
    import pandas as pd  # lazy: an optional dependency (the `report` extra), needed for this page only

    frame = pd.DataFrame([[_int(v) for v in row] for row in rows], columns=headers)
    return frame.to_markdown(index=False, disable_numparse=True)


def _status(result: CheckResult) -> str:
    return "OK" if result.ok else "**MISMATCH**"


def _params_section(results: dict[str, CheckResult]) -> list[str]:
    summary = []
    for name, r in results.items():
        total = r.rows[-1]
        summary.append([name, total[1], total[2], total[3], f"{len(r.rows) - 1}", _status(r)])
    out = [
        "## Parameters",
        "",
        "`numel()` of the model built on the meta device (tied weights once) against `sizing.formulas.params`, "
        "every preset. Command: `sizing verify --params --all`.",
        "",
        _table(["preset", "formula", "counted", "difference", "components", "status"], summary),
        "",
    ]
    for name in FAMILY_PRESETS:
        r = results[name]
        out += [
            f"### {name}: parameters by component ({_status(r)})",
            "",
            _table(["component", "formula", "counted", "difference", "expression"], r.rows),
            "",
        ]
    return out


def _flops_table(r: CheckResult) -> str:
    """One row per (run, component): forward / training / recompute, formula and counters."""
    cells: dict[tuple[str, str], dict[str, object]] = {}
    for run, phase, component, formula, torch_count, fvcore_count, _diff in r.rows:
        row = cells.setdefault((run, component), {})
        row[f"{phase} formula"] = formula
        row[f"{phase} torch"] = torch_count
        row[f"{phase} fvcore"] = fvcore_count
    columns = [
        "forward formula",
        "forward torch",
        "forward fvcore",
        "training formula",
        "training torch",
        "recompute formula",
        "recompute torch",
        "recompute selective formula",
        "recompute selective torch",
    ]
    rows = [[run, component] + [row.get(c) for c in columns] for (run, component), row in cells.items()]
    return _table(["run", "component"] + columns, rows)


def _flops_section(results: dict[str, CheckResult]) -> list[str]:
    out = [
        "## FLOPs",
        "",
        "Matmul FLOPs (2 per multiply-add; fvcore's counts x 2), attention `full`. Full size: the preset at its "
        "training context on the meta device, batch 1, counted by `FlopCounterMode` (forward and forward + "
        "backward). Toy size: the same switches (`reference_model.model.small.small_config`), batch 2, T 32, on CPU, "
        "counted by FlopCounterMode and fvcore (forward; fvcore has no backward), plus checkpointed runs whose "
        "recomputation must equal one forward of the blocks (full) or QK^T and AV once more (selective). "
        "Values are per batch, not per token. "
        "Command: `sizing verify --flops --preset NAME`.",
        "",
    ]
    for name in FAMILY_PRESETS:
        r = results[name]
        out += [f"### {name}: FLOPs by component ({_status(r)})", "", _flops_table(r), ""]
        out += [f"- {note}" for note in r.notes] + [""]
    return out


def _memory_section(results: dict[str, CheckResult]) -> list[str]:
    out = [
        "## Memory",
        "",
        "Bytes the reference model holds against `sizing.memory`, on the toy-size copy: activations saved for "
        "backward (`saved_tensors_hooks`, each storage once) for math and sdpa attention and full recomputation, "
        "the KV cache that `generate()` allocates, and weights, gradients and AdamW state after one step. "
        "Command: `sizing verify --memory --preset NAME`.",
        "",
    ]
    for name in FAMILY_PRESETS:
        r = results[name]
        out += [f"### {name}: memory ({_status(r)})", "", _table(r.headers, r.rows), ""]
        out += [f"- {note}" for note in r.notes] + [""]
    return out


def _run_all(workers: int | None) -> dict[tuple[str, str], CheckResult]:
    """{(check, preset): result}: params on every preset, flops and memory on FAMILY_PRESETS, on
    `workers` processes (registry.iter_checks; default every usable CPU)."""
    every = [(name, preset.config) for name, preset in PRESETS.items()]
    families = [(name, PRESETS[name].config) for name in FAMILY_PRESETS]
    units = check_units(every, ["params"], share=False) + check_units(families, ["flops", "memory"], share=False)
    return {(r.check, r.model): r for _unit, results in iter_checks(units, workers) for r in results}


def verification_report_markdown(workers: int | None = None) -> str:
    done = _run_all(workers)
    params = {name: done["params", name] for name in PRESETS}
    flops = {name: done["flops", name] for name in FAMILY_PRESETS}
    memory = {name: done["memory", name] for name in FAMILY_PRESETS}
    summary = [
        [
            name,
            _status(params[name]),
            _status(flops[name]) if name in flops else "",
            _status(memory[name]) if name in memory else "",
        ]
        for name in PRESETS
    ]
    everything = list(params.values()) + list(flops.values()) + list(memory.values())
    ok = sum(r.ok for r in everything)
    lines = [
        "# Verification against the reference model",
        "",
        f"{ok} of {len(everything)} checks match. Parameters are checked on every preset; FLOPs and memory on one "
        "preset per architecture family.",
        "",
        _table(["preset", "params", "flops", "memory"], summary),
        "",
    ]
    lines += _params_section(params) + _flops_section(flops) + _memory_section(memory)
    return "\n".join(lines).rstrip() + "\n"
