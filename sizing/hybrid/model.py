"""A hybrid model: one token mixer per layer (attention, or a state-space / linear-attention
mixer) and one MLP per layer (dense, MoE, or none), read from the HF config's own pattern
fields (sizing.hybrid.hf).

The attention, MLP, MoE, embedding and norm parts reuse sizing.formulas.params through `base`, a
ModelConfig holding the model's attention and MLP sizes (its n_layers is the hybrid's depth;
its own layer pattern is unused). Per layer:

    mixer norm + mixer + (MLP norm + MLP, when the layer has one)

A layer whose mixer is "none" is an MLP-only block (Nemotron-H's "-" layers): one norm + MLP.
Components are summed over the layers that hold them; the total is their sum.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from sizing.formulas import params as P
from sizing.hybrid.mixers import MAC, Mixer
from sizing.inputs import ModelConfig
from sizing.validate import SizingError, require_choice, require_int
from sizing.vocabulary import ATTENTION_CONVENTIONS

# "mamba" covers every state mixer (Mamba-1/2, DeltaNet); "both": attention and a state mixer side by
# side in one layer (Falcon-H1), counted among the attention layers and among the state layers.
MIXER_KINDS = ("attention", "mamba", "both", "none")
MLP_LAYER_KINDS = ("dense", "moe", "none")


@dataclass(frozen=True)
class HybridModel:
    name: str
    base: ModelConfig
    mixer: Mixer | None  # the state mixer of the non-attention layers
    layers: tuple[tuple[str, str], ...]  # (mixer kind, MLP kind) per layer
    gated_attention: bool = False  # Qwen3-Next: q_proj also emits a per-channel output gate
    layer_norms: int = 2  # norms per layer with an MLP (mixer norm + MLP norm); MLP-less: 1

    def __post_init__(self) -> None:
        if len(self.layers) != self.base.n_layers:
            raise SizingError(f"layers ({len(self.layers)}) must list n_layers ({self.base.n_layers}) entries")
        for i, (mix, mlp) in enumerate(self.layers):
            if mix not in MIXER_KINDS or mlp not in MLP_LAYER_KINDS or (mix, mlp) == ("none", "none"):
                raise SizingError(f"layer {i} ({mix!r}, {mlp!r}) is not a mixer kind {MIXER_KINDS} + MLP kind")
        if self.mixer is None and any(mix in ("mamba", "both") for mix, _ in self.layers):
            raise SizingError("a layer of kind 'mamba' needs the mixer's sizes")

    def count(self, mixer: str | None = None, mlp: str | None = None) -> int:
        """Layers holding `mixer` (a "both" layer holds attention and a state mixer) and `mlp`."""
        return sum(
            (mixer is None or m == mixer or (m == "both" and mixer in ("attention", "mamba")))
            and (mlp is None or f == mlp)
            for m, f in self.layers
        )

    @property
    def pattern(self) -> str:
        """One letter per layer: A attention, M state mixer, B both, - none; then d dense, e MoE, . none."""
        mix = {"attention": "A", "mamba": "M", "both": "B", "none": "-"}
        ff = {"dense": "d", "moe": "e", "none": "."}
        return " ".join(mix[m] + ff[f] for m, f in self.layers)


def attention_params(m: HybridModel) -> dict[str, int]:
    """One attention layer, per tensor group: the attention components of sizing.formulas.params
    for the base config (q/k/v/o, or MLA's projections and norms, q/k norms); Qwen3-Next's q_proj is
    doubled (it also emits the output gate)."""
    cfg = m.base
    out = {t.key: t.params(cfg) for t in P.PARAM_TERMS if t.key.startswith("attn.") and t.present(cfg)}
    if m.gated_attention:
        out["attn.q"] *= 2
    return {k: v for k, v in out.items() if v}


def attention_weight_params(m: HybridModel) -> int:
    """What one token multiplies in an attention layer: the projections, not the norms or sinks."""
    return sum(v for k, v in attention_params(m).items() if not k.endswith("_norm") and k != "attn.sinks")


def moe_params(m: HybridModel) -> dict[str, int]:
    cfg = m.base
    out = {"moe.router": P.router_params(cfg), "moe.experts": cfg.n_experts * P.expert_params(cfg)}
    if cfg.n_shared_experts:
        out["moe.shared"] = P.shared_expert_params(cfg)
    if cfg.shared_expert_gate:
        out["moe.shared_gate"] = P.shared_expert_gate_params(cfg)
    return out


def param_components(m: HybridModel) -> dict[str, int]:
    """{component: parameters over the whole model}: per-layer parts times their layer counts."""
    cfg = m.base
    out: Counter[str] = Counter()
    out["tok_emb"] = P.token_embedding_params(cfg)
    n_attn, n_state = m.count(mixer="attention"), m.count(mixer="mamba")
    for key, size in attention_params(m).items():
        out[key] += n_attn * size
    if m.mixer is not None:
        for key, size in m.mixer.params().items():
            out[key] += n_state * size
    n_mlp = m.count() - m.count(mlp="none")
    norms = m.layer_norms * n_mlp + (m.count() - n_mlp)
    out["layer_norms"] = norms * P.norm_params(cfg)
    out["mlp"] = m.count(mlp="dense") * P.mlp_params(cfg, cfg.d_ff)
    if cfg.is_moe:
        for key, size in moe_params(m).items():
            out[key] += m.count(mlp="moe") * size
    out["norm_f"] = P.final_norm_params(cfg)
    out["lm_head"] = P.lm_head_params(cfg)
    return {k: v for k, v in out.items() if v}


def total_params(m: HybridModel) -> int:
    return sum(param_components(m).values())


def active_params(m: HybridModel) -> int:
    """Everything but the (E - k) routed experts a token skips in each MoE layer."""
    cfg = m.base
    if not cfg.is_moe:
        return total_params(m)
    return total_params(m) - m.count(mlp="moe") * (cfg.n_experts - cfg.top_k) * P.expert_params(cfg)


# ---- per-sequence inference memory: the KV cache of the attention layers, the state of the rest
def kv_elements_per_position(m: HybridModel) -> int:
    """K and V of every attention layer for one position: L_attn·2·h_kv·d_h; under MLA (Kimi Linear)
    the latent and the shared rope key, L_attn·(r_kv + d_r)."""
    return m.count(mixer="attention") * kv_elements_per_attention_layer(m)


def kv_elements_per_attention_layer(m: HybridModel) -> int:
    """One attention layer's cache for one position: 2·h_kv·d_h, or r_kv + d_r under MLA."""
    cfg = m.base
    return cfg.kv_lora_rank + cfg.qk_rope_head_dim if cfg.is_mla else 2 * cfg.kv_width


def state_elements(m: HybridModel) -> dict[str, int]:
    """{"conv": ..., "ssm": ...} over every state layer of one sequence, independent of context."""
    if m.mixer is None:
        return {"conv": 0, "ssm": 0}
    n = m.count(mixer="mamba")
    return {k: n * v for k, v in m.mixer.state_elements().items()}


def attention_pairs_flops_per_token(m: HybridModel, keys: int) -> int:
    """QK^T and AV of one query over `keys` keys, in the attention layers."""
    cfg = m.base
    return MAC * m.count(mixer="attention") * cfg.n_heads * keys * (cfg.qk_head_width + cfg.v_head_width)


def weight_flops_per_token(m: HybridModel) -> int:
    """2 x the weights a token multiplies: the attention projections (not the q/k norms), the
    dense MLPs, in MoE layers the router, k routed experts and the shared ones, and the lm_head
    (tied or not). The state mixers' FLOPs are added by prefill/decode below."""
    cfg = m.base
    attn = attention_weight_params(m)
    mlp = m.count(mlp="dense") * P.mlp_params(cfg, cfg.d_ff)
    if cfg.is_moe:
        per_layer = P.router_params(cfg) + cfg.top_k * P.expert_params(cfg)
        per_layer += P.shared_expert_params(cfg) + P.shared_expert_gate_params(cfg)
        mlp += m.count(mlp="moe") * per_layer
    lm_head = cfg.d_model * cfg.padded_vocab
    return MAC * (m.count(mixer="attention") * attn + mlp + lm_head)


def training_flops(m: HybridModel, seq_len: int) -> int:
    """Forward + backward of one sequence, 3 x the forward (backward = 2 x forward, as
    sizing.formulas.flops counts it), no recompute."""
    return 3 * prefill_flops(m, seq_len)


def prefill_flop_components(m: HybridModel, seq_len: int, attention: str = "full") -> dict[str, int]:
    """Forward FLOPs of one sequence of T tokens by part: the attention layers' projections, their
    QK^T and AV (`full`: T keys per query; `causal`: T(T+1)/2 pairs), the state mixers' chunked
    scans and projections, the dense MLPs, the MoE layers and the lm_head."""
    T = require_int("seq_len", seq_len, 1)
    require_choice("attention", attention, ATTENTION_CONVENTIONS)
    cfg, n_attn = m.base, m.count(mixer="attention")
    attn_weights = attention_weight_params(m)
    pairs = T * T if attention == "full" else T * (T + 1) // 2
    out = {
        "attention.projections": T * MAC * n_attn * attn_weights,
        "attention.scores_and_values": MAC * n_attn * cfg.n_heads * pairs * (cfg.qk_head_width + cfg.v_head_width),
        "state_mixers": T * m.count(mixer="mamba") * (m.mixer.prefill_flops_per_token() if m.mixer else 0),
        "mlp": T * MAC * m.count(mlp="dense") * P.mlp_params(cfg, cfg.d_ff),
        "lm_head": T * MAC * cfg.d_model * cfg.padded_vocab,
    }
    if cfg.is_moe:
        per_layer = P.router_params(cfg) + cfg.top_k * P.expert_params(cfg)
        per_layer += P.shared_expert_params(cfg) + P.shared_expert_gate_params(cfg)
        out["moe"] = T * MAC * m.count(mlp="moe") * per_layer
    return {k: v for k, v in out.items() if v}


def prefill_flops(m: HybridModel, seq_len: int, attention: str = "full") -> int:
    """Forward FLOPs of one sequence of T tokens, attention `full` by default (T keys per query,
    the convention sizing.formulas.flops labels `full`); the state mixers run their chunked scan."""
    return sum(prefill_flop_components(m, seq_len, attention).values())


def decode_flops_per_token(m: HybridModel, context: int) -> int:
    """One generated token with `context` positions cached (the new one included)."""
    C = require_int("context", context, 1)
    state = m.count(mixer="mamba") * (m.mixer.decode_flops_per_token() if m.mixer else 0)
    return weight_flops_per_token(m) + state + attention_pairs_flops_per_token(m, C)
