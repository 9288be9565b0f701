"""What a ModelConfig may hold: the kinds of each choice field, the bounds of each number, and
the checks that run when a config is built (each field against its type, then the fields
together). Apart from the dataclass (config.py) so that it reads as the list of its fields and
their resolved sizes; ModelConfig.__post_init__ calls check_types and check_consistency."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from sizing.validate import (
    MAX_COUNT,
    MAX_FLOAT,
    SizingError,
    require_bool,
    require_choice,
    require_fraction,
    require_int,
    require_number,
    show,
)

if TYPE_CHECKING:
    from sizing.inputs.config import ModelConfig

# MLP kind -> (number of d x d_ff matrices, activation). Gated kinds (GLU family) have an
# extra "gate" matrix: SwiGLU = down(silu(gate(x)) * up(x)), Shazeer 2020.
MLP_KINDS: dict[str, tuple[int, str]] = {
    "gelu": (2, "gelu"),
    "relu": (2, "relu"),
    "swiglu": (3, "silu"),
    "geglu": (3, "gelu"),
}
NORM_KINDS = ("layernorm", "rmsnorm")
# pre: x + f(n(x)); post: n(x + f(x)); sandwich (Gemma-2/3): x + n2(f(n1(x))), four norms per block;
# branch_post (OLMo-2): x + n(f(x)), the norm inside the residual branch, after the sublayer.
NORM_PLACEMENTS = ("pre", "post", "sandwich", "branch_post")
# Per-head RMSNorm on q and k before RoPE: "head" (Qwen3, Gemma-3: one d_h gain each for q and k,
# shared by the heads), "width" (OLMo-2: a gain over all of h·d_h and h_kv·d_h), "unweighted"
# (Llama-4's L2 norm, no parameters).
QK_NORM_KINDS = ("none", "head", "width", "unweighted")
POSITION_KINDS = ("learned", "rope", "none")

# What each field may hold, beyond its declared type (checked in ModelConfig._check_types).
_INT_MINIMUM = {  # every other int field: >= 1
    "max_positions": 0,
    "n_experts": 0,
    "top_k": 0,
    "first_dense_layers": 0,
    "n_shared_experts": 0,
    "routed_groups": 0,
    "full_attention_every": 0,
    "nope_layer_every": 0,
    "index_heads": 0,
    "mtp_modules": 0,
}
_CHOICES = {
    "mlp": tuple(MLP_KINDS),
    "norm": NORM_KINDS,
    "norm_placement": NORM_PLACEMENTS,
    "position": POSITION_KINDS,
    "qk_norm": QK_NORM_KINDS,
}


def _positive_number(name: str, value: Any) -> float:
    return require_number(name, value, 0, MAX_FLOAT, exclusive_minimum=True)


_FLOAT_CHECKS = {"rotary_fraction": require_fraction, "rope_theta": _positive_number, "norm_eps": _positive_number}
_FLOAT_MAXIMUM = {"rotary_fraction": 1.0, "rope_theta": MAX_FLOAT, "norm_eps": MAX_FLOAT}  # each check's (0, max]


class ConfigError(SizingError):
    """A config field has a value that cannot describe a real model. The message names
    the field, the value and what would be valid."""


class NotModelled(ConfigError):
    """A valid config of a part this tool's formulas do not hold (a per-layer pattern, an activation,
    a projection): refused by the formula readers with the reason, and counted by transformers on the
    meta device instead where the `hf` extra is installed (sizing.whole.native_refusal)."""


def check_types(cfg: ModelConfig, field_kinds: tuple[tuple[str, str, bool], ...]) -> None:
    """Every field against its declared type, before any formula sees it: bools are
    bools ("false" is not false), ints are ints within MAX_COUNT (not bools, not
    floats), floats are finite numbers within bounds, kinds are among their choices.

    Sweeps build tens of thousands of configs, so a first pass only tests that each value has
    exactly the expected type and range (`_fast_check`); when one does not, the full checks
    run field by field in declared order, and the first bad field raises its message (or, for
    an int subclass, passes)."""
    if _fast_check(cfg.__dict__, _field_groups(field_kinds)):
        return
    for name, kind, optional in field_kinds:
        value = getattr(cfg, name)
        if value is None and optional:
            continue
        if kind == "int":
            require_int(name, value, minimum=_INT_MINIMUM.get(name, 1))
        elif kind == "bool":
            require_bool(name, value)
        elif kind == "float":
            _FLOAT_CHECKS[name](name, value)
        else:
            require_choice(name, value, _CHOICES[name])


@functools.cache
def _field_groups(field_kinds: tuple[tuple[str, str, bool], ...]) -> tuple:
    """The fields by kind: ints (name, minimum, optional), bools (name, optional), choices
    (name, frozenset, optional), floats (name, maximum, optional: each is in (0, maximum])."""
    ints = tuple((n, _INT_MINIMUM.get(n, 1), o) for n, k, o in field_kinds if k == "int")
    bools = tuple((n, o) for n, k, o in field_kinds if k == "bool")
    choices = tuple((n, frozenset(_CHOICES[n]), o) for n, k, o in field_kinds if k == "str")
    floats = tuple((n, _FLOAT_MAXIMUM[n], o) for n, k, o in field_kinds if k == "float")
    return ints, bools, choices, floats


def _fast_check(values: dict[str, Any], groups: tuple) -> bool:
    """True when every field has exactly its type and is within its range or choices."""
    ints, bools, choices, floats = groups
    for name, low, optional in ints:
        v = values[name]
        if not (type(v) is int and low <= v <= MAX_COUNT) and not (optional and v is None):
            return False
    for name, optional in bools:
        v = values[name]
        if v is not True and v is not False and not (optional and v is None):
            return False
    for name, allowed, optional in choices:
        v = values[name]
        if not (type(v) is str and v in allowed) and not (optional and v is None):
            return False
    for name, high, optional in floats:
        v = values[name]
        if not (type(v) is float and 0 < v <= high) and not (optional and v is None):  # NaN fails too
            return False
    return True


def check_consistency(cfg: ModelConfig) -> None:
    """Fields that are each valid but describe no real model together."""
    if cfg.head_dim is None and cfg.d_model % cfg.n_heads and cfg.kv_lora_rank is None:
        raise ConfigError(
            f"d_model ({cfg.d_model}) must be divisible by n_heads ({cfg.n_heads}), or set head_dim explicitly"
        )
    if cfg.n_heads % cfg.kv_heads:
        raise ConfigError(f"n_heads ({cfg.n_heads}) must be divisible by n_kv_heads ({cfg.kv_heads})")
    if cfg.norm == "rmsnorm" and cfg.norm_bias:
        raise ConfigError("norm_bias (True) must be False when norm is 'rmsnorm' (RMSNorm has no bias)")
    if cfg.position == "learned" and cfg.max_positions <= 0:
        raise ConfigError(
            f"max_positions ({cfg.max_positions}) must be a positive row count when position is 'learned'"
        )
    if cfg.position == "rope" and (cfg.rotary_dim == 0 or cfg.rotary_dim % 2):
        raise ConfigError(
            f"rotary_fraction ({cfg.rotary_fraction}) x head_dim ({cfg.d_head}) must give a "
            f"positive even number of rotated dims, got {cfg.rotary_dim}"
        )
    if cfg.parallel_block and cfg.norm_placement != "pre":
        raise ConfigError("parallel_block (True) needs norm_placement 'pre' (no real model is post-LN and parallel)")
    if cfg.shared_block_norm and not cfg.parallel_block:
        raise ConfigError("shared_block_norm (True) needs parallel_block True")
    if cfg.n_experts == 1:
        raise ConfigError("n_experts (1) must be 0 (dense MLP) or at least 2")
    if cfg.n_experts and not 1 <= cfg.top_k <= cfg.n_experts:
        raise ConfigError(f"top_k ({cfg.top_k}) must be between 1 and n_experts ({cfg.n_experts})")
    if not cfg.n_experts and (cfg.top_k or cfg.expert_d_ff is not None or cfg.router_bias):
        raise ConfigError(f"top_k ({cfg.top_k}), expert_d_ff and router_bias need n_experts >= 2 (got n_experts 0)")
    _check_moe_layers(cfg)
    _check_mla(cfg)
    _check_layer_attention(cfg)
    _check_indexer(cfg)


def _check_indexer(cfg: ModelConfig) -> None:
    """DSA's indexer reads MLA's query latent (wq_b: r_q -> H_I·d_I) and rotates d_r of its d_I."""
    if not cfg.index_heads:
        if cfg.index_head_dim is not None or cfg.index_topk is not None:
            raise ConfigError("index_head_dim and index_topk describe DSA's indexer and need index_heads >= 1")
        return
    if not cfg.is_mla or cfg.q_lora_rank is None:
        raise ConfigError(f"index_heads ({cfg.index_heads}) needs latent attention with q_lora_rank set (DSA)")
    if cfg.index_head_dim is None or cfg.index_topk is None:
        raise ConfigError(f"index_heads ({cfg.index_heads}) needs index_head_dim and index_topk set")
    if cfg.local_window is not None:
        raise ConfigError("index_heads (DSA) and sliding_window / attention_chunk cannot both be set")
    if cfg.index_head_dim < cfg.qk_rope_head_dim:
        raise ConfigError(
            f"index_head_dim ({cfg.index_head_dim}) must be at least qk_rope_head_dim ({cfg.qk_rope_head_dim})"
        )


def _check_moe_layers(cfg: ModelConfig) -> None:
    moe_only = {
        "first_dense_layers": (cfg.first_dense_layers, 0),
        "moe_layer_step": (cfg.moe_layer_step, 1),
        "n_shared_experts": (cfg.n_shared_experts, 0),
        "routed_groups": (cfg.routed_groups, 0),
        "shared_expert_d_ff": (cfg.shared_expert_d_ff, None),
        "shared_expert_gate": (cfg.shared_expert_gate, False),
    }
    if not cfg.n_experts:
        for name, (value, default) in moe_only.items():
            if value != default:
                raise ConfigError(f"{name} ({show(value)}) needs n_experts >= 2 (got n_experts 0)")
        return
    if cfg.n_moe_layers == 0:
        raise ConfigError(
            f"first_dense_layers ({cfg.first_dense_layers}) and moe_layer_step ({cfg.moe_layer_step}) leave "
            f"no MoE layer among n_layers ({cfg.n_layers}); use n_experts 0 for a dense model"
        )
    if not cfg.n_shared_experts and (cfg.shared_expert_d_ff is not None or cfg.shared_expert_gate):
        raise ConfigError("shared_expert_d_ff and shared_expert_gate need n_shared_experts >= 1")
    if cfg.routed_groups > cfg.top_k:
        raise ConfigError(f"routed_groups ({cfg.routed_groups}) must be at most top_k ({cfg.top_k}) (0: no limit)")


def _check_mla(cfg: ModelConfig) -> None:
    parts = {"q_lora_rank": cfg.q_lora_rank, "qk_nope_head_dim": cfg.qk_nope_head_dim}
    parts |= {"qk_rope_head_dim": cfg.qk_rope_head_dim, "v_head_dim": cfg.v_head_dim}
    if cfg.kv_lora_rank is None:
        given = [name for name, value in parts.items() if value is not None]
        if given:
            raise ConfigError(f"{', '.join(given)} describe latent attention and need kv_lora_rank set")
        return
    missing = [name for name in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim") if parts[name] is None]
    if missing:
        raise ConfigError(f"kv_lora_rank ({cfg.kv_lora_rank}) needs {', '.join(missing)} set (MLA head widths)")
    if cfg.position != "rope" or cfg.qk_rope_head_dim % 2:
        raise ConfigError(
            f"latent attention needs position 'rope' and an even qk_rope_head_dim "
            f"(got {show(cfg.position)}, {cfg.qk_rope_head_dim})"
        )
    if cfg.kv_heads != cfg.n_heads or cfg.head_dim is not None or cfg.qk_norm != "none":
        raise ConfigError(
            "latent attention has one key and value per query head: leave n_kv_heads and head_dim unset "
            "(the MLA widths replace them) and qk_norm 'none'"
        )
    if cfg.rotary_fraction != 1.0 or cfg.nope_layer_every:
        raise ConfigError("latent attention rotates exactly qk_rope_head_dim: rotary_fraction 1, nope_layer_every 0")


def _check_layer_attention(cfg: ModelConfig) -> None:
    if cfg.sliding_window is not None and cfg.attention_chunk is not None:
        raise ConfigError("sliding_window and attention_chunk cannot both be set (one local pattern per model)")
    for name, every in (
        ("full_attention_every", cfg.full_attention_every),
        ("nope_layer_every", cfg.nope_layer_every),
    ):
        if every == 1:
            raise ConfigError(f"{name} (1) must be 0 (off) or at least 2")
    if cfg.full_attention_every and cfg.sliding_window is None and cfg.attention_chunk is None:
        raise ConfigError(
            f"full_attention_every ({cfg.full_attention_every}) needs sliding_window or attention_chunk set"
        )
    if cfg.nope_layer_every and cfg.position != "rope":
        raise ConfigError(f"nope_layer_every ({cfg.nope_layer_every}) needs position 'rope'")
    if cfg.qk_norm != "none" and cfg.norm != "rmsnorm":
        raise ConfigError(f"qk_norm ({show(cfg.qk_norm)}) is an RMSNorm: it needs norm 'rmsnorm'")
    if cfg.norm_placement in ("sandwich", "branch_post") and cfg.parallel_block:
        raise ConfigError(f"norm_placement {show(cfg.norm_placement)} needs parallel_block False")
