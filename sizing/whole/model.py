"""A whole model that is not one stack of identical attention + MLP blocks, as numbers for one
workload: a hybrid (state-space or linear-attention layers beside attention layers), a
vision-language model (tower + projector + language model), or any architecture transformers
builds, counted on the meta device (the `hf` extra, package hf_meta).

`sizing estimate` and `sizing memory` size a stack of identical blocks (a ModelConfig) with the
formulas of sizing.formulas; every other architecture reaches them through a WholeModel: its
parameters by component (exact), its FLOPs per token at the sequence length asked, one decode
step's FLOPs, the KV cache and recurrent state of one sequence at that context, and what autograd
keeps for backward where it is known. `exact` says, number by number, how each was obtained,
so no estimated figure is shown as counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sizing.formulas import per_token
from sizing.validate import MAX_TOKENS, SizingError, require_choice, require_int
from sizing.vocabulary import ATTENTION_CONVENTIONS

KINDS = ("hybrid", "vision-language", "gemma3n", "transformers")
# What every WholeModel says about how its numbers were obtained (the keys of `exact`).
EXACTNESS_KEYS = ("params", "flops", "kv_cache", "state", "activations")


@dataclass(frozen=True)
class WholeModel:
    """One model at one sequence length: exact integers, each with how it was obtained (`exact`)."""

    name: str
    kind: str  # KINDS
    label: str  # shown on every output: how the model was sized
    params: dict[str, int]  # component -> parameters, the whole model; the total is their sum
    active_params: int  # what one token multiplies (the routed experts it skips left out)
    embedding_params: int  # lookup tables (token embeddings): left out of 6N's N by Kaplan et al.
    seq_len: int
    attention: str  # full or causal: how forward_flops counts the attention of the prefix
    forward_flops: dict[str, int]  # component -> forward FLOPs of one sequence of seq_len tokens (2 per MAC)
    decode_flops_per_token: int  # one new token with seq_len positions cached
    kv_cache_bytes: int | None  # one sequence of seq_len, bf16; None: not measured
    state_bytes: int | None  # one sequence's recurrent state (conv + SSM / DeltaNet), whatever the context
    activation_bytes: int | None  # training, one sequence of seq_len, no recompute; None: not modelled
    exact: dict[str, str]  # EXACTNESS_KEYS -> how that number was obtained
    seq_len_source: str = "given"
    notes: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)  # per-kind extras (image tokens, MTP, layers)

    def __post_init__(self) -> None:
        require_choice("kind", self.kind, KINDS)
        require_choice("attention", self.attention, ATTENTION_CONVENTIONS)
        require_int("seq_len", self.seq_len, 1)
        for name, value in {**self.params, **self.forward_flops}.items():
            require_int(name, value, 0, MAX_TOKENS)
        for name in ("active_params", "embedding_params", "decode_flops_per_token"):
            require_int(name, getattr(self, name), 0, MAX_TOKENS)
        for name in ("kv_cache_bytes", "state_bytes"):
            if getattr(self, name) is not None:
                require_int(name, getattr(self, name), 0, MAX_TOKENS)
        missing = [k for k in EXACTNESS_KEYS if k not in self.exact]
        if missing:
            raise SizingError(f"WholeModel {self.name!r} does not say how it obtained {', '.join(missing)}")

    @property
    def total_params(self) -> int:
        return sum(self.params.values())

    @property
    def non_embedding_params(self) -> int:
        return self.total_params - self.embedding_params

    @property
    def forward_flops_per_sequence(self) -> int:
        return sum(self.forward_flops.values())

    @property
    def forward_flops_per_token(self) -> int | float:
        """An exact integer when T divides the sequence's FLOPs (always, but causal with a window)."""
        return per_token(self.forward_flops_per_sequence, self.seq_len)

    def forward_flops_per_token_by_component(self) -> dict[str, int | float]:
        return {k: per_token(v, self.seq_len) for k, v in self.forward_flops.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "label": self.label,
            "exact": dict(self.exact),
            "notes": list(self.notes),
            "details": dict(self.details),
        }
