"""Parameters of a model built on the meta device, per module, exactly: every nn.Parameter once (a
tied lm_head is the embedding's tensor and is not counted twice, as model.parameters() gives
it), grouped by the module that holds it with the index of a repeated block written `*`
(`model.layers.*.self_attn`): the components sum to the total.

Active parameters: a token multiplies k of the E routed experts of an MoE layer, so the tensors
under an `experts` module count k/E of their size; E and k are read from the config (its text
config for a vision-language model) under the names transformers' families use. Without them,
an MoE model's active count is unknown (None), never guessed."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_NUMBERED_CHILD = re.compile(r"^((?:[^.]+\.)*?[^.\d][^.]*)\.(\d+)\.([^.]+)(?:\.|$)")
_EXPERTS = re.compile(r"(^|\.)experts\.")
EXPERT_COUNT_NAMES = ("num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts")
TOP_K_NAMES = ("num_experts_per_tok", "moe_k", "top_k", "moe_top_k", "num_experts_per_token")


def component_of(name: str) -> str:
    """The module a parameter belongs to, a repeated block's index written `*`: the first numbered
    container's child (`model.layers.3.mlp.experts.gate_up_proj` -> `model.layers.*.mlp`), else the
    module path without the tensor's own name (`model.embed_tokens.weight` -> `model.embed_tokens`)."""
    match = _NUMBERED_CHILD.match(name)
    if match and not re.search(r"\.\d+\.", match.group(1) + "."):
        return f"{match.group(1)}.*.{match.group(3)}"
    return name.rpartition(".")[0] or name


@dataclass(frozen=True)
class ParamCount:
    components: dict[str, int]
    routed_expert_params: int
    n_experts: int | None
    top_k: int | None
    embedding_params: int

    @property
    def total(self) -> int:
        return sum(self.components.values())

    @property
    def active(self) -> int | None:
        """total - routed x (E - k) / E; None when the model has routed experts but E or k is unknown."""
        if not self.routed_expert_params:
            return self.total
        if not self.n_experts or not self.top_k:
            return None
        return self.total - self.routed_expert_params * (self.n_experts - self.top_k) // self.n_experts


def _config_int(config, names: tuple[str, ...]) -> int | None:
    for cfg in (config, getattr(config, "text_config", None)):
        for name in names:
            value = getattr(cfg, name, None) if cfg is not None else None
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def count_params(model, config) -> ParamCount:
    components: Counter[str] = Counter()
    routed = 0
    for name, p in model.named_parameters():
        components[component_of(name)] += p.numel()
        if _EXPERTS.search(name):
            routed += p.numel()
    try:
        embeddings = model.get_input_embeddings()
    except (AttributeError, NotImplementedError):  # a model that names no input embedding
        embeddings = None
    weight = getattr(embeddings, "weight", None)
    return ParamCount(
        dict(components),
        routed,
        _config_int(config, EXPERT_COUNT_NAMES),
        _config_int(config, TOP_K_NAMES),
        weight.numel() if weight is not None else 0,
    )
