"""The architecture config: one frozen, validated dataclass for every family.

Field names follow llama/torchtitan (`d_model`, `n_layers`, `n_heads`, `n_kv_heads`, ...);
the README glossary maps them to paper symbols and Hugging Face `config.json` names.

Optional fields that default from others (`n_kv_heads`, `head_dim`, `norm_bias`,
`expert_d_ff`) stay `None` in the dataclass so that an override of `n_heads` or `d_model`
re-derives them; read the resolved values through the properties (`kv_heads`, `d_head`,
`has_norm_bias`, `expert_ff`).

This module holds the architecture only: sequence length, batch, tokens, GPUs and dtypes
live in the workload objects, so a parameter count never depends on how a model is trained.
Its checks and the kinds each field may hold are in config_checks.py.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

from sizing.inputs.config_checks import (  # noqa: F401  (re-exported: sizing.inputs.config is their public home)
    _CHOICES,
    _FLOAT_CHECKS,
    _INT_MINIMUM,
    MLP_KINDS,
    NORM_KINDS,
    NORM_PLACEMENTS,
    POSITION_KINDS,
    QK_NORM_KINDS,
    ConfigError,
    NotModelled,
    _positive_number,
    check_consistency,
    check_types,
)
from sizing.validate import (
    MAX_SEQ_LEN,
    SizingError,
    parse_float,
    parse_int,
    require_int,
    require_number,
    show,
)


def llama_ffn_dim(d_model: int, multiple_of: int, ffn_dim_multiplier: float | None = None) -> int:
    """Llama's SwiGLU hidden size (meta-llama/llama `model.py`, FeedForward):
    2/3 of 4d keeps the parameter count of a 4d GELU MLP with three matrices instead of two,
    optionally scaled, then rounded *up* to a multiple of `multiple_of`.
    llama-7b: int(2 * 16384 / 3) = 10922 -> 11008 (multiple_of 256)."""
    require_int("d_model", d_model)
    require_int("multiple_of", multiple_of)
    hidden = int(2 * (4 * d_model) / 3)
    if ffn_dim_multiplier is not None:
        require_number("ffn_dim_multiplier", ffn_dim_multiplier, 0, 1e3, exclusive_minimum=True)
        hidden = max(1, int(ffn_dim_multiplier * hidden))
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def _field_hint(name: str, names: tuple[str, ...]) -> str:
    """A close match and where the fields are listed (all 40-odd of them would make a 600-character line)."""
    import difflib  # only for a misspelt field: kept off the start-up path

    close = difflib.get_close_matches(name, names, n=1)
    return (f"did you mean {close[0]}? " if close else "") + "the fields are listed in docs/config.md"


def padded_vocab_size(vocab_size: int, multiple: int) -> int:
    """Vocab rounded up to a multiple (nanoGPT pads 50257 -> 50304 for faster matmuls).
    The embedding and lm_head have this many rows."""
    return multiple * ((vocab_size + multiple - 1) // multiple)


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    d_ff: int  # dense MLP hidden width (the per-expert width comes from expert_d_ff)
    n_kv_heads: int | None = None  # None: = n_heads (MHA); 1: multi-query
    head_dim: int | None = None  # None: = d_model // n_heads (Gemma sets 256 != d/h)
    mlp: str = "gelu"
    norm: str = "layernorm"
    norm_bias: bool | None = None  # None: True for layernorm, False for rmsnorm
    norm_placement: str = "pre"
    final_norm: bool = True
    embedding_norm: bool = False  # a norm on the embedding output before the first block (BLOOM)
    parallel_block: bool = False  # x + attn(n(x)) + mlp(n'(x)) (GPT-J, NeoX, Phi-2, Falcon)
    shared_block_norm: bool = False  # parallel block whose attn and MLP read one norm
    position: str = "learned"
    max_positions: int = 0  # rows of the learned position table (OPT keeps 2 extra)
    rotary_fraction: float = 1.0  # share of head_dim that RoPE rotates (NeoX 0.25, Phi-2 0.4)
    rope_theta: float = 10000.0
    qkv_bias: bool = False
    attn_out_bias: bool = False
    mlp_bias: bool = False
    lm_head_bias: bool = False
    tied_embeddings: bool = False
    n_experts: int = 0  # 0: dense MLP; >= 2: mixture of experts in every layer
    top_k: int = 0  # experts per token
    expert_d_ff: int | None = None  # None: = d_ff
    router_bias: bool = False
    sliding_window: int | None = None  # keys per query at most (Mistral 4096)
    vocab_pad_multiple: int = 1
    norm_eps: float = 1e-5
    # ---- the architectures of 2024-26 (docs/config.md); the defaults leave every earlier model as it was
    first_dense_layers: int = 0  # MoE: the first k layers keep a dense MLP of width d_ff (DeepSeek)
    moe_layer_step: int = 1  # MoE: after those, layer i (0-based) is MoE when (i + 1) % step == 0
    n_shared_experts: int = 0  # always-on experts beside the routed ones, in every MoE layer
    # MoE group-limited routing: a token's top_k experts lie in at most this many of the experts'
    # groups (DeepSeek-V3: topk_group 4 of n_group 8, one group per node under EP 64; 0: no limit).
    # Parameters and FLOPs do not change; the step model sends each token once per group.
    routed_groups: int = 0
    shared_expert_d_ff: int | None = None  # width of each shared expert; None: = expert_ff
    shared_expert_gate: bool = False  # Qwen2-MoE: sigmoid(Linear(d, 1)) scales the shared experts
    kv_lora_rank: int | None = None  # set: multi-head latent attention (DeepSeek-V2/V3), latent width
    q_lora_rank: int | None = None  # MLA's query compression; None: a plain d x h·(nope + rope) W_Q
    qk_nope_head_dim: int | None = None  # MLA: per-head q/k dims without RoPE
    qk_rope_head_dim: int | None = None  # MLA: per-head q dims with RoPE; the rope key is shared by heads
    v_head_dim: int | None = None  # MLA: per-head value width
    qk_norm: str = "none"  # RMSNorm on q and k (QK_NORM_KINDS)
    attention_sinks: bool = False  # GPT-OSS: one learned logit per head joins each softmax
    attention_chunk: int | None = None  # Llama-4: queries see keys of their own chunk of C positions only
    full_attention_every: int = 0  # >= 2: layer i attends to all keys when (i + 1) % n == 0 (Gemma, GPT-OSS)
    nope_layer_every: int = 0  # >= 2: layer i has no RoPE when (i + 1) % n == 0 (Llama-4)
    # DeepSeek-V3.2 sparse attention (DSA): a lightning indexer of H_I heads of d_I scores every key,
    # and each query attends to the top-k keys it picks (MLA with a query rank only)
    index_heads: int = 0  # H_I; 0: no indexer
    index_head_dim: int | None = None  # d_I
    index_topk: int | None = None  # keys each query attends to at most
    # multi-token-prediction modules the checkpoint carries (num_nextn_predict_layers); sized apart by
    # sizing.formulas.mtp, never in the total: transformers builds none (DeepSeek-V3, GLM-4.5)
    mtp_modules: int = 0

    def __post_init__(self) -> None:
        try:
            check_types(self, _field_kinds())
        except SizingError as exc:  # the same message, as the config's own error type
            raise ConfigError(str(exc)) from None
        check_consistency(self)

    # ---- resolved sizes (used by sizing and by reference_model alike) ----
    @property
    def kv_heads(self) -> int:
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads if self.head_dim is None else self.head_dim

    @property
    def q_width(self) -> int:
        """Width of the concatenated query heads, h * d_h (= d_model unless head_dim is set)."""
        return self.n_heads * self.d_head

    @property
    def kv_width(self) -> int:
        """Width of K (and of V): kv heads * d_h. GQA/MQA shrink it, not the query side."""
        return self.kv_heads * self.d_head

    @property
    def has_norm_bias(self) -> bool:
        return (self.norm == "layernorm") if self.norm_bias is None else self.norm_bias

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0

    @property
    def expert_ff(self) -> int:
        return self.d_ff if self.expert_d_ff is None else self.expert_d_ff

    @property
    def mlp_matrices(self) -> int:
        return MLP_KINDS[self.mlp][0]

    @property
    def gated_mlp(self) -> bool:
        return self.mlp_matrices == 3

    @property
    def activation(self) -> str:
        return MLP_KINDS[self.mlp][1]

    @property
    def rotary_dim(self) -> int:
        """Rotated dims per head, int(d_h * fraction) as in HF GPT-NeoX/Phi; qk_rope_head_dim under MLA."""
        if self.kv_lora_rank is not None and self.qk_rope_head_dim is not None:
            return self.qk_rope_head_dim
        return int(self.d_head * self.rotary_fraction)

    @property
    def padded_vocab(self) -> int:
        return padded_vocab_size(self.vocab_size, self.vocab_pad_multiple)

    @property
    def norms_per_block(self) -> int:
        if self.norm_placement == "sandwich":
            return 4
        return 1 if self.shared_block_norm else 2

    # ---- per-layer patterns (an MoE layer, a local-attention layer): counted, never listed,
    # so a config with a huge n_layers costs nothing to size.
    def is_moe_layer(self, i: int) -> bool:
        """Layer i (0-based) routes to experts: past the first dense layers, every step-th."""
        return self.is_moe and i >= self.first_dense_layers and (i + 1) % self.moe_layer_step == 0

    @property
    def n_moe_layers(self) -> int:
        if not self.is_moe:
            return 0
        s, k = self.moe_layer_step, min(self.first_dense_layers, self.n_layers)
        return self.n_layers // s - k // s  # i + 1 in (k, L] divisible by s

    @property
    def n_dense_layers(self) -> int:
        return self.n_layers - self.n_moe_layers

    @property
    def shared_ff(self) -> int:
        """Width of one shared expert (shared_expert_d_ff, default the routed expert's)."""
        return self.expert_ff if self.shared_expert_d_ff is None else self.shared_expert_d_ff

    @property
    def local_window(self) -> int | None:
        """The keys a local layer's query may see at most: the sliding window or the chunk."""
        return self.sliding_window if self.sliding_window is not None else self.attention_chunk

    def is_local_layer(self, i: int) -> bool:
        """Layer i has a sliding window or a chunk (not one of the full_attention_every layers)."""
        if self.local_window is None:
            return False
        return not (self.full_attention_every and (i + 1) % self.full_attention_every == 0)

    @property
    def n_local_layers(self) -> int:
        if self.local_window is None:
            return 0
        n = self.full_attention_every
        return self.n_layers - (self.n_layers // n if n else 0)

    @property
    def n_global_layers(self) -> int:
        return self.n_layers - self.n_local_layers

    def uses_rope(self, i: int) -> bool:
        return self.position == "rope" and not (self.nope_layer_every and (i + 1) % self.nope_layer_every == 0)

    # ---- latent attention (MLA) and the widths attention computes at
    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def qk_head_width(self) -> int:
        """Per-head width of q and k, the length of one score's dot product: d_h, or nope + rope under MLA."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim if self.is_mla else self.d_head

    @property
    def v_head_width(self) -> int:
        """Per-head width of v (and of each head's output): d_h, or v_head_dim under MLA."""
        return self.v_head_dim if self.is_mla else self.d_head

    @property
    def has_indexer(self) -> bool:
        """DeepSeek-V3.2's sparse attention: an indexer picks index_topk keys per query."""
        return self.index_heads > 0

    # ---- the one check of a context length, for every command
    def check_context(self, seq_len: int, what: str = "seq_len") -> int:
        """`seq_len` if this model can run a sequence that long: a positive int up to
        MAX_SEQ_LEN, and within the learned position table, which has no row past
        max_positions (gpt2: 1024). Else a SizingError naming `what` (the option or
        argument the caller took it from, e.g. "--seq-len")."""
        require_int(what, seq_len, 1, MAX_SEQ_LEN)
        if self.position == "learned" and seq_len > self.max_positions:
            raise SizingError(
                f"{what} ({seq_len}) exceeds the learned position table (max_positions "
                f"{self.max_positions}); use a shorter {what} or --set max_positions={seq_len}"
            )
        return seq_len

    # ---- conversions ----
    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        if not isinstance(data, dict):
            raise ConfigError(f"a config must be a dict of fields, not {type(data).__name__}")
        unknown = sorted(map(str, set(data) - set(cls.field_names())))
        if unknown:
            shown = ", ".join(map(show, unknown[:3])) + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else "")
            raise ConfigError(f"unknown config field(s) {shown}; {_field_hint(unknown[0], cls.field_names())}")
        missing = [f.name for f in fields(cls) if f.default is dataclasses.MISSING and f.name not in data]
        if missing:
            raise ConfigError(f"config lacks required field(s): {', '.join(missing)}")
        return cls(**data)

    def with_overrides(self, overrides: dict[str, Any] | Iterable[str]) -> ModelConfig:
        """A new config with fields replaced (validated again): a dict of field -> value, or
        'FIELD=VALUE' strings as `--set` takes them. Values may be strings as typed on the
        command line; they are parsed by the field's type."""
        types = {f.name: f.type for f in fields(self)}
        parsed = {}
        for name, value in _override_pairs(overrides):
            if name not in types:
                raise ConfigError(f"unknown config field {show(name)}; {_field_hint(str(name), tuple(types))}")
            parsed[name] = parse_field_value(name, types[name], value) if isinstance(value, str) else value
        return dataclasses.replace(self, **parsed)


def _override_pairs(overrides: Any) -> list[tuple[Any, Any]]:
    """(field, value) pairs of a dict, or of 'FIELD=VALUE' strings (the CLI's --set)."""
    if isinstance(overrides, dict):
        return list(overrides.items())
    if isinstance(overrides, (list, tuple)) and all(isinstance(item, str) for item in overrides):
        pairs = []
        for item in overrides:
            name, sep, value = item.partition("=")
            if not sep or not name.strip():
                raise ConfigError(f"override ({show(item)}) must look like FIELD=VALUE, e.g. n_layers=48")
            pairs.append((name.strip(), value))
        return pairs
    raise ConfigError(
        f"overrides ({show(overrides)}) must be a dict of field -> value or a list of 'FIELD=VALUE' strings"
    )


@functools.cache
def _field_kinds() -> tuple[tuple[str, str, bool], ...]:
    """(name, declared kind, optional) of every ModelConfig field, read once from the
    annotations (each config checks its fields against them: sizing.sweep builds thousands)."""
    return tuple((f.name, f.type.split(" |")[0], f.type.endswith("| None")) for f in fields(ModelConfig))


def parse_field_value(name: str, type_name: str, text: str) -> Any:
    """Parse a command-line string for a config field, by the field's annotation. Integers
    are parsed exactly (never through float), floats must be finite; the value's range is
    checked by ModelConfig itself."""
    lowered = text.strip().lower()
    optional = "None" in type_name
    if optional and lowered in ("none", "null", ""):
        return None
    try:
        if type_name.startswith("bool"):
            if lowered in ("true", "1", "yes", "on"):
                return True
            if lowered in ("false", "0", "no", "off"):
                return False
            raise ConfigError(f"{name} ({show(text)}) must be true or false")
        if type_name.startswith("int"):
            return parse_int(name, text, minimum=_INT_MINIMUM.get(name, 1))
        if type_name.startswith("float"):
            return parse_float(name, text)
    except SizingError as exc:
        raise ConfigError(str(exc)) from None
    return text.strip()
