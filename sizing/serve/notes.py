"""The notes `sizing serve` prints beside its estimate, and the one context check of serving
(`serve`, `serve --rate`, speculate): what each answer assumes, said once."""

from __future__ import annotations

from sizing.inputs import ModelConfig
from sizing.serve.quant_bytes import format_note
from sizing.serve.result import ServeSettings
from sizing.validate import SizingError


def context_notes(
    cfg: ModelConfig, prompt: int, output: int, trained_context: int | None, served_context: int | None
) -> list[str]:
    """The one context check of serving (`serve`, `serve --rate`, speculate): the prompt within
    the served context (a SizingError naming the limit otherwise), prompt + output within what
    the positions allow (a learned table refuses), and notes past the served or pretraining
    context."""
    cfg.check_context(prompt + output, "prompt + output")
    if served_context is not None and prompt > served_context:
        raise SizingError(
            f"prompt ({prompt}) exceeds the model's served context ({served_context}); use a prompt of at most "
            f"{served_context} tokens"
        )
    notes = []
    limit = served_context if served_context is not None else trained_context
    if limit is not None and prompt + output > limit:
        notes.append(
            f"prompt + output ({prompt + output}) runs past the model's context ({limit}): "
            "the cost is computed, the quality there is not the published one"
        )
    if trained_context is not None and limit != trained_context and prompt + output > trained_context:
        notes.append(
            f"past the pretraining context ({trained_context}), within the served one ({served_context}: "
            "long-context extension)"
        )
    return notes


def overhead_text(s: ServeSettings) -> str:
    """The engine's overheads as the notes say them."""
    o = s.overhead
    text = f"{o.prefill * 1e6:g} us per layer of a prefill forward, {o.step * 1e6:g} us per layer of a decode step"
    return text + (f", {o.per_sequence * 1e6:g} us per sequence in a forward" if o.per_sequence else "")


def serve_notes(
    cfg: ModelConfig, s: ServeSettings, trained_context: int | None, served_context: int | None
) -> list[str]:
    """What a serving estimate assumes, said beside it."""
    notes = [
        f"prefill FLOPs counted {s.attention}"
        + (" (serving kernels skip the masked tiles)" if s.attention == "causal" else " (T keys per query)"),
        "static batch: prompts prefilled together, then decoded in lockstep; each TP all-reduce pays NCCL's "
        f"ring latency; the engine's overhead (kernel launches, scheduling, sampling): {overhead_text(s)}",
    ]
    if (quant := format_note(s.weight_dtype, s.activation_dtype)) is not None:
        notes.append(quant)
    if cfg.is_mla:
        notes.append(
            f"MLA decoded {s.mla}: "
            + (
                "attention over the cached latent, W_UK and W_UV absorbed (FLOPs and bytes of that form); "
                "the latent is whole on every TP rank"
                if s.mla == "absorbed"
                else "per-head K and V decompressed and cached (FLOPs and bytes of that form)"
            )
        )
    if not cfg.is_mla and s.tp > cfg.kv_heads:
        notes.append(
            f"tp {s.tp} > {cfg.kv_heads} KV heads: each head replicated on {s.tp // cfg.kv_heads} ranks, one per rank"
        )
    if s.prefill_chunk is not None and s.prefill_chunk < s.prompt:
        notes.append("chunked prefill: each later chunk re-reads the KV cache of the prompt's earlier chunks")
    if cfg.is_moe:
        notes.append(
            f"MoE: uniform independent routing assumed, E·(1 - (1 - k/E)^b) distinct experts of {cfg.n_experts} "
            "read per layer per step"
        )
    notes += context_notes(cfg, s.prompt, s.output, trained_context, served_context)
    return notes
