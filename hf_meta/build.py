"""A config.json -> the model transformers builds from it, on the meta device (shapes only).

The model type is the file's own when transformers has it; else an alias this tool knows
(Kimi-K2's `kimi_k2` is DeepSeek-V3's), else the type of the first class `architectures` names
that transformers has. A type transformers lacks whose file names its own code (`auto_map`) is a
`trust_remote_code` model: its Python runs only with run_remote_code=True, from the directory or
hub repository the file came from. The class is the whole image-text model for a vision-language
type (AutoModelForImageTextToText), else the causal LM (AutoModelForCausalLM), else the base model
(AutoModel): the classes tools/hf_counts_*.py count with.

Weights are bf16 (what the KV cache's bytes are measured in). MoE experts run the `batched_mm`
implementation where the model offers it: every (token, expert) pair as a gathered matmul, with
no data-dependent shapes, so the meta device can run it; attention runs `sdpa`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from sizing import SizingError, show
from sizing.inputs.hf import MODEL_TYPE_ALIASES

EXTRA = "pip install 'transformer-sizing[hf]'"
REMOTE_FLAG = "--run-remote-code"


@dataclass
class Built:
    """The model on the meta device, its config and how it was built."""

    model: Any  # torch.nn.Module
    config: Any  # transformers.PretrainedConfig
    model_type: str
    model_class: str
    remote_code: bool


def _transformers():
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError:
        raise SizingError(f"counting a model by transformers needs the `hf` extra: {EXTRA}") from None
    transformers.logging.set_verbosity_error()
    return transformers


def transformers_version() -> str:
    return _transformers().__version__


def _mappings():
    from transformers.models.auto import modeling_auto as auto

    return auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES, auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES


def known_model_type(data: dict) -> str | None:
    """The model type transformers builds `data` as, without running any code; None: none."""
    from transformers import CONFIG_MAPPING

    model_type = data.get("model_type")
    if isinstance(model_type, str) and model_type in CONFIG_MAPPING:
        return model_type
    if isinstance(model_type, str) and MODEL_TYPE_ALIASES.get(model_type) in CONFIG_MAPPING:
        return MODEL_TYPE_ALIASES[model_type]
    by_class = {}
    for mapping in _mappings():
        for mtype, names in mapping.items():
            for name in [names] if isinstance(names, str) else names:
                by_class.setdefault(name, mtype)
    for name in data.get("architectures") or []:
        if isinstance(name, str) and by_class.get(name) in CONFIG_MAPPING:
            return by_class[name]
    return None


def _auto_class(model_type: str):
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForImageTextToText

    image_text, causal = _mappings()
    if model_type in image_text:
        return AutoModelForImageTextToText
    return AutoModelForCausalLM if model_type in causal else AutoModel


def _remote_config(data: dict, where: str | None, run_remote_code: bool):
    """The config of a trust_remote_code model: only with run_remote_code, from its folder or hub id."""
    model_type = data.get("model_type")
    if not isinstance(data.get("auto_map"), dict):
        raise SizingError(
            f"model_type ({show(model_type)}) is not one transformers {transformers_version()} has, and its "
            "config.json names no code of its own (auto_map): nothing can build it"
        )
    if not run_remote_code:
        raise SizingError(
            f"model_type ({show(model_type)}) is a trust_remote_code model: building it runs the Python code of "
            f"its repository; pass {REMOTE_FLAG} to run that code, only for a repository you trust"
        )
    if where is None:
        raise SizingError(f"{REMOTE_FLAG} needs the model's folder or hub id, where its code lives")
    from transformers import AutoConfig

    source = os.path.dirname(where) if os.path.isfile(where) else where
    return AutoConfig.from_pretrained(source, trust_remote_code=True)


def build_on_meta(data: dict, where: str | None = None, run_remote_code: bool = False) -> Built:
    """The model transformers builds from `data` (a parsed config.json), on the meta device."""
    _transformers()
    import torch
    from transformers import AutoConfig

    model_type = known_model_type(data)
    remote = model_type is None
    try:
        if remote:
            config = _remote_config(data, where, run_remote_code)
            model_type, auto = config.model_type, _auto_class("")
        else:
            fields = {k: v for k, v in data.items() if k not in ("model_type", "auto_map")}
            config, auto = AutoConfig.for_model(model_type, **fields), _auto_class(model_type)
        options = {"dtype": torch.bfloat16, "trust_remote_code": remote}
        model = _from_config(auto, config, options)
    except SizingError:
        raise
    except Exception as exc:  # transformers' own refusal of this config, in one line
        raise SizingError(
            f"transformers {transformers_version()} cannot build model_type {show(model_type)} from this "
            f"config: {type(exc).__name__}: {_first_line(exc)}"[:400]
        ) from None
    model.eval()
    model.requires_grad_(False)
    return Built(model, config, model_type, type(model).__name__, remote)


def _first_line(exc: Exception) -> str:
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), "")


def _from_config(auto, config, options: dict):
    """auto.from_config on the meta device: sdpa attention where the model has it (else eager), with
    batched_mm experts where the model offers them."""
    import torch

    last = None
    for attention in ("sdpa", "eager"):
        for experts in ({"experts_implementation": "batched_mm"}, {}):
            try:
                with torch.device("meta"):
                    return auto.from_config(config, **options, attn_implementation=attention, **experts)
            except (ValueError, TypeError, AttributeError) as exc:  # an implementation this model lacks
                last = exc
    raise last
