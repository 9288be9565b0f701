"""A hybrid's layers as the parallel questions read them: the kinds of layer a range of layers holds,
and one layer's parameter tensors with how tensor parallelism splits each (sizing.parallel.shapes'
Tensor: col, row, rep), for the state mixers beside the attention, MLP and MoE tensors of
shapes.py.

A hybrid layer's kind is (mixer, mlp): mixer "attention", "mamba" (its state mixer), "both" (Falcon-H1:
the two side by side) or "none"; mlp "dense", "moe" or "none". A stack's kind stays a bool (is MoE).

Tensor parallelism of the state mixers, as Megatron-Core (megatron/core/ssm/mamba_mixer.py,
gated_delta_net/) and vLLM (model_executor/layers/mamba/mamba_mixer.py, mamba_mixer2.py, kda.py) shard
them: every projection into the mixer is column-parallel over its heads (Mamba-2's in_proj packs
z, x, B, C, dt; DeltaNet's in_proj_qkvz and in_proj_ba; KDA's q, k, v, b and the gates' second
projections), the depthwise conv and the per-head dt_bias, A_log and D are split with their channels,
and the output projection is row-parallel. Mamba-2's gated RMSNorm gain is split with d_inner (its
statistics are per group); B and C are split by groups when tp divides n_groups (Megatron-Core asserts
it), else every rank keeps the whole group (vLLM's extra_groups_for_head_shards, n_groups 1).
KDA's low-rank first projections f_a and g_a (d -> D) are replicated (vLLM's ReplicatedLinear), as are
DeltaNet's and KDA's output-norm gains (one d_v / D gain shared by the heads). Mamba-1 (Jamba, vLLM's
MambaMixer): in_proj, conv, dt_proj, A_log and D split over d_inner, x_proj row-parallel, Jamba's
dt / B / C norms replicated.

Element counts add up to sizing.hybrid.param_components exactly (tests/test_parallel_hybrid.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from sizing.hybrid import GatedDeltaNet, KimiDeltaAttention, Mamba2Mixer, hybrid_of
from sizing.inputs import ModelConfig
from sizing.parallel.tensors import Tensor, _linear, _mlp, _norm, attention_tensors, moe_tensors
from sizing.validate import SizingError

STATE_MIXERS = ("mamba", "both")  # layer mixers that hold the state mixer
ATTENTION_MIXERS = ("attention", "both")


def is_moe_kind(kind) -> bool:
    """A block kind (a stack's bool, a hybrid layer's (mixer, mlp)) routes to experts."""
    return kind[1] == "moe" if isinstance(kind, tuple) else bool(kind)


def hybrid_kinds(cfg: ModelConfig, layers: range) -> list[tuple[tuple[str, str], int]]:
    """(kind, layers) among `layers`, kinds in a stable order."""
    counts = Counter(hybrid_of(cfg).layers[layers.start : layers.stop])
    return sorted(counts.items())


def sublayers(kind: tuple[str, str]) -> int:
    """Residual branches of a hybrid layer (each ends in a row-parallel projection: one TP reduction):
    the mixer (attention and a state mixer side by side are one branch, summed before the reduce as
    Falcon-H1's layer adds them) and the MLP."""
    mixer, mlp = kind
    return (mixer != "none") + (mlp != "none")


def _col(name: str, rows: int, cols: int, bias: bool, units: int = 0) -> list[Tensor]:
    out = [Tensor(f"{name}.weight", (rows, cols), "col", units=units)]
    return out + ([Tensor(f"{name}.bias", (rows,), "col", units=units)] if bias else [])


def mamba2_tensors(m: Mamba2Mixer) -> list[Tensor]:
    """in_proj as its z + x, B + C and dt rows; the conv's x and B + C channels; the per-head vectors;
    the gated norm; out_proj."""
    d, H, bc = m.d_model, m.n_heads, 2 * m.n_groups * m.d_state
    out = _col("mamba.in_proj.zx", 2 * m.d_inner, d, m.proj_bias)
    out += _col("mamba.in_proj.bc", bc, d, m.proj_bias, units=m.n_groups)
    out += _col("mamba.in_proj.dt", H, d, m.proj_bias)
    out += _col("mamba.conv1d.x", m.d_inner, m.conv_kernel, False)
    out += _col("mamba.conv1d.bc", bc, m.conv_kernel, False, units=m.n_groups)
    if m.conv_bias:
        out += [Tensor("mamba.conv1d.x.bias", (m.d_inner,), "col")]
        out += [Tensor("mamba.conv1d.bc.bias", (bc,), "col", units=m.n_groups)]
    out += [Tensor(f"mamba.{name}", (H,), "col") for name in ("dt_bias", "A_log", "D")]
    if m.gated_norm:
        out.append(Tensor("mamba.norm.weight", (m.d_inner,), "col"))
    return out + _linear("mamba.out_proj", d, m.d_inner, "row", m.proj_bias)


def mamba1_tensors(m) -> list[Tensor]:
    """Jamba's Mamba-1 mixer (vLLM's MambaMixer): split over d_inner e."""
    d, e, N, R = m.d_model, m.d_inner, m.d_state, m.dt_rank
    out = _col("mamba.in_proj", 2 * e, d, m.proj_bias)
    out += _col("mamba.conv1d", e, m.conv_kernel, m.conv_bias)
    out += _linear("mamba.x_proj", R + 2 * N, e, "row", False)
    out += _col("mamba.dt_proj", e, R, True)
    out += [Tensor("mamba.A_log", (e, N), "col"), Tensor("mamba.D", (e,), "col")]
    out += _linear("mamba.out_proj", d, e, "row", m.proj_bias)
    if m.bc_dt_norms:
        out.append(Tensor("mamba.norms.weight", (R + 2 * N,), "rep"))
    return out


def deltanet_tensors(m: GatedDeltaNet) -> list[Tensor]:
    d, hv = m.d_model, m.n_v_heads
    out = _col("deltanet.in_proj_qkvz", 2 * m.key_dim + 2 * m.value_dim, d, False)
    out += _col("deltanet.in_proj_ba", 2 * hv, d, False)
    out += _col("deltanet.conv1d", m.conv_channels, m.conv_kernel, False)
    out += [Tensor("deltanet.dt_bias", (hv,), "col"), Tensor("deltanet.A_log", (hv,), "col")]
    out.append(Tensor("deltanet.norm.weight", (m.d_v,), "rep"))
    return out + _linear("deltanet.out_proj", d, m.value_dim, "row", False)


def kda_tensors(m: KimiDeltaAttention) -> list[Tensor]:
    d, hd, D, H = m.d_model, m.width, m.head_dim, m.n_heads
    out = [t for name in ("q", "k", "v") for t in _col(f"kda.{name}_proj", hd, d, False)]
    out += _col("kda.conv1d", m.conv_channels, m.conv_kernel, False)
    out += _linear("kda.f_a_proj", D, d, "rep", False) + _col("kda.f_b_proj", hd, D, False)
    out += [Tensor("kda.dt_bias", (hd,), "col"), Tensor("kda.A_log", (H,), "col")]
    out += _col("kda.b_proj", H, d, False)
    out += _linear("kda.g_a_proj", D, d, "rep", False) + _col("kda.g_b_proj", hd, D, False)
    out.append(Tensor("kda.o_norm.weight", (D,), "rep"))
    return out + _linear("kda.o_proj", d, hd, "row", False)


MIXER_TENSORS = {"mamba2": mamba2_tensors, "mamba1": mamba1_tensors, "deltanet": deltanet_tensors}
MIXER_TENSORS["kda"] = kda_tensors


def hybrid_attention_tensors(cfg: ModelConfig) -> list[Tensor]:
    """An attention layer's tensors; Qwen3-Next's q_proj also emits the output gate (twice the rows)."""
    out = attention_tensors(cfg)
    if hybrid_of(cfg).gated_attention:
        out = [replace(t, shape=(2 * t.shape[0], *t.shape[1:])) if t.name.startswith("attn.q.") else t for t in out]
    return out


def hybrid_block_tensors(cfg: ModelConfig, kind: tuple[str, str]) -> list[Tensor]:
    """One hybrid layer: the mixer's norm and mixer(s), then the MLP's norm (two norms per layer with
    an MLP unless the family has one: Nemotron-H) and its MLP or MoE."""
    m, (mixer, mlp) = hybrid_of(cfg), kind
    out: list[Tensor] = []
    if mixer != "none":
        out += _norm(cfg, "attn_norm")
    if mixer in ATTENTION_MIXERS:
        out += hybrid_attention_tensors(cfg)
    if mixer in STATE_MIXERS:
        out += MIXER_TENSORS[m.mixer.kind](m.mixer)
    if mlp != "none" and (mixer == "none" or m.layer_norms == 2):
        out += _norm(cfg, "mlp_norm")
    if mlp == "dense":
        out += _mlp(cfg, "mlp", cfg.d_ff, expert=False)
    elif mlp == "moe":
        out += moe_tensors(cfg)
    return out


def _mixer_units(mixer) -> dict[str, int]:
    """What tensor parallelism splits a state mixer by: each must be a multiple of tp."""
    if isinstance(mixer, Mamba2Mixer):
        return {"mamba n_heads": mixer.n_heads}
    if isinstance(mixer, GatedDeltaNet):
        return {"linear_num_key_heads": mixer.n_k_heads, "linear_num_value_heads": mixer.n_v_heads}
    if isinstance(mixer, KimiDeltaAttention):
        return {"linear num_heads": mixer.n_heads}
    return {"mamba d_inner": mixer.d_inner}


def check_hybrid_split(cfg: ModelConfig, tp: int, cp: int) -> None:
    """A hybrid under tp x cp: its attention heads (where it has attention layers) and its state
    mixer's heads split over tp (Mamba-2's groups too, unless one group, which every rank keeps); no
    context parallelism (the state mixers' would move heads by all-to-all: Megatron-Core's
    MambaContextParallel, not modelled)."""
    m = hybrid_of(cfg)
    if cp > 1:
        raise SizingError(
            f"cp ({cp}) with a hybrid: context parallelism of the state-space layers is not modelled; use cp 1"
        )
    units = _mixer_units(m.mixer) if m.mixer is not None and m.count(mixer="mamba") else {}
    if m.count(mixer="attention"):
        units |= {"n_heads": cfg.n_heads, "the kv heads": cfg.kv_heads}
    if isinstance(m.mixer, Mamba2Mixer) and m.mixer.n_groups > 1 and m.count(mixer="mamba"):
        units["mamba n_groups"] = m.mixer.n_groups
    for name, n in units.items():
        if n % tp:
            valid = ", ".join(str(t) for t in range(1, n + 1) if n % t == 0)
            raise SizingError(f"tp ({tp}) must divide {name} ({n}); valid tp: {valid}")
