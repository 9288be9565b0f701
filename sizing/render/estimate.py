"""Render an Estimate as a table, markdown, JSON or CSV (the CLI prints what this returns)."""

from __future__ import annotations

import json

from sizing.estimate import Estimate
from sizing.formulas import model_flops_per_token
from sizing.inputs import format_float, format_int, format_si
from sizing.render.memory import flat_items as memory_flat_items
from sizing.render.memory import render_memory
from sizing.render.tables import csv_text, heading, table
from sizing.vocabulary import mfu_meaning


def _num(value) -> str:
    return format_int(value) if isinstance(value, int) else format_float(value)


def param_rows(est: Estimate) -> list[list]:
    rows = [
        [c.key, c.label, c.formula, format_int(c.per_layer) if c.per_layer is not None else "", format_int(c.count)]
        for c in est.params.components
    ]
    p = est.params
    rows.append(["total", "", "sum of the above", "", format_int(p.total)])
    rows.append(["non_embedding", "", "total - lookup tables", "", format_int(p.non_embedding)])
    if p.active != p.total:
        rows.append(["active", "", "total - (E-k) experts", "", format_int(p.active)])
    return rows


def group_rows(est: Estimate) -> list[list]:
    """The seed's worked-example view: attention, MLP, norms, embeddings (per layer and total)."""
    from sizing.formulas import PARAM_GROUPS, param_groups

    groups, present = param_groups(est.config), {c.key for c in est.params.components}
    return [
        [
            name,
            " + ".join(k for k in PARAM_GROUPS[name] if k in present),
            format_int(g["per_layer"]) if g["per_layer"] is not None else "",
            format_int(g["count"]),
        ]
        for name, g in groups.items()
        if g["count"]
    ]


def flop_rows(est: Estimate) -> list[list]:
    fl = est.flops
    rows = [[c.key, c.formula, _num(c.forward_per_token), format_si(c.forward_per_token)] for c in fl.components]
    rows.append(["forward", "sum of the above", _num(fl.per_token(fl.forward)), format_si(fl.per_token(fl.forward))])
    rows.append(["backward", "2 x forward", _num(fl.per_token(fl.backward)), format_si(fl.per_token(fl.backward))])
    if fl.recompute != "none":
        rows.append(
            [
                f"recompute ({fl.recompute})",
                "re-run forward",
                _num(fl.per_token(fl.recompute_flops)),
                format_si(fl.per_token(fl.recompute_flops)),
            ]
        )
    rows.append(
        [
            "training",
            "forward + backward" + (" + recompute" if fl.recompute != "none" else ""),
            _num(fl.per_token(fl.training)),
            format_si(fl.per_token(fl.training)),
        ]
    )
    six_n = est.kaplan_6n_per_token
    exact = model_flops_per_token(fl)
    decode = est.decode_per_token
    label = "decode (inference, MLA naive: full K/V)" if est.config.is_mla else "decode (inference)"
    rows.append([label, f"1 new token, {fl.seq_len} cached keys (KV cache)", _num(decode), format_si(decode)])
    if est.config.is_mla:
        absorbed = est.decode_per_token_absorbed
        rows.append(
            [
                "decode (MLA absorbed: latent cache)",
                "W_UK folded into q, W_UV into o; scores over r_kv + d_r",
                _num(absorbed),
                format_si(absorbed),
            ]
        )
    rows.append(
        [
            "6N (approximation)",
            f"6 x {format_si(est.params.active)} params; {(six_n / exact - 1) * 100:+.1f}% vs exact fwd+bwd",
            _num(six_n),
            format_si(six_n),
        ]
    )
    return rows


def _mfu_rows(est: Estimate) -> list[list]:
    """The MFU, where it came from, and the layout and batch the step model assumed."""
    mfu, lay = est.training.run.mfu, est.mfu_layout
    if lay is None:
        return [["MFU", f"{mfu:g} ({est.mfu_source})"]]
    tokens = lay.global_batch * est.seq_len
    mfu_text = f"{mfu:.3f} (per-operation step model; {lay.predicted_mfu:.3f} with attention counted causal)"
    step_text = f"{lay.step_seconds:.3g} s"
    if lay.band is not None:
        lo, hi = lay.band.scaled(mfu, inverse=True)
        mfu_text += f"; {lo:.3f}-{hi:.3f}"
        step_text = lay.band.text(lay.step_seconds)
    return [
        ["MFU", mfu_text],
        ["layout assumed", f"{lay.layout} on {lay.gpus} GPUs, recompute {lay.recompute} (as `sizing parallel --gpus`)"],
        ["global batch assumed", f"{lay.global_batch:,} sequences x {est.seq_len:,} = {format_si(tokens)} tokens"],
        ["step time", step_text],
    ]


def _banded(est: Estimate, value: float, spec: str = ",.0f") -> str:
    """A time answer and, when its MFU came from the step model, the band of that step."""
    band = est.mfu_layout.band if est.mfu_layout is not None else None
    if band is None:
        return format(value, spec)
    lo, hi = band.scaled(value)
    return f"{format(value, spec)} ({format(lo, spec)}-{format(hi, spec)})"


def training_rows(est: Estimate) -> list[list]:
    t = est.training
    rows = [
        ["tokens", format_si(t.run.tokens)],
        ["GPU", f"{t.gpu.name} ({t.gpu.key}), {t.dtype} dense peak {t.peak_flops_per_second / 1e12:g} TFLOP/s"],
        *_mfu_rows(est),
        ["MFU means", mfu_meaning(est.flops.attention, t.dtype)],
        ["training FLOPs (exact, fwd+bwd)", f"{t.flops:.4e}"],
        ["training FLOPs (6N approximation)", f"{t.flops_6n:.4e}"],
        ["GPU-hours (exact)", _banded(est, t.gpu_hours)],
        ["GPU-hours (6N)", f"{t.gpu_hours_6n:,.0f}"],
        [f"wall-clock days on {t.run.num_gpus} GPU(s)", _banded(est, t.wall_clock_days, ",.1f")],
    ]
    if t.hardware_flops != t.flops:
        rows.insert(5, ["hardware FLOPs (with recompute)", f"{t.hardware_flops:.4e}"])
    if t.cost_usd is not None:
        rows.append([f"cost at ${t.run.price_per_gpu_hour:g}/GPU-hour", f"${t.cost_usd:,.0f}"])
    e = est.energy
    if e is not None:
        power = "TDP" if e.watts_source != "given" else "given"
        grid = "Llama 2 card" if e.carbon_source != "given" else "given"
        rows.append(
            ["energy (GPU-hours x W x PUE)", f"{e.kwh:,.0f} kWh ({e.watts:g} W per GPU, {power}; PUE {e.pue:g})"]
        )
        rows.append(["CO2 (energy x grid intensity)", f"{e.tco2eq:,.2f} tCO2eq ({e.kg_co2_per_kwh:g} kg/kWh, {grid})"])
    return rows


def mtp_section(est: Estimate, fmt: str) -> list[str]:
    """The multi-token-prediction modules (DeepSeek-V3 sec. 2.2), sized apart: not in any total above."""
    m, fl = est.mtp, est.flops
    rows = [[key, format_int(count)] for key, count in m["module_components"].items()]
    share = m["training_flops_per_token"] / fl.per_token(fl.training)
    rows += [
        [f"{m['depth']} module(s), embedding and head shared (the paper)", format_int(m["params_shared"])],
        [f"{m['depth']} module(s) as the checkpoint stores them (with the copies)", format_int(m["params_checkpoint"])],
        ["checkpoint total (the model + the modules)", format_int(est.params.total + m["params_checkpoint"])],
        [f"forward FLOPs/token (T = {fl.seq_len}, {fl.attention})", _num(m["forward_flops_per_token"])],
        ["training FLOPs/token (3 x forward)", f"{_num(m['training_flops_per_token'])} (+{share:.1%} of the model's)"],
    ]
    title = (
        f"Multi-token prediction: {m['depth']} module(s) (arXiv:2412.19437 sec. 2.2), sized apart: in no total "
        "above (transformers builds none; the training cost leaves them out)"
    )
    return [heading(title, fmt), table(["quantity", "value"], rows, fmt)]


def render_estimate(est: Estimate, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(est.to_dict(), indent=2)
    if fmt == "csv":
        return _render_csv(est)
    fl = est.flops
    parts = [heading(f"{est.name}", fmt, 1)]
    if est.source:
        parts.append(f"source: {est.source}")
    parts += [
        "",
        heading("Parameters", fmt),
        table(["component", "name", "formula", "per layer", "count"], param_rows(est), fmt),
        "",
        table(["group", "components", "per layer", "count"], group_rows(est), fmt),
    ]
    parts += [
        "",
        heading(
            f"FLOPs per token: T = {fl.seq_len} ({est.seq_len_source}), attention = {fl.attention}, recompute = "
            f"{fl.recompute} (2 FLOPs per multiply-add, matmuls only)",
            fmt,
        ),
        table(["component", "formula (forward)", "FLOPs/token", "SI"], flop_rows(est), fmt),
    ]
    if est.mtp is not None:
        parts += ["", *mtp_section(est, fmt)]
    if est.training:
        parts += [
            "",
            heading("Training cost (GPU-hours = model FLOPs / (peak x MFU))", fmt),
            table(["quantity", "value"], training_rows(est), fmt),
        ]
    else:
        parts += ["", "Training cost: no published token count for this model; pass --tokens (e.g. --tokens 2T)."]
    if est.memory is not None:
        parts += ["", _memory_text(est.memory, fmt)]
    return "\n".join(parts) + "\n"


def _memory_text(memory, fmt: str) -> str:
    """The memory summary; with a GPU count, its training part is the assumed layout's
    (sizing.parallel.LayoutMemory, rendered as `sizing parallel` renders it)."""
    plan = getattr(memory.training, "plan", None)
    if plan is None:
        return render_memory(memory, fmt)
    from sizing.render.parallel import layout_memory_text

    return "\n".join([layout_memory_text(plan, fmt), "", render_memory(memory.inference, fmt)])


def _render_csv(est: Estimate) -> str:
    rows = []
    for c in est.params.components:
        rows.append(["params", c.key, c.formula, c.count])
    p = est.params
    rows += [
        ["params", "total", "", p.total],
        ["params", "non_embedding", "", p.non_embedding],
        ["params", "active", "", p.active],
    ]
    fl = est.flops
    for c in fl.components:
        rows.append(["flops_per_token", c.key, c.formula, c.forward_per_token])
    rows += [
        ["flops_per_token", "forward", f"T={fl.seq_len} attention={fl.attention}", fl.per_token(fl.forward)],
        ["flops_per_token", "backward", "2 x forward", fl.per_token(fl.backward)],
        ["flops_per_token", "training", f"recompute={fl.recompute}", fl.per_token(fl.training)],
        ["flops_per_token", "decode", f"KV cache of {fl.seq_len}", est.decode_per_token],
        ["flops_per_token", "kaplan_6n", "approximation", est.kaplan_6n_per_token],
    ]
    if est.training:
        for key, value in est.to_dict()["training"].items():
            rows.append(["training", key, "", value])
    if est.memory is not None:
        for key, value in memory_flat_items(est.memory):
            rows.append(["memory", key, "", value])
    return csv_text(["section", "key", "formula", "value"], rows)
