"""Render a Plan (sizing.plan.compute_optimal) as a table, markdown, JSON or CSV (one row per optimum and shape)."""

from __future__ import annotations

import json

from sizing.formulas import LOSS_LAWS, SARDANA_SOURCE
from sizing.inputs import format_int, format_si
from sizing.plan import Plan
from sizing.render.tables import csv_text, heading, table


def optimum_rows(p: Plan) -> list[list]:
    return [
        [
            o.name + (" *" if o.key == p.law else ""),
            o.coefficients,
            format_si(o.params),
            format_si(o.tokens),
            f"{o.tokens_per_param:.1f}",
            *(f"{o.losses[law.key]:.4f}" for law in LOSS_LAWS),
        ]
        for o in p.optima
    ]


def _banded(value: float, band, spec: str) -> str:
    """A time answer and, when its MFU came from the step model, the band of that step."""
    if band is None:
        return format(value, spec)
    return f"{format(value, spec)} ({format(band[0], spec)}-{format(band[1], spec)})"


def shape_rows(p: Plan) -> list[list]:
    rows = []
    for s in p.shapes:
        c = s.config
        rows.append(
            [
                f"{s.label}: {s.aspect}",
                c.d_model,
                c.n_layers,
                c.n_heads,
                c.kv_heads,
                c.d_ff,
                format_int(s.params),
                format_si(s.tokens),
                f"{s.training_flops:.3e}",
                f"{s.mfu:.3f}",
                _banded(s.gpu_hours, s.gpu_hours_band, ",.0f"),
                f"{_banded(s.days, s.days_band, ',.1f')} on {s.gpus:,}"
                + ("" if s.within_budget else f" (over budget: {format_si(s.tokens_within_budget)} tokens fit)"),
                ("yes: " if s.fits else "no: ") + s.fit_setting,
            ]
        )
    return rows


def _shape_lines(p: Plan, fmt: str, like: str) -> list[str]:
    """The shapes near N_opt, or the note saying why there are none (a budget below the family's smallest shape)."""
    chosen = p.optimum(p.law)
    if not p.shapes:
        return [f"No shape of the {like} family: {p.shapes_note}.", ""]
    return [
        heading(
            f"Shapes near N_opt = {format_si(chosen.params)} ({chosen.name}): the {like} family, "
            f"T = {p.shapes[0].seq_len}, D = C / (6N) tokens, on {p.gpu}; MFU: {p.shapes[0].mfu_source.split(',')[0]}",
            fmt,
        ),
        table(
            [
                "shape (size, depth)",
                "d_model",
                "layers",
                "heads",
                "kv heads",
                "d_ff",
                "params (exact)",
                "tokens",
                "train FLOPs (exact)",
                "MFU",
                "GPU-hours",
                f"days on N x {p.gpu}",
                "fits for training (bf16-mixed AdamW): layout"
                if p.mfu_given is None
                else "fits for training (bf16-mixed AdamW, micro-batch 1)",
            ],
            shape_rows(p),
            fmt,
        ),
        "",
    ]


def render_plan(p: Plan, fmt: str, like: str) -> str:
    if fmt == "json":
        return json.dumps({**p.to_dict(), "like": like}, indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        return _csv(p)
    parts = [
        heading(f"Compute-optimal plan for C = {p.flops:.3e} FLOPs", fmt, 1),
        f"budget: {p.budget_note}; every law counts C = 6·N·D (N with embeddings), as it was fitted",
        "",
        heading("N_opt and D_opt by law (* sets the shapes below)", fmt),
        table(
            ["law", "coefficients", "N_opt", "D_opt", "tokens/param", *(f"loss: {law.name}" for law in LOSS_LAWS)],
            optimum_rows(p),
            fmt,
        ),
        "",
        *_shape_lines(p, fmt, like),
        "Exact FLOPs are this tool's (forward + backward matmuls, full attention): above 6·N·D by the attention "
        "scores. "
        + (
            "Each shape's layout, MFU and band are the step model's, as `sizing parallel --gpus N` finds them."
            if p.mfu_given is None
            else "At the MFU given, a parallel layout (tensor/pipeline) is not searched; `sizing parallel` does."
        ),
    ]
    if p.inference is not None:
        parts += ["", *_inference_lines(p, fmt)]
    parts += ["", heading("Sources", fmt), *[f"- {o.name}: {o.source}" for o in p.optima]]
    if p.inference is not None:
        parts.append(f"- inference-aware: {SARDANA_SOURCE}")
    return "\n".join(parts) + "\n"


def _inference_lines(p: Plan, fmt: str) -> list[str]:
    ia = p.inference
    saved = 1 - ia.total_flops / ia.optimal_total_flops
    return [
        heading(f"Inference-aware (Sardana et al. 2023): {format_si(ia.inference_tokens)} tokens served", fmt),
        table(
            ["model", "params", "training tokens", "training FLOPs (6ND)", "inference FLOPs (2N·D_inf)", "lifetime"],
            [
                [
                    "compute-optimal",
                    format_si(ia.optimal_params),
                    format_si(ia.optimal_tokens),
                    f"{ia.optimal_training_flops:.3e}",
                    f"{ia.optimal_inference_flops:.3e}",
                    f"{ia.optimal_total_flops:.3e}",
                ],
                [
                    "inference-aware",
                    format_si(ia.params),
                    format_si(ia.tokens),
                    f"{ia.training_flops:.3e}",
                    f"{ia.inference_flops:.3e}",
                    f"{ia.total_flops:.3e}",
                ],
            ],
            fmt,
        ),
        f"Same predicted loss ({ia.loss:.4f}); lifetime FLOPs {saved * 100:.1f}% lower with the smaller model.",
    ]


CSV_HEADERS = [
    "kind",
    "name",
    "params",
    "tokens",
    "tokens_per_param",
    "loss_hoffmann_a3",
    "loss_epoch",
    "d_model",
    "n_layers",
    "n_heads",
    "n_kv_heads",
    "d_ff",
    "training_flops",
    "gpu_hours",
    "days",
    "fits",
]


def _csv(p: Plan) -> str:
    rows = []
    for o in p.optima:
        losses = [o.losses[law.key] for law in LOSS_LAWS]
        rows.append(["optimum", o.key, o.params, o.tokens, o.tokens_per_param, *losses, *[""] * 9])
    for s in p.shapes:
        c = s.config
        shape = [c.d_model, c.n_layers, c.n_heads, c.kv_heads, c.d_ff, s.training_flops, s.gpu_hours, s.days, s.fits]
        rows.append(["shape", s.label, s.params, s.tokens, s.tokens / s.params, "", "", *shape])
    if p.inference is not None:
        ia = p.inference
        losses = [ia.loss if law.key == p.inference_law else "" for law in LOSS_LAWS]
        rows.append(["inference-aware", "sardana", ia.params, ia.tokens, ia.tokens / ia.params, *losses, *[""] * 9])
    return csv_text(CSV_HEADERS, rows)
