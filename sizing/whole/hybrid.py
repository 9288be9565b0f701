"""A hybrid (sizing.hybrid.HybridModel) as a WholeModel: its parameters by component, FLOPs per token,
KV cache of the attention layers and the recurrent state of the others, for `sizing estimate` and
`sizing memory`. Every number comes from sizing.hybrid's formulas (docs/hybrid.md)."""

from __future__ import annotations

from sizing.hybrid import (
    active_params,
    decode_flops_per_token,
    hybrid_activations_bytes,
    kv_cache_bytes,
    param_components,
    prefill_flop_components,
    state_bytes,
)
from sizing.whole.model import WholeModel

HYBRID_LABEL = "hybrid: attention layers beside state-space / linear-attention layers (sizing.hybrid, docs/hybrid.md)"
HYBRID_EXACT = {
    "params": "exact: per layer from the config's own layer pattern, equal to transformers' count",
    "flops": "formula: projections 2·params per token, the chunked scans' contractions, attention QK^T and AV",
    "kv_cache": "formula: the attention layers only, B·C·L_attn·2·h_kv·d_h (bf16)",
    "state": "formula: conv state (bf16) + SSM / DeltaNet state (fp32), as transformers' cache holds them",
    "activations": "formula, per layer kind: attention / MLP / MoE as sizing.memory (flash, no recompute), the "
    "state mixers' tensors as their training kernels save them (mamba_ssm, fla: sizing.hybrid.activations)",
}


def hybrid_whole_model(m, seq_len: int, attention: str = "full", seq_len_source: str = "given") -> WholeModel:
    """`m` (a HybridModel) at one sequence length; the KV cache and state are one sequence's."""
    params = param_components(m)
    state = state_bytes(m, 1)
    return WholeModel(
        name=m.name,
        kind="hybrid",
        label=HYBRID_LABEL,
        params=params,
        active_params=active_params(m),
        embedding_params=params.get("tok_emb", 0),
        seq_len=seq_len,
        attention=attention,
        forward_flops=prefill_flop_components(m, seq_len, attention),
        decode_flops_per_token=decode_flops_per_token(m, seq_len),
        kv_cache_bytes=kv_cache_bytes(m, seq_len, 1),
        state_bytes=state["conv"] + state["ssm"],
        activation_bytes=hybrid_activations_bytes(m, seq_len),
        exact=HYBRID_EXACT,
        seq_len_source=seq_len_source,
        details={"layer_pattern": m.pattern, "attention_layers": m.count(mixer="attention")},
    )
