"""Which kind of model a config describes, and the WholeModel of a hybrid or vision-language config
or preset. A stack of identical attention + MLP blocks (every model_type sizing.inputs.hf reads)
returns None: sizing.formulas sizes it. A model_type neither this tool nor its hybrid and vision
readers know is "transformers": the `hf` extra counts it on the meta device (package hf_meta,
run from the command layer)."""

from __future__ import annotations

from sizing.hybrid import HYBRID_CONVERTERS, HYBRID_PRESETS, hybrid_from_hf_config
from sizing.inputs import ConfigError, NotModelled
from sizing.inputs.hf import SUPPORTED_MODEL_TYPES, from_hf_config, resolve_model_type, stated_contexts
from sizing.validate import SizingError
from sizing.vision import GEMMA3N_TYPES, VISION_PRESETS, VISION_TYPES, gemma3n_params, vlm_from_hf_config
from sizing.whole.gemma3n import gemma3n_whole_model
from sizing.whole.hybrid import hybrid_whole_model
from sizing.whole.model import WholeModel
from sizing.whole.vision import vision_whole_model


def config_kind(data: dict) -> str | None:
    """None for a stack sizing.formulas sizes; else "hybrid", "vision-language" or "transformers"."""
    known = (*SUPPORTED_MODEL_TYPES, *HYBRID_CONVERTERS, *VISION_TYPES, *GEMMA3N_TYPES)
    model_type = resolve_model_type(data, known)
    if model_type in GEMMA3N_TYPES:
        return "gemma3n"
    if model_type in HYBRID_CONVERTERS:
        return "hybrid"
    if model_type in VISION_TYPES and isinstance(data.get("vision_config"), dict):
        return "vision-language"
    if model_type in SUPPORTED_MODEL_TYPES:
        return None
    return "transformers"


def native_refusal(data: dict, kind: str | None) -> str | None:
    """Why this tool's own reader of `kind` refuses `data` (a pattern it does not hold, a part it does
    not model), or None when it sizes it. Such a config is counted by transformers instead."""
    try:
        if kind is None:
            from_hf_config(data)
        elif kind == "hybrid":
            hybrid_from_hf_config(dict(data, model_type=resolve_model_type(data, HYBRID_CONVERTERS)))
        elif kind == "vision-language":
            vlm_from_hf_config(dict(data, model_type=resolve_model_type(data, VISION_TYPES)))
        elif kind == "gemma3n":
            gemma3n_params(dict(data, model_type=resolve_model_type(data, GEMMA3N_TYPES)))
    except NotModelled as exc:  # a part the formulas do not hold; bad input stays an error
        return str(exc)
    return None


def default_context(data: dict, what: str) -> tuple[int, str]:
    """(T, where it came from): the pretraining context the config states (sizing.inputs.hf.context)."""
    stated = stated_contexts(data)
    if stated.training is None:
        raise ConfigError(f"--seq-len is needed: {what} states no context (e.g. --seq-len 4096)")
    where = f"{stated.training_field} in {what}"
    if stated.served is not None and stated.served != stated.training:  # as sizing.inputs.hf.ConfigFile says it
        where += f": the pretraining context; it serves {stated.served:,} ({stated.served_field})"
    return stated.training, where


def native_whole_model(data: dict, name: str, seq_len: int, attention: str, source: str) -> WholeModel:
    """The WholeModel of a hybrid or vision-language config this tool reads itself."""
    kind = config_kind(data)
    model_type = resolve_model_type(data, (*HYBRID_CONVERTERS, *VISION_TYPES, *GEMMA3N_TYPES))
    data = dict(data, model_type=model_type)
    if kind == "gemma3n":
        return gemma3n_whole_model(data, name, seq_len, attention, source)
    if kind == "hybrid":
        m = hybrid_from_hf_config(dict(data, _name_or_path=name))
        return hybrid_whole_model(m, seq_len, attention, source)
    if kind == "vision-language":
        text, vision = vlm_from_hf_config(data)
        return vision_whole_model(name, text, vision, seq_len, attention, source)
    raise SizingError(f"{name} is not a hybrid or vision-language config (kind {kind})")


def whole_preset_config(name: str) -> dict | None:
    """The HF config of a hybrid or vision-language preset, None for any other name."""
    for p in (*HYBRID_PRESETS, *VISION_PRESETS):
        if p.name == name:
            return p.hf_config
    return None
