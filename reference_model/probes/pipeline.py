"""Pipeline stages of the reference model against sizing.parallel.memory, stage by stage.

torch's pipelining API needs real point-to-point sends; instead each stage is built directly
from the reference model (no process group): the probe counts the parameters a stage holds
(its blocks; the embedding on the first; final norm and lm_head on the last, where a tied
lm_head is a copy of the embedding, as Megatron-LM keeps it) and the activations it saves for
the micro-batches 1F1B holds in flight at its peak (p - s on stage s).
"""

from __future__ import annotations

import dataclasses

import torch

from reference_model.model import small_config
from reference_model.probes.parallel import BATCH, SEQ_LEN, WORK, ProbeLayout, ProbeResult
from sizing.inputs import get_preset
from sizing.parallel import ParallelLayout, in_flight, stage_memory

PIPELINE_PROBES: tuple[ProbeLayout, ...] = (
    ProbeLayout("PP 4, 1F1B, m 8", "llama2-70b", ParallelLayout(pp=4, micro_batches=8, vocab_parallel=False), 4),
    ProbeLayout("PP 2, 1F1B, m 4, tied", "gpt2", ParallelLayout(pp=2, micro_batches=4, vocab_parallel=False)),
)


def _stage_forward(model, stage: int, pp: int, x, step, targets):
    """Rank `stage`'s part of GPT.forward: embedding on the first, its blocks, head and loss on the last."""
    import torch.nn.functional as F

    cfg = model.config
    per_stage = cfg.n_layers // pp
    if stage == 0:
        idx = x
        x = model.tok_emb(idx)
        if cfg.position == "learned":
            x = x + model.pos_emb(step.positions)
        if cfg.embedding_norm:
            x = model.emb_norm(x)
    for block in model.blocks[stage * per_stage : (stage + 1) * per_stage]:
        x = block(x, step)
    if stage < pp - 1:
        return x
    x = model.norm_f(x) if cfg.final_norm else x
    logits = model.lm_head(x)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1))


def _stage_parameter_bytes(model, stage: int, pp: int) -> int:
    """Parameters a stage holds: its blocks; the embedding on the first; final norm and lm_head on
    the last (a tied lm_head is a copy of the embedding there, as Megatron-LM keeps it)."""
    cfg = model.config
    per_stage = cfg.n_layers // pp
    modules = list(model.blocks[stage * per_stage : (stage + 1) * per_stage])
    if stage == 0:
        modules += [getattr(model, n) for n in ("tok_emb", "pos_emb", "emb_norm") if hasattr(model, n)]
    tensors = [p for m in modules for p in m.parameters()]
    if stage == pp - 1:
        tensors += list(model.norm_f.parameters()) if cfg.final_norm else []
        tensors += list(model.lm_head.parameters())
        if cfg.tied_embeddings:
            tensors.append(model.tok_emb.weight)
    return sum(t.numel() * t.element_size() for t in tensors)


def probe_pipeline(probe: ProbeLayout) -> ProbeResult:
    """Each stage built from the reference model: its parameter bytes, and the activations it
    holds at 1F1B's peak (in_flight micro-batches forwarded, none yet backward) against
    sizing.parallel.memory.stage_memory (plus the reference sdpa path's named extras)."""
    from reference_model.model import build
    from reference_model.probes.memory_extras import reference_sdpa_extras

    cfg = dataclasses.replace(small_config(get_preset(probe.preset).config, SEQ_LEN), n_layers=probe.layers)
    layout = replace_layout(probe.layout, micro_batch=BATCH)
    model = build(cfg, "cpu", attn_impl="sdpa", seed=0)
    extra = sum(r.per_layer for r in reference_sdpa_extras(cfg, SEQ_LEN, BATCH, 4)) * (cfg.n_layers // layout.pp)
    rows = []
    for stage in range(layout.pp):
        terms = stage_memory(cfg, layout, WORK, stage)
        held = in_flight(layout, stage)
        rows.append(
            [f"stage {stage} weights bytes", terms["weights_bytes"], _stage_parameter_bytes(model, stage, layout.pp)]
        )
        expected = sum(terms[k] for k in terms if k.startswith("activations_")) + extra * held
        measured = _stage_saved_bytes(model, stage, layout, held)
        rows.append([f"stage {stage} activations bytes ({held} micro-batches in flight)", expected, measured])
    for row in rows:
        row.append(row[2] - row[1])
    return ProbeResult(probe.name, rows)


def _stage_saved_bytes(model, stage: int, layout: ParallelLayout, held: int) -> int:
    """Saved-for-backward bytes of `held` forwards of one stage (parameters left out)."""
    cfg = model.config
    generator = torch.Generator().manual_seed(stage)
    step = model.make_step(SEQ_LEN)  # one RoPE table for every micro-batch (cached, as Megatron does)
    inputs = []
    for _ in range(held):
        idx = torch.randint(0, cfg.vocab_size, (BATCH, SEQ_LEN), generator=generator)
        x = idx if stage == 0 else torch.randn(BATCH, SEQ_LEN, cfg.d_model, requires_grad=True)
        own = dataclasses.replace(step, positions=torch.arange(SEQ_LEN))  # position ids: one per forward
        inputs.append((x, idx, own))

    def run():
        return [_stage_forward(model, stage, layout.pp, x, own, targets) for x, targets, own in inputs]

    return _saved_bytes(model, run)


def _saved_bytes(model, run) -> int:
    """Bytes of the distinct storages autograd saves while `run()` runs (parameters left out)."""
    exclude = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict = {}

    def pack(t):
        ptr = t.untyped_storage().data_ptr()
        if ptr not in exclude:
            seen[ptr] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        outputs = run()
    del outputs
    return sum(seen.values())


def replace_layout(layout: ParallelLayout, **changes) -> ParallelLayout:
    from dataclasses import replace

    return replace(layout, **changes)
