"""What sizing.parallel cannot yet model for a config and layout, stated in every output (a
note line, `not_modelled` in JSON) rather than silently counted as something else."""

from __future__ import annotations

from sizing.inputs import ModelConfig
from sizing.memory import activations_not_modelled
from sizing.parallel.layout import ParallelLayout

# sizing.memory's single-GPU terms count a dense/MoE mix as all-MoE; per pipeline stage each
# block is counted at its own kind (memory.activation_terms_on_stage), so that gap is closed here.
_MODELLED_PER_STAGE = "dense/MoE layer mix (counted as all-MoE)"


def not_modelled(cfg: ModelConfig, layout: ParallelLayout) -> tuple[str, ...]:
    """One sentence per part of `cfg` whose bytes or collectives under `layout` are approximate."""
    parts = [p for p in activations_not_modelled(cfg) if p != _MODELLED_PER_STAGE]
    out = [f"activations of {', '.join(parts)}: not in the saved-tensor terms"] if parts else []
    if cfg.is_mla and layout.tp > 1:
        out.append(
            "latent attention under tensor parallelism: the all-reduce of the replicated q_a, kv_a and their "
            "norms' gradients across tp is not counted (activation gradients: one b·T·d all-reduce per "
            "column-parallel input, as for q, k, v)"
        )
    return tuple(out)
