"""The shared readers of a Hugging Face `config.json`: typed lookups with the field named in every
error, RoPE settings in both transformers spellings, activations to MLP kinds, and the
Llama-style decoder most families start from. sizing/inputs/hf/read.py and sizing/inputs/hf/families.py build
their converters from these."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sizing.inputs.config import ConfigError, NotModelled
from sizing.validate import MAX_COUNT, MAX_FLOAT, SizingError, require_int, show

_REQUIRED = object()


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_finite(v: Any) -> bool:
    """An int or float that is a finite number within MAX_FLOAT (NaN compares False)."""
    return (isinstance(v, float) or _is_int(v)) and -MAX_FLOAT <= v <= MAX_FLOAT


# kind -> (test, description). A trailing "?" on a kind also accepts JSON null. "size" is a
# count or width (a period, a patch side, a head count), "index" may also be 0: both bounded
# like every count of the calculator, so no formula divides by 0 or loops over a negative range.
_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "int": (_is_int, "an integer"),
    "num": (_is_finite, "a finite number"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "size": (lambda v: _is_int(v) and 1 <= v <= MAX_COUNT, f"a positive integer (at most {MAX_COUNT:,})"),
    "index": (lambda v: _is_int(v) and 0 <= v <= MAX_COUNT, f"an integer >= 0 (at most {MAX_COUNT:,})"),
    "positive": (lambda v: _is_finite(v) and v > 0, f"a finite number > 0 (at most {MAX_FLOAT:g})"),
    "dict": (lambda v: isinstance(v, dict), "a JSON object"),
    "list": (lambda v: isinstance(v, list), "a list"),
}

_SILU = ("silu", "swish")
_GELU = ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_accurate", "gelu_python")
_RELU = ("relu",)


def _who(d: dict) -> str:
    return f"Hugging Face config (model_type '{d.get('model_type')}')"


def _get(d: dict, *names: str, default: Any = _REQUIRED, kind: str = "int") -> Any:
    """The value of the first of `names` that is set (a later spelling is used when an
    earlier one is absent or null). Absent everywhere: `default`, or an error naming the
    field when there is none. The value must be of `kind` (a key of _KINDS: "int", "num",
    "size", "index", "positive", "bool", "str", ...; "int?" etc. also allow null)."""
    present = [n for n in names if n in d]
    if not present:
        if default is _REQUIRED:
            also = f" (or {', '.join(repr(n) for n in names[1:])})" if len(names) > 1 else ""
            raise ConfigError(f"{_who(d)} lacks required field '{names[0]}'{also}")
        return default
    name = next((n for n in present if d[n] is not None), present[0])
    value = d[name]
    if value is None and kind.endswith("?"):
        return None
    test, what = _KINDS[kind.rstrip("?")]
    if not test(value):
        raise ConfigError(f"{_who(d)}: field '{name}' ({show(value)}) must be {what}")
    return value


def _layer_indices(d: dict, field: str, n_layers: int, default: list[int] | None = None) -> list[int]:
    """A list of layer indices (Bamba's attn_layer_indices, Qwen3-Next's mlp_only_layers), each
    in [0, n_layers). Absent: `default`; with no default, absent or null means none."""
    if default is None:
        indices = _get(d, field, default=None, kind="list?") or []
    else:
        indices = _get(d, field, default=default, kind="list")
    if any(not _KINDS["index"][0](i) or i >= n_layers for i in indices):
        raise ConfigError(f"{_who(d)}: field '{field}' ({show(indices)}) must list layer indices below {n_layers}")
    return indices


def _rope(d: dict, key: str, *older: str, default: Any) -> Any:
    """A RoPE setting: inside `rope_parameters` (5.x) or `rope_scaling` (4.x) first, as
    transformers 5.x gives those priority, then top-level `key`, then its `older` spellings."""
    for nest in ("rope_parameters", "rope_scaling"):
        sub = d.get(nest)
        if isinstance(sub, dict) and sub.get(key) is not None:
            if not _KINDS["num"][0](sub[key]):
                raise ConfigError(f"{_who(d)}: field '{nest}.{key}' ({show(sub[key])}) must be a number")
            return sub[key]
    return _get(d, key, *older, default=default, kind="num")


def _mlp(d: dict, *names: str, default: str, gated: bool) -> str:
    """HF activation name -> our MLP kind. Gated families (Llama, Gemma, ...) put the
    activation on the gate branch: silu -> swiglu, gelu -> geglu."""
    act = _get(d, *names, default=default, kind="str")
    name = next((n for n in names if d.get(n) is not None), names[0])
    low = act.lower()
    if low in _SILU and gated:
        return "swiglu"
    if low in _GELU:
        return "geglu" if gated else "gelu"
    if low in _RELU and not gated:
        return "relu"
    ok = _SILU + _GELU if gated else _GELU + _RELU
    raise NotModelled(
        f"{_who(d)}: activation {show(act)} in '{name}' is not supported for "
        f"{'a gated' if gated else 'this'} MLP (supported: {', '.join(ok)})"
    )


def _unsupported(d: dict, field: str, value: Any, why: str) -> ConfigError:
    return NotModelled(f"{_who(d)}: {field} = {json.dumps(value)} is not supported: {why}")


def _heads(d: dict, d_model: int, n_heads: int, kv_default: int | None, head_dim_default: int | None) -> dict:
    """n_kv_heads and head_dim, left None where they equal the derived value (MHA; d/h)."""
    kv = _get(d, "num_key_value_heads", default=kv_default, kind="int?")
    hd = _get(d, "head_dim", default=head_dim_default, kind="int?")
    if hd is not None and n_heads * hd == d_model:
        hd = None
    return {"n_kv_heads": None if kv == n_heads else kv, "head_dim": hd}


def _common(d: dict, *, width=("hidden_size",), layers=("num_hidden_layers",), heads=("num_attention_heads",)) -> dict:
    return {
        "vocab_size": _get(d, "vocab_size"),
        "d_model": _get(d, *width),
        "n_layers": _get(d, *layers),
        "n_heads": _get(d, *heads),
    }


def _tied(d: dict, default: bool) -> bool:
    return _get(d, "tie_word_embeddings", default=default, kind="bool")


# ---- the Llama-style families: RMSNorm, RoPE, gated MLP, pre-norm ----
def _rope_decoder(
    d: dict,
    *,
    tie: bool,
    eps: float = 1e-6,
    theta: float = 10000.0,
    kv: int | None = None,
    head_dim: int | None = None,
    act: tuple = ("hidden_act",),
    act_default: str = "silu",
) -> dict:
    base = _common(d)
    return dict(
        base,
        **_heads(d, base["d_model"], base["n_heads"], kv, head_dim),
        d_ff=_get(d, "intermediate_size"),
        mlp=_mlp(d, *act, default=act_default, gated=True),
        norm="rmsnorm",
        position="rope",
        rope_theta=_rope(d, "rope_theta", default=theta),
        rotary_fraction=_rope(d, "partial_rotary_factor", default=1.0),
        tied_embeddings=_tied(d, tie),
        norm_eps=_get(d, "rms_norm_eps", default=eps, kind="num"),
    )


_LAYER_TYPES = ("full_attention", "sliding_attention")


def _checked(d: dict, field: str, value: int, minimum: int = 1) -> int:
    """An integer field within the calculator's bounds, checked before it sizes a loop."""
    try:
        return require_int(f"'{field}'", value, minimum)
    except SizingError as exc:
        raise ConfigError(f"{_who(d)}: field {exc}") from None


def _width(d: dict, field: str, default_width: int) -> int:
    """An optional MLP width (GPT-2's n_inner, Falcon's ffn_hidden_size): null or absent
    means `default_width` (4d); transformers builds 0 as 0 wide, so 0 is an error here."""
    value = _get(d, field, default=None, kind="int?")
    return default_width if value is None else _checked(d, field, value)


def _qwen2_window(d: dict) -> int | None:
    """Qwen2 slides only with use_sliding_window, and then only in layers >= max_window_layers
    (or those `layer_types` marks); our sliding_window is all layers or none. The sliding
    layers are counted, never listed: num_hidden_layers is checked first and may be huge."""
    if not _get(d, "use_sliding_window", default=False, kind="bool"):
        return None
    window = _get(d, "sliding_window", default=4096, kind="int?")
    if window is None:
        return None
    n_layers = _checked(d, "num_hidden_layers", _get(d, "num_hidden_layers"))
    types = d.get("layer_types")
    if types is None:
        first = _checked(d, "max_window_layers", _get(d, "max_window_layers", default=28), minimum=0)
        sliding = max(0, n_layers - first)
    else:
        if not (isinstance(types, list) and len(types) == n_layers and all(t in _LAYER_TYPES for t in types)):
            raise ConfigError(
                f"{_who(d)}: field 'layer_types' ({show(types)}) must be a list of "
                f"{n_layers} (num_hidden_layers) of {' or '.join(map(repr, _LAYER_TYPES))}"
            )
        sliding = types.count("sliding_attention")
    if sliding == 0:
        return None
    if sliding == n_layers:
        return window
    raise _unsupported(
        d,
        "use_sliding_window",
        True,
        f"{sliding} of {n_layers} layers slide (max_window_layers / layer_types) and the "
        "calculator's sliding_window covers all layers or none; set use_sliding_window to "
        "false to size it with full attention",
    )
