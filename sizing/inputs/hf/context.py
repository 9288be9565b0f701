"""The context lengths a config file states: the one the model was pretrained at (the default T
for training cost) and the one it serves (the default context for inference).

A long-context config states both. `max_position_embeddings` is the context the released model
serves (Llama 3.1: 131,072; Llama 4 Scout: 10,485,760), reached by rescaling RoPE after
pretraining; the pretraining context is `original_max_position_embeddings` of the RoPE
scaling block (Llama 3.1 and Llama 4 `rope_type: llama3`: 8,192; DeepSeek-V3 and gpt-oss
`yarn`: 4,096; Phi-3 `longrope` states it at the top level). Training a model at its served
context would price the long-context extension as if it were the whole run: Scout at
10,485,760 costs ~300x its 6N figure.

Fields are read from the config and, for multimodal wrappers (Llama 4, Gemma 3), from its
`text_config`, the language model the calculator sizes. Transformers 4.x spells the RoPE block
`rope_scaling`, 5.x `rope_parameters`; both are read. A `linear` or `dynamic` scaling without an
`original_max_position_embeddings` states no pretraining context, so the served one is used when it
is at most MAX_TRAINED_CONTEXT (8,192: GPT-2's 1,024, Llama 2's 4,096, Llama 3's 8,192 are the
trained contexts); a longer one (Qwen2.5-7B's 131,072) is a served context reached after
pretraining, and the default is DEFAULT_CONFIG_SEQ_LEN (4,096) instead, said so.
"""

from __future__ import annotations

from dataclasses import dataclass

from sizing.vocabulary import DEFAULT_CONFIG_SEQ_LEN, MAX_TRAINED_CONTEXT

# The fields a config may state its served context in, in the order they are looked for:
# HF max_position_embeddings (Llama, Mistral, Qwen...), n_positions / n_ctx (GPT-2),
# seq_length (some GPT-NeoX-style configs); this tool's saved estimate: flops.seq_len; this
# tool's config dict: max_positions of a learned table.
CONTEXT_FIELDS: tuple[tuple[str, ...], ...] = (
    ("max_position_embeddings",),
    ("n_positions",),
    ("n_ctx",),
    ("seq_length",),
    ("flops", "seq_len"),
    ("max_positions",),
)

# Where a config states the context it was pretrained at, before RoPE scaling.
PRETRAINING_FIELDS: tuple[tuple[str, ...], ...] = (
    ("rope_scaling", "original_max_position_embeddings"),
    ("rope_parameters", "original_max_position_embeddings"),
    ("original_max_position_embeddings",),
)


@dataclass(frozen=True)
class StatedContexts:
    """The training and served contexts a config states, with the field each came from."""

    training: int | None
    training_field: str | None
    served: int | None
    served_field: str | None


def stated_contexts(data: dict) -> StatedContexts:
    """The pretraining context (PRETRAINING_FIELDS, else the served one) and the served context
    (CONTEXT_FIELDS) of a parsed config, looked for in the config and then its text_config."""
    served = _first(data, CONTEXT_FIELDS)
    pretrained = _first(data, PRETRAINING_FIELDS)
    if pretrained is None or (served is not None and pretrained[0] > served[0]):
        pretrained = served
        if served is not None and served[0] > MAX_TRAINED_CONTEXT:  # a long served context: not the pretraining one
            pretrained = (
                DEFAULT_CONFIG_SEQ_LEN,
                f"the default {DEFAULT_CONFIG_SEQ_LEN:,} ({served[1]} {served[0]:,} is "
                f"a served context, not the pretraining one)",
            )
    return StatedContexts(
        training=pretrained[0] if pretrained else None,
        training_field=pretrained[1] if pretrained else None,
        served=served[0] if served else None,
        served_field=served[1] if served else None,
    )


def _first(data: dict, fields: tuple[tuple[str, ...], ...]) -> tuple[int, str] | None:
    scopes = [(data, "")]
    text = data.get("text_config")
    if isinstance(text, dict):
        scopes.append((text, "text_config."))
    for scope, prefix in scopes:
        for keys in fields:
            value = scope
            for key in keys:
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value, prefix + ".".join(keys)
    return None
