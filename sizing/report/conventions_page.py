"""`reports/conventions.md`: our counting conventions beside the published ones (6N, PaLM's
MFU formula, Megatron's, Chinchilla's Appendix F, Kaplan's Table 1), with a worked example
computed from each formula as its paper writes it. The formulas live in sizing.formulas.conventions;
this module only renders them.
"""

from __future__ import annotations

from sizing.formulas import (
    COMPONENTS,
    CONVENTION_TABLE,
    CONVENTIONS,
    KAPLAN_FLOPS_PER_PARAM,
    megatron_convention,
    ours_convention,
    palm_convention,
)
from sizing.formulas import params as P
from sizing.inputs import get_preset
from sizing.report import cells as fmt

EXAMPLES = (("gpt3-175b", 2048), ("llama2-7b", 4096))


def _our_conventions_table() -> str:
    names = {
        "flop": "FLOP",
        "counted_ops": "counted ops",
        "recompute_full": "recompute full",
        "kaplan_6n": "6N",
        "non_embedding": "non-embedding",
    }
    rows = [{"quantity": names.get(key, key), "convention": text} for key, text in CONVENTIONS.items()]
    rows.insert(
        2,
        {
            "quantity": "attention",
            "convention": "full (default): T keys per query, T² pairs per "
            "sequence; causal: T(T+1)/2 pairs (min(i, W) keys with a sliding window W); every output names it",
        },
    )
    rows.append(
        {
            "quantity": "GQA / MQA",
            "convention": "query heads set the score FLOPs; kv heads set the K/V projections and the KV cache",
        }
    )
    rows.append(
        {
            "quantity": "MoE",
            "convention": "params: all experts (total) and top-k (active); FLOPs: top-k experts + router",
        }
    )
    rows.append({"quantity": "units", "convention": "SI prefixes for counts and FLOPs (B = 1e9), GiB (2³⁰) for bytes"})
    return fmt.markdown_table(rows)


_DIFFERENCES = [
    {
        "what": "block linear layers",
        "ours": "2 per multiply-add, exact shapes (GQA, gated MLP, MoE top-k)",
        "6N / PaLM": "6 × their weights",
        "Megatron": "72·l·h²: MHA and a 4h two-matrix MLP assumed",
        "Chinchilla App. F": "MHA projections, two-matrix dense block",
        "Kaplan Table 1": "6N, N = 2·d·L·(2·d_attn + d_ff)",
    },
    {
        "what": "attention QKᵀ + AV",
        "ours": "full: 4·L·h·d_h·T forward; causal: about half",
        "6N / PaLM": "6N: none; PaLM: 12·L·H·Q·T (= ours, full)",
        "Megatron": "12·l·h·s (= ours, full)",
        "Chinchilla App. F": "4·T·(key_size·heads) per layer forward (full)",
        "Kaplan Table 1": "2·L·T·d_attn forward: half of full, about ours causal",
    },
    {
        "what": "softmax",
        "ours": "0",
        "6N / PaLM": "0",
        "Megatron": "0",
        "Chinchilla App. F": "3·H·T per layer",
        "Kaplan Table 1": "0",
    },
    {
        "what": "lm_head",
        "ours": "2·d·V forward",
        "6N / PaLM": "through the head weight (or the tied table)",
        "Megatron": "6·h·V training (never recomputed)",
        "Chinchilla App. F": "2·d·V forward",
        "Kaplan Table 1": "left out of C_forward (N is non-embedding)",
    },
    {
        "what": "embedding lookup",
        "ours": "0 (a lookup)",
        "6N / PaLM": "6·V·d when untied (counted as a matmul)",
        "Megatron": "0",
        "Chinchilla App. F": "2·V·d forward (counted as a matmul)",
        "Kaplan Table 1": "4·d, left out",
    },
    {
        "what": "biases, norms, position table",
        "ours": "0",
        "6N / PaLM": "6 × their parameters",
        "Megatron": "0",
        "Chinchilla App. F": "0",
        "Kaplan Table 1": "0",
    },
    {
        "what": "backward / recompute",
        "ours": "2 × forward; recompute reported apart (hardware FLOPs)",
        "6N / PaLM": "4N (2 × forward)",
        "Megatron": "2 × forward; the 96 form adds one forward (full recompute)",
        "Chinchilla App. F": "2 × forward",
        "Kaplan Table 1": "2 × forward",
    },
]


def _component_table(name: str, T: int) -> str:
    cfg = get_preset(name).config
    results = {label: fn(cfg, T) for label, fn, _ in CONVENTION_TABLE}
    rows = []
    for key, text in COMPONENTS.items():
        rows.append({"component": text, **{label: fmt.exact(r[key]) for label, r in results.items()}})
    rows.append({"component": "**total**", **{label: fmt.exact(sum(r.values())) for label, r in results.items()}})
    base = sum(results["ours, full"].values())
    rows.append(
        {"component": "vs ours, full", **{label: fmt.diff(sum(r.values()), base) for label, r in results.items()}}
    )
    return fmt.markdown_table(rows)


def _example_remarks(name: str, T: int) -> str:
    cfg = get_preset(name).config
    base = sum(ours_convention(cfg, T).values())
    mega, palm_total = sum(megatron_convention(cfg, T).values()), sum(palm_convention(cfg, T).values())
    mega_text = "equals ours (full) exactly" if mega == base else f"is {fmt.diff(mega, base)} from ours (full)"
    extra = palm_total - base
    not_weights = extra // KAPLAN_FLOPS_PER_PARAM  # 6N counts 6 per parameter
    return (
        f"Megatron's model-FLOPs form {mega_text} here; PaLM's exceeds ours by {fmt.count(extra)} FLOPs per "
        f"token = 6 × {fmt.count(not_weights)}, the parameters that are not matmul weights (position table, "
        "biases, norms)."
    )


def _totals_table() -> str:
    rows = []
    for label, fn, source in CONVENTION_TABLE:
        row = {"convention": label, "source": source}
        for name, T in EXAMPLES:
            cfg = get_preset(name).config
            total, base = sum(fn(cfg, T).values()), sum(ours_convention(cfg, T).values())
            row[f"{name}, T={fmt.count(T)}"] = fmt.exact(total)
            row[f"{name} vs ours"] = fmt.diff(total, base)
        rows.append(row)
    return fmt.markdown_table(rows)


def render_conventions() -> str:
    name, T = EXAMPLES[0]
    cfg = get_preset(name).config
    return fmt.document(
        fmt.GENERATED_NOTE,
        "# Counting conventions",
        "## Ours",
        _our_conventions_table(),
        "## How the published formulas count",
        "- **6N** (Kaplan et al. 2020; GPT-3 Table D.1): 6 × parameters per training token, every parameter "
        "counted as a multiply-add (lookup tables, biases and norms too), attention scores left out.\n"
        "- **PaLM** (Appendix B of arXiv:2204.02311): model FLOPs per token = 6N + 12·L·H·Q·T (L layers, H heads, "
        "Q head size, T sequence length), the basis of MFU. The appendix does not say whether N includes the "
        "embedding table (nanoGPT subtracts only the position table, torchtitan the token table); here N = all "
        "parameters.\n"
        "- **Megatron** (Narayanan et al. 2021, §5.1): F = 96·B·s·l·h²·(1 + s/6h + V/16lh) per iteration with "
        "full activation recomputation; without it, the model FLOPs that MFU uses (Korthikanti et al. 2022) are "
        "72·B·s·l·h²·(1 + s/6h + V/12hl). Both assume MHA and a 4h two-matrix MLP.\n"
        "- **Chinchilla** (Hoffmann et al. 2022, Appendix F): embeddings 2·V·d, per layer K/Q/V projections "
        "2·3·d·(key_size·heads), logits 2·T·(key_size·heads), softmax 3·heads·T, "
        "softmax @ V 2·T·(key_size·heads), output projection 2·(key_size·heads)·d, dense block 2·(d·f + d·f); "
        "final logits 2·d·V; backward = 2 × forward.\n"
        "- **Kaplan** (Table 1 of arXiv:2001.08361): C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn with "
        "N = 2·d_model·n_layer·(2·d_attn + d_ff), embeddings and de-embedding left out; "
        "training ≈ 3 × C_forward.",
        fmt.markdown_table(_DIFFERENCES),
        f"## Worked example: {name} at T = {fmt.count(T)}",
        f"L = {cfg.n_layers}, d = h = {fmt.count(cfg.d_model)}, H = {cfg.n_heads}, Q = d_h = {cfg.d_head}, "
        f"f = {fmt.count(cfg.d_ff)}, V = {fmt.count(cfg.padded_vocab)}, N = {fmt.count(P.total_params(cfg))} "
        f"({'tied' if cfg.tied_embeddings else 'untied'} embeddings). Training FLOPs per token (forward + backward, "
        "no recomputation unless named), each formula applied as its paper writes it, by component:",
        _component_table(name, T),
        _example_remarks(name, T),
        "## The same formulas on two models",
        "Training FLOPs per token; llama2-7b (SwiGLU, three MLP matrices) shows where the formulas' shape "
        "assumptions bite: Megatron, Chinchilla and Kaplan as written count a two-matrix MLP.",
        _totals_table(),
    )
