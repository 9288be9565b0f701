"""What a model built on the meta device does with one sequence: the FLOPs of its forward (torch's
FlopCounterMode, 2 per multiply-add, the matmuls, convolutions and attention kernels it has formulas
for), the bytes of its own cache object after a prefill (keys and values; the conv and recurrent
states of state-space and linear-attention layers), one decode step's FLOPs with that cache, and
the tensors autograd keeps for backward. Meta tensors have shapes and no data, so a sequence of
any length costs the same little memory; the forward runs the model's own code op by op.

Attention is counted as the model's code computes it: a masked score matrix is counted whole
(T keys per query, the `full` convention), as FlopCounterMode counts sdpa.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from hf_meta.count import component_of

_LAYER_CHILD = re.compile(r"^((?:[^.]+\.)*?[^.\d][^.]*)\.(\d+)\.([^.]+)$")
_STATE_NAMES = ("conv", "recurrent", "ssm", "state")


@dataclass(frozen=True)
class Measured:
    forward_flops: dict[str, int]  # one sequence of seq_len, by component; sums to the forward
    decode_flops: int  # one token after the prefill, with its cache
    kv_cache_bytes: int  # the cache's tensors that hold per-position keys and values
    state_bytes: int  # the cache's conv / recurrent state tensors
    activation_bytes: int  # tensors autograd saves for backward, parameters excluded, each storage once
    attention_score_bytes: int  # of which: saved tensors of T x T (attention probabilities)


def _ids(seq_len: int):
    import torch

    return torch.zeros((1, seq_len), dtype=torch.long, device="meta")


def _flop_components(counts: dict, total: int) -> dict[str, int]:
    """FlopCounterMode's per-module counts (each module's FLOPs include its children's) as a partition:
    the children of each repeated block summed over the blocks, the lm_head, and the rest."""
    out: Counter[str] = Counter()
    for fqn, ops in counts.items():
        path = fqn.partition(".")[2]
        match = _LAYER_CHILD.match(path)
        if match and not re.search(r"\.\d+\.", match.group(1) + "."):
            out[f"{match.group(1)}.*.{match.group(3)}"] += sum(ops.values())
        elif path == "lm_head":
            out[path] += sum(ops.values())
    covered = sum(out.values())
    if total > covered:
        out["other (outside the repeated blocks)"] += total - covered
    return {k: int(v) for k, v in out.items() if v}


def _counted(model, **inputs) -> tuple[object, int, dict]:
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        out = model(**inputs)
    return out, int(counter.get_total_flops()), counter.get_flop_counts()


def _tensors(obj, seen: set, depth: int = 0):
    """Every tensor reachable from a cache object (attributes, lists, dicts), each once."""
    import torch

    if depth > 6:
        return
    if isinstance(obj, torch.Tensor):
        if id(obj) not in seen:
            seen.add(id(obj))
            yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from _tensors(value, seen, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            yield from _tensors(value, seen, depth + 1)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        for value in vars(obj).values():
            yield from _tensors(value, seen, depth + 1)


def cache_bytes(cache) -> tuple[int, int]:
    """(KV bytes, state bytes) of a cache: its floating-point tensors (a 0-dim length counter is
    bookkeeping, not cache), a conv / recurrent / SSM state by its name."""
    kv = state = 0
    seen: set = set()
    layers = getattr(cache, "layers", None)
    groups = layers if isinstance(layers, list) and layers else [cache]
    for layer in groups:
        for name, value in vars(layer).items() if hasattr(layer, "__dict__") else []:
            tensors = [t for t in _tensors(value, seen) if t.is_floating_point() and t.dim() > 0]
            n_bytes = sum(t.numel() * t.element_size() for t in tensors)
            if any(word in name.lower() for word in _STATE_NAMES):
                state += n_bytes
            else:
                kv += n_bytes
    return kv, state


def saved_activation_bytes(model, seq_len: int) -> tuple[int, int]:
    """(bytes autograd saves for backward in one forward of seq_len tokens, of which T x T tensors):
    each storage once, the parameters left out."""
    import torch

    params = {p.untyped_storage()._cdata for p in model.parameters()}
    # batched_mm experts gather each chosen expert's matrices per token: those copies are weights, not
    # activations (a grouped kernel reads the experts in place), so a saved tensor of an expert
    # matrix's shape is left out
    expert_shapes = {tuple(p.shape[-2:]) for n, p in model.named_parameters() if ".experts." in n and p.dim() == 3}
    seen: set = set()
    total = scores = 0

    def pack(t):
        nonlocal total, scores
        storage = t.untyped_storage()
        key = storage._cdata
        if t.dim() == 3 and tuple(t.shape[-2:]) in expert_shapes:
            return t
        if key not in seen and key not in params:
            seen.add(key)
            total += storage.nbytes()
            if t.dim() >= 2 and t.shape[-1] == seq_len and t.shape[-2] == seq_len and seq_len > 1:
                scores += storage.nbytes()
        return t

    model.requires_grad_(True)
    try:
        with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            model(input_ids=_ids(seq_len), use_cache=True)
    finally:
        model.requires_grad_(False)
    return total, scores


def measure(model, seq_len: int, with_activations: bool = True) -> Measured:
    out, forward, counts = _counted(model, input_ids=_ids(seq_len), use_cache=True)
    cache = getattr(out, "past_key_values", None)
    kv, state = cache_bytes(cache) if cache is not None else (0, 0)
    decode = 0
    if cache is not None:
        _, decode, _ = _counted(model, input_ids=_ids(1), cache=cache, use_cache=True)
    saved, scores = saved_activation_bytes(model, seq_len) if with_activations else (0, 0)
    return Measured(_flop_components(counts, forward), decode, kv, state, saved, scores)


__all__ = ["Measured", "cache_bytes", "component_of", "measure", "saved_activation_bytes"]
