"""What one prefill and each decode step of `generate()` execute and read, for sizing.serve.

`probe_generate` runs the reference model's generate() (math attention, the KV-cache path)
under one TorchDispatchMode that splits the run into forwards (a forward pre-hook on the token
embedding marks each start) and records, per forward:

* FLOPs, with torch's own per-op formulas (`flop_registry`, as FlopCounterMode counts them);
  the total is checked against FlopCounterMode over the same run;
* the bytes of every tensor an op reads (not the one it writes in place), each distinct
  view once per forward (a view and its transpose are one read), classified by the storage
  it lives in: a parameter (its name), a K/V tensor of the cache, or anything else
  (activations, positions). View ops (t, slice,
  expand, ...) read nothing and are skipped; an expanded view counts each element once
  (strides of 0 repeat elements, they are not read again);
* which experts of an MoE ran (a forward pre-hook on each expert).

An op is handed whole tensors, so what it is handed can exceed what it reads: aten.embedding
gets the whole token (and position) table but gathers one row per token. The tests name that
remainder rather than hide it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import FlopCounterMode, flop_registry


@dataclass
class ForwardRecord:
    """One forward of generate(): the prefill (index 0) or a decode step."""

    tokens: int  # new tokens per sequence
    flops: int = 0
    param_bytes: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # by parameter name
    kv_bytes: int = 0  # K/V cache slices read
    other_bytes: int = 0  # activations, positions, masks
    experts: set[tuple[int, int]] = field(default_factory=set)  # (layer, expert) that ran
    _seen: set = field(default_factory=set, repr=False)

    @property
    def weight_bytes(self) -> int:
        return sum(self.param_bytes.values())


def distinct_bytes(t: torch.Tensor) -> int:
    """Bytes of the elements a view covers, each once (a 0 stride repeats, it does not read)."""
    n = 1
    for size, stride in zip(t.shape, t.stride(), strict=True):
        if stride != 0:
            n *= size
    return n * t.element_size()


class _ServeProbe(TorchDispatchMode):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model
        self.records: list[ForwardRecord] = []
        self.params = {p.untyped_storage().data_ptr(): name for name, p in model.named_parameters()}
        self.cache_ptrs: set[int] = set()

    def start(self, tokens: int) -> None:
        self.records.append(ForwardRecord(tokens))
        cache = self.model.last_kv_cache
        if cache is not None:
            self.cache_ptrs = {t.untyped_storage().data_ptr() for t in cache.tensors()}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if not self.records or func.is_view:
            return out
        record = self.records[-1]
        packet = func._overloadpacket
        if packet in flop_registry:
            record.flops += flop_registry[packet](*args, **kwargs, out_val=out)
        schema = func._schema.arguments
        written = {i for i, a in enumerate(schema) if a.alias_info is not None and a.alias_info.is_write}
        read = [a for i, a in enumerate(args) if i not in written] + list(kwargs.values())
        for t in tree_flatten(read)[0]:
            if isinstance(t, torch.Tensor) and t.numel():
                self._record(record, t)
        return out

    def _record(self, record: ForwardRecord, t: torch.Tensor) -> None:
        ptr = t.untyped_storage().data_ptr()
        n_bytes = distinct_bytes(t)
        key = (ptr, t.storage_offset(), n_bytes)  # a weight and its transpose are one read
        if key in record._seen:
            return
        record._seen.add(key)
        if ptr in self.params:
            record.param_bytes[self.params[ptr]] += n_bytes
        elif ptr in self.cache_ptrs:
            record.kv_bytes += n_bytes
        else:
            record.other_bytes += n_bytes


@dataclass
class GenerateProbe:
    records: list[ForwardRecord]
    flop_counter_mode_total: int
    cache_len: int

    @property
    def prefill(self) -> ForwardRecord:
        return self.records[0]

    @property
    def decode_steps(self) -> list[ForwardRecord]:
        return self.records[1:]


def probe_generate(model: nn.Module, idx: torch.Tensor, new_tokens: int) -> GenerateProbe:
    """generate(idx, new_tokens) greedily with math attention, recorded forward by forward."""
    model.eval()
    probe = _ServeProbe(model)
    handles = [model.tok_emb.register_forward_pre_hook(lambda m, a: probe.start(a[0].shape[1]))]
    for i, block in enumerate(model.blocks):
        if getattr(block, "is_moe", False):  # MoE layers only (a model may start with dense ones)
            for j, expert in enumerate(block.moe.experts):
                handles.append(expert.register_forward_pre_hook(_mark(probe, i, j)))
    try:
        with FlopCounterMode(display=False) as counter, probe:
            model.generate(idx, new_tokens, temperature=0, attn_impl="math")
    finally:
        for handle in handles:
            handle.remove()
    return GenerateProbe(probe.records, counter.get_total_flops(), model.last_kv_cache.cache_len)


def _mark(probe: _ServeProbe, layer: int, expert: int):
    def hook(module, args):
        probe.records[-1].experts.add((layer, expert))

    return hook
