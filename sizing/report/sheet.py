"""One sheet per preset: `reports/presets/<name>.md`."""

from __future__ import annotations

from sizing.estimate import estimate
from sizing.formulas import flops as F
from sizing.formulas import model_flops_per_token
from sizing.formulas import params as P
from sizing.inputs import Preset, format_si, get_gpu
from sizing.report import cells as fmt
from sizing.report import memory_summary as report_memory
from sizing.vocabulary import ATTENTION_CONVENTIONS, DEFAULT_MFU  # DEFAULT_MFU: every GPU-hour figure of the reports

SHEET_GPUS = ("a100-80gb", "h100-sxm", "h200", "b200", "mi300x")
CLUSTER_GPUS = 1024  # for the wall-clock column
ATTENTION_KEYS = F.SELECTIVE_RECOMPUTE_KEYS  # QK^T and AV


def sheet_contexts(preset: Preset) -> list[int]:
    """2048, the training context and 32768; a learned position table has no rows past the
    training context, so those models stop there (and show half of it instead)."""
    ctx = preset.context
    if preset.config.position == "learned":
        chosen = {t for t in (2048, ctx) if t <= ctx}
        if len(chosen) < 2:
            chosen.add(ctx // 2)
    else:
        chosen = {2048, ctx, 32768}
    return sorted(chosen)


def attention_share(cfg, seq_len: int, attention: str) -> float:
    breakdown = F.flop_breakdown(cfg, seq_len, attention)
    return sum(c.forward_per_sequence for c in breakdown.components if c.key in ATTENTION_KEYS) / breakdown.forward


def render_sheet(preset: Preset) -> str:
    cfg = preset.config
    return fmt.document(
        fmt.GENERATED_NOTE,
        f"# {preset.name}",
        _header(preset),
        "## Config",
        fmt.markdown_table(_config_rows(cfg)),
        "## Parameters",
        "Exact counts by component (`sizing estimate --preset " + preset.name + "`); per layer × "
        f"L = {cfg.n_layers} for the block components.",
        fmt.markdown_table(_param_rows(preset)),
        _published_note(preset),
        "### Grouped as in the worked example",
        fmt.markdown_table(_group_rows(cfg)),
        "## FLOPs per token",
        f"Matmuls only, 2 FLOPs per multiply-add; backward = 2 × forward. `full`: T keys per query; "
        f"`causal`: query i meets min(i, W) keys. At the training context T = {fmt.count(preset.context)}:",
        fmt.markdown_table(_flop_rows(preset)),
        _decode_note(preset),
        "### By context length (forward per token; training = 3 × forward)",
        fmt.markdown_table(_context_rows(preset)),
        "## Training cost",
        _training(preset),
        "## Memory",
        _memory(preset),
    )


def _header(preset: Preset) -> str:
    lines = [
        f"- family: {preset.family}",
        f"- source: {preset.source}",
        f"- training context: {fmt.count(preset.context)} tokens",
    ]
    if preset.training_tokens:
        where = "same source" if preset.tokens_source == preset.source else preset.tokens_source
        lines.append(f"- published training tokens: {fmt.si(preset.training_tokens)} ({where})")
    else:
        lines.append("- published training tokens: not known (training cost below needs `--tokens`)")
    if preset.hf_id:
        lines.append(f"- Hugging Face: `{preset.hf_id}`")
    if preset.notes:
        lines.append(f"- notes: {preset.notes}")
    return "\n".join(lines)


RESOLVED = {
    "n_kv_heads": "kv_heads",
    "head_dim": "d_head",
    "norm_bias": "has_norm_bias",
    "expert_d_ff": "expert_ff",
    "vocab_size": "padded_vocab",
}


def _config_rows(cfg) -> list[dict]:
    """Every field as set, and the value it resolves to where a default derives from others."""
    rows = []
    for name, value in cfg.to_dict().items():
        resolved = getattr(cfg, RESOLVED[name]) if name in RESOLVED else value
        rows.append(
            {
                "field": name,
                "value": f"`{value}`",
                "resolved": f"`{resolved}`"
                if resolved != value and not (name == "expert_d_ff" and not cfg.is_moe)
                else "",
            }
        )
    return rows


def _param_rows(preset: Preset) -> list[dict]:
    cfg = preset.config
    rows = [
        {
            "component": c.key,
            "name": c.label,
            "formula": c.formula,
            "per layer": fmt.count(c.per_layer) if c.per_layer is not None else "",
            "count": fmt.count(c.count),
        }
        for c in P.param_components(cfg)
    ]
    total, active = P.total_params(cfg), P.active_params(cfg)
    rows.append({"component": "**total**", "formula": "sum of the above", "count": fmt.count(total)})
    rows.append(
        {
            "component": "non-embedding",
            "formula": "total − lookup tables",
            "count": fmt.count(P.non_embedding_params(cfg)),
        }
    )
    if active != total:
        rows.append({"component": "active", "formula": "total − (E − k) experts", "count": fmt.count(active)})
    return rows


def _published_note(preset: Preset) -> str:
    total = P.total_params(preset.config)
    if preset.published_params:
        gap = total - preset.published_params
        verdict = "matches exactly" if gap == 0 else f"differs by {gap:+,}"
        return f"Published count: {fmt.count(preset.published_params)}: {verdict}."
    if preset.published_params_rounded:
        return (
            f"Published count (rounded): {format_si(preset.published_params_rounded, 4)}; ours "
            f"{fmt.diff(total, preset.published_params_rounded)} from it."
        )
    return "No published parameter count."


def _group_rows(cfg) -> list[dict]:
    comps = {c.key: c for c in P.param_components(cfg)}

    def formula(group):
        return " + ".join(comps[k].formula for k in P.PARAM_GROUPS[group] if k in comps)

    groups = P.param_groups(cfg)
    attn, mlp = groups["attention"]["per_layer"] or 0, groups["mlp"]["per_layer"] or 0
    L, total = cfg.n_layers, P.total_params(cfg)
    rows = [
        ("attention, per layer", formula("attention"), attn, None),
        ("MLP, per layer", formula("mlp"), mlp, None),
        (f"all {L} layers (attention + MLP)", f"{L} × (attention + MLP)", None, L * (attn + mlp)),
        ("embeddings + lm_head", formula("embeddings"), None, groups["embeddings"]["count"]),
        ("norms", f"{L}·{cfg.norms_per_block}·norm + final", None, groups["norms"]["count"]),
        ("**total**", "", None, total),
    ]
    return [
        {
            "group": name,
            "formula": text,
            "per layer": fmt.count(per) if per is not None else "",
            "count": fmt.count(n) if n is not None else "",
            "share": fmt.pct(n / total) if n is not None else "",
        }
        for name, text, per, n in rows
    ]


def _flop_rows(preset: Preset) -> list[dict]:
    cfg, T = preset.config, preset.context
    full, causal = F.flop_breakdown(cfg, T, "full"), F.flop_breakdown(cfg, T, "causal")
    causal_by_key = {c.key: c for c in causal.components}
    rows = [
        {
            "component": c.key,
            "formula (forward, per token)": c.formula,
            "full": fmt.exact(c.forward_per_token),
            "causal": fmt.exact(causal_by_key[c.key].forward_per_token),
        }
        for c in full.components
    ]

    def total(name, formula, pick):
        rows.append(
            {
                "component": name,
                "formula (forward, per token)": formula,
                "full": fmt.exact(full.per_token(pick(full))),
                "causal": fmt.exact(causal.per_token(pick(causal))),
            }
        )

    total("**forward**", "sum of the above", lambda b: b.forward)
    total("backward", "2 × forward", lambda b: b.backward)
    total("**training**", "forward + backward", lambda b: b.model_training)
    six_n = F.kaplan_6n_per_token(P.active_params(cfg))
    rows.append(
        {
            "component": "6N (approximation)",
            "formula (forward, per token)": "6 × active parameters",
            "full": fmt.count(six_n),
            "causal": fmt.count(six_n),
        }
    )
    rows.append(
        {
            "component": "6N vs training",
            "formula (forward, per token)": "6N / exact − 1",
            "full": fmt.diff(six_n, model_flops_per_token(full)),
            "causal": fmt.diff(six_n, model_flops_per_token(causal)),
        }
    )
    return rows


def _decode_note(preset: Preset) -> str:
    ctx = preset.context
    return (
        f"Decoding one token with {fmt.count(ctx)} positions in the KV cache: "
        f"{fmt.count(F.decode_flops_per_token(preset.config, ctx))} FLOPs (forward)."
    )


def _context_rows(preset: Preset) -> list[dict]:
    cfg = preset.config
    columns = [(T, att) for T in sheet_contexts(preset) for att in ATTENTION_CONVENTIONS]
    breakdowns = {(T, att): F.flop_breakdown(cfg, T, att) for T, att in columns}
    label = {col: f"T={fmt.count(col[0])} {col[1]}" for col in columns}
    keys = [c.key for c in breakdowns[columns[0]].components]
    rows = []
    for key in keys:
        row = {"component": key}
        for col, b in breakdowns.items():
            row[label[col]] = fmt.si(next(c.forward_per_token for c in b.components if c.key == key))
        rows.append(row)
    for name, pick in (("**forward**", lambda b: b.forward), ("training", lambda b: b.model_training)):
        rows.append({"component": name, **{label[c]: fmt.si(b.per_token(pick(b))) for c, b in breakdowns.items()}})
    rows.append({"component": "attention share", **{label[c]: fmt.pct(attention_share(cfg, *c)) for c in columns}})
    return rows


def _training(preset: Preset) -> str:
    if not preset.training_tokens:
        return (
            f"No published training token count. `sizing estimate --preset {preset.name} --tokens 2T --gpu h100` "
            "computes it for any token count."
        )
    rows = []
    first = None
    for key in SHEET_GPUS:
        gpu = get_gpu(key)
        t = estimate(preset, gpu=key, mfu=DEFAULT_MFU, num_gpus=CLUSTER_GPUS, memory=False).training
        first = first or t
        rows.append(
            {
                "GPU": gpu.name,
                f"{t.dtype} dense peak TFLOP/s": f"{t.peak_flops_per_second / 1e12:g}",
                "GPU-hours (exact)": fmt.hours(t.gpu_hours),
                "GPU-hours (6N)": fmt.hours(t.gpu_hours_6n),
                f"days on {fmt.count(CLUSTER_GPUS)} GPUs": f"{t.wall_clock_days:,.1f}",
            }
        )
    intro = (
        f"{fmt.si(preset.training_tokens)} tokens at T = {fmt.count(preset.context)}, full attention: "
        f"{fmt.flops_total(first.flops)} FLOPs exact (forward + backward), "
        f"{fmt.flops_total(first.flops_6n)} by 6N. "
        f"GPU-hours = FLOPs / (dense peak × MFU {DEFAULT_MFU:g}); no recomputation."
    )
    return fmt.document(intro, fmt.markdown_table(rows)).rstrip("\n")


def _memory(preset: Preset) -> str:
    data = report_memory.summary(preset.config, preset.context)
    parts = [
        f"At T = {fmt.count(preset.context)}, as `sizing estimate --preset {preset.name}` shows it (bf16; "
        f"fit checks against {report_memory.MEMORY_GPU}). `sizing memory` has the details and other settings."
    ]
    for title, section, keys in (
        ("Training", "training", report_memory.TRAINING_KEYS),
        ("Inference", "inference", report_memory.INFERENCE_KEYS),
    ):
        rows = [{"quantity": k, "value": _memory_value(k, data[section][k])} for k in keys]
        parts += [f"### {title}", fmt.markdown_table(rows)]
    return fmt.document(*parts).rstrip("\n")


def _memory_value(key: str, value) -> str:
    if key.endswith("bytes") and isinstance(value, (int, float)) and not isinstance(value, bool):
        return fmt.gib(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return fmt.count(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return "—" if value is None else str(value)
