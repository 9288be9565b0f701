"""Which architecture a config.json describes when its `model_type` is not one transformers or this
tool knows by that name: a hub repository may name its own type (Kimi-K2's `kimi_k2`) while its
`architectures` names a class transformers has (`DeepseekV3ForCausalLM`). The model type is read
from MODEL_TYPE_ALIASES first, then from the classes `architectures` lists, through the table of
transformers' own class names (sizing/data/hf_architectures.json, written by tools/hf_coverage.py
from the installed transformers' auto mappings). No code from the repository is run.
"""

from __future__ import annotations

import functools
from collections.abc import Container

from sizing.inputs import data_files
from sizing.inputs.hf.families_2025 import MODEL_TYPE_ALIASES


@functools.cache
def architecture_types() -> dict[str, str]:
    """{architecture class name: model_type} of transformers' causal-LM and image-text models."""
    return dict(data_files.builtin("hf_architectures.json")["architectures"])


def resolve_model_type(d: dict, known: Container[str]) -> object:
    """The model_type to size `d` as: its own when `known` has it, else an alias's, else the type of
    the first class in `architectures` that transformers has. Anything else is returned as it is
    (the caller's refusal names it)."""
    model_type = d.get("model_type")
    if isinstance(model_type, str) and model_type in known:
        return model_type
    if isinstance(model_type, str) and model_type in MODEL_TYPE_ALIASES:
        return MODEL_TYPE_ALIASES[model_type]
    names = d.get("architectures")
    if isinstance(names, list):
        for name in names:
            if isinstance(name, str) and architecture_types().get(name) in known:
                return architecture_types()[name]
    return model_type
