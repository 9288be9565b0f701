"""The seeds' init, for the exercises that reproduce a seed's numbers. `reference_model.build()`
initialises as GPT-2 does (std 0.02, residual projections 0.02 / sqrt(2L)); the seeds' blocks
start with O(1) gain instead, which is what their exercises measure (how fast the character
GPT memorises its text, how much gradient each norm placement passes back)."""

from __future__ import annotations

import torch

from reference_model.model.gpt import LMHead

INITS = ("seed", "gpt2")  # "gpt2": keep build()'s own init


def _trunc_normal_(t: torch.Tensor, std: float, generator: torch.Generator) -> None:
    torch.nn.init.trunc_normal_(t, mean=0.0, std=std, a=-3 * std, b=3 * std, generator=generator)


@torch.no_grad()
def seed_init(model, seed: int) -> None:
    """The seeds' init (seed tutorial 004): Linear weights truncated normal with Glorot's std
    sqrt(2 / (fan_in + fan_out)) cut at +-3 std, embeddings truncated normal std 1 cut at +-3.
    An untied head counts as a Linear. Biases 0 and norm gains 1 stay as build() set them."""
    generator = torch.Generator().manual_seed(seed)
    for module in model.modules():
        weight = getattr(module, "weight", None)
        if isinstance(module, torch.nn.Embedding):
            _trunc_normal_(weight, 1.0, generator)
        elif isinstance(module, (torch.nn.Linear, LMHead)) and weight is not None:  # a tied head has none
            fan_out, fan_in = weight.shape
            _trunc_normal_(weight, (2.0 / (fan_in + fan_out)) ** 0.5, generator)


def apply_init(model, init: str, seed: int):
    """`model` with `init` applied: "seed" re-initialises it with seed_init, "gpt2" keeps it."""
    if init not in INITS:
        raise ValueError(f"init ({init!r}) must be one of: {', '.join(INITS)}")
    if init == "seed":
        seed_init(model, seed)
    return model
