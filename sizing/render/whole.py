"""Render a WholeEstimate (sizing.whole: a hybrid, a vision-language model, or an architecture
counted by transformers on the meta device) as a table, markdown, JSON or CSV. The model's label
heads every output and its `exact` notes say how each number was obtained."""

from __future__ import annotations

import json

from sizing.inputs import format_float, format_int, format_si
from sizing.render.tables import csv_text, heading, table


def _num(value) -> str:
    return format_int(value) if isinstance(value, int) else format_float(value)


def _gib(n_bytes: int | None) -> str:
    return "not modelled" if n_bytes is None else f"{n_bytes / 2**30:,.2f} GiB ({format_int(n_bytes)} bytes)"


def whole_param_rows(est) -> list[list]:
    m = est.model
    rows = [[key, format_int(count)] for key, count in m.params.items()]
    rows.append(["total", format_int(m.total_params)])
    rows.append(["non_embedding", format_int(m.non_embedding_params)])
    if m.active_params != m.total_params:
        rows.append(["active", format_int(m.active_params)])
    return rows


def whole_flop_rows(est) -> list[list]:
    m = est.model
    rows = [[key, _num(v), format_si(v)] for key, v in m.forward_flops_per_token_by_component().items()]
    forward, training = m.forward_flops_per_token, est.training_flops_per_token
    rows.append(["forward", _num(forward), format_si(forward)])
    rows.append(["training (forward + backward = 3 x forward)", _num(training), format_si(training)])
    rows.append(
        [
            f"decode (1 new token, {m.seq_len} cached)",
            _num(m.decode_flops_per_token),
            format_si(m.decode_flops_per_token),
        ]
    )
    six_n = 6 * m.active_params
    rows.append(["6N (approximation)", _num(six_n), format_si(six_n)])
    return rows


def whole_training_rows(est) -> list[list]:
    t = est.training
    rows = [
        ["tokens", format_si(t.run.tokens)],
        ["GPU", f"{t.gpu.name} ({t.gpu.key}), {t.dtype}"],
        ["MFU", f"{t.run.mfu:g}"],
        ["training FLOPs (fwd+bwd)", f"{t.flops:.4e}"],
        ["training FLOPs (6N approximation)", f"{t.flops_6n:.4e}"],
        ["GPU-hours", f"{t.gpu_hours:,.0f}"],
        ["GPU-hours (6N)", f"{t.gpu_hours_6n:,.0f}"],
        [f"wall-clock days on {t.run.num_gpus} GPU(s)", f"{t.wall_clock_days:,.1f}"],
    ]
    if t.cost_usd is not None:
        rows.append([f"cost at ${t.run.price_per_gpu_hour:g}/GPU-hour", f"${t.cost_usd:,.0f}"])
    return rows


FITS = {True: "fits", False: "does not fit", None: "unknown: a part is not modelled"}


def whole_memory_rows(memory: dict) -> list[list]:
    """One memory block (sizing.whole.memory: inference or training) as rows."""
    if memory["mode"] == "inference":
        rows = [
            [f"weights ({memory['weight_dtype']})", _gib(memory["weights_bytes"])],
            [
                f"KV cache ({memory['kv_dtype']}, {memory['context']} positions x batch {memory['batch']})",
                _gib(memory["kv_cache_bytes"]),
            ],
            [f"recurrent state (batch {memory['batch']})", _gib(memory["state_bytes"])],
        ]
    else:
        rows = [
            [
                f"weights + gradients + {memory['optimizer']} ({memory['precision']}, ZeRO {memory['zero']} over dp "
                f"{memory['dp']})",
                _gib(memory["model_states_bytes"]),
            ],
            [
                f"activations ({memory['seq_len']} tokens x micro-batch {memory['micro_batch']}, no recompute)",
                _gib(memory["activations_bytes"]),
            ],
        ]
    rows.append(["runtime reserve (CUDA context)", _gib(memory["runtime_reserve_bytes"])])
    if memory["total_bytes"] is None:
        rows.append([f"total on {memory['gpu']}", FITS[memory["fits"]]])
    else:
        rows.append([f"total on {memory['gpu']}", f"{_gib(memory['total_bytes'])}: {FITS[memory['fits']]}"])
    return rows


def render_whole_memory(model, memory: dict, fmt: str) -> str:
    """`sizing memory` of a WholeModel: the model's label, how its numbers were obtained, the block."""
    if fmt == "json":
        return json.dumps({"model": model.to_dict(), "memory": memory}, indent=2)
    if fmt == "csv":
        return csv_text(["key", "value"], [[k, v] for k, v in memory.items()])
    parts = [heading(model.name, fmt, 1), model.label, ""]
    parts += [table(["quantity", "how"], list(model.exact.items()), fmt), ""]
    parts += [
        heading(f"{memory['mode'].capitalize()} memory", fmt),
        table(["part", "bytes"], whole_memory_rows(memory), fmt),
    ]
    return "\n".join(parts) + "\n"


def render_whole_estimate(est, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(est.to_dict(), indent=2)
    if fmt == "csv":
        return _render_csv(est)
    m = est.model
    parts = [heading(m.name, fmt, 1), m.label, ""]
    parts += [heading("How each number was obtained", fmt), table(["quantity", "how"], list(m.exact.items()), fmt)]
    parts += ["", heading("Parameters", fmt), table(["component", "count"], whole_param_rows(est), fmt)]
    parts += [
        "",
        heading(
            f"FLOPs per token: T = {m.seq_len} ({m.seq_len_source}), attention = {m.attention} "
            "(2 FLOPs per multiply-add)",
            fmt,
        ),
        table(["component", "FLOPs/token", "SI"], whole_flop_rows(est), fmt),
    ]
    if m.details:
        parts += ["", table(["detail", "value"], [[k, str(v)] for k, v in m.details.items()], fmt)]
    if est.training:
        parts += ["", heading("Training cost", fmt), table(["quantity", "value"], whole_training_rows(est), fmt)]
    else:
        parts += ["", "Training cost: pass --tokens (e.g. --tokens 2T)."]
    if est.memory is not None:
        for block in est.memory.values():
            parts += [
                "",
                heading(f"Memory: {block['mode']}", fmt),
                table(["part", "bytes"], whole_memory_rows(block), fmt),
            ]
    parts += [f"note: {note}" for note in m.notes]
    return "\n".join(parts) + "\n"


def _render_csv(est) -> str:
    data = est.to_dict()
    rows = [["model", "label", "", est.model.label]]
    rows += [["exact", k, "", v] for k, v in est.model.exact.items()]
    rows += [["params", k, "", v] for k, v in data["params"]["components"].items()]
    rows += [["params", k, "", data["params"][k]] for k in ("total", "non_embedding", "active", "embedding")]
    rows += [["flops_per_token", k, "", v] for k, v in data["flops"]["components"].items()]
    for key in ("forward_per_token", "training_per_token", "decode_per_token", "kaplan_6n_per_token"):
        rows.append(
            ["flops_per_token", key, f"T={est.model.seq_len} attention={est.model.attention}", data["flops"][key]]
        )
    for section in ("training",):
        for key, value in (data[section] or {}).items():
            rows.append([section, key, "", value])
    for part in ("inference", "training"):
        for key, value in ((data["memory"] or {}).get(part) or {}).items():
            rows.append(["memory", f"{part}.{key}", "", value])
    return csv_text(["section", "key", "formula", "value"], rows)


def render_whole_parallel(plan, fmt: str) -> str:
    """`sizing parallel` of a WholeModel trained data-parallel (sizing.whole.parallel.WholePlan)."""
    if fmt == "json":
        return json.dumps(plan.to_dict(), indent=2)
    data = plan.to_dict()
    if fmt == "csv":
        rows = [[k, v] for k, v in data.items() if not isinstance(v, (dict, list))]
        rows += [[f"per_gpu.{k}", v] for k, v in data["per_gpu"].items()]
        return csv_text(["key", "value"], rows)
    m = plan.model
    parts = [heading(f"{m.name}: {data['layout_label']} on {plan.gpus} x {plan.gpu.key}", fmt, 1), m.label, ""]
    parts += [table(["quantity", "how"], list(m.exact.items()), fmt), ""]
    parts += [heading("Per-GPU memory", fmt), table(["part", "bytes"], whole_memory_rows(plan.memory), fmt), ""]
    step = [
        ["layout", data["layout_label"]],
        ["global batch", f"{plan.global_batch} sequences of {m.seq_len} tokens"],
        ["compute", f"{plan.compute_seconds:.3f} s"],
        ["data-parallel collectives (exposed)", f"{plan.comm_seconds:.3f} s ({plan.exposed_comm_seconds:.3f} s)"],
        ["step", f"{plan.step_seconds:.3f} s"],
        ["MFU", f"{plan.mfu:.3f} (model FLOPs / (step x dense bf16 peak))"],
    ]
    if plan.gpu_hours is not None:
        step.append([f"GPU-hours for {format_si(plan.tokens)} tokens", f"{plan.gpu_hours:,.0f}"])
    parts += [heading("Step (estimated)", fmt), table(["quantity", "value"], step, fmt), ""]
    parts += [f"note: {note}" for note in (*plan.notes, *m.notes)]
    return "\n".join(parts) + "\n"
