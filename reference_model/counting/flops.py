"""Counting the reference model's matmul FLOPs per component with two independent counters.

1. torch: `torch.utils.flop_counter.FlopCounterMode` (2 FLOPs per multiply-add; counts the
   backward pass; works on the meta device). Its per-module table is right for the forward
   pass, but it attributes backward ops to whichever module its tracker saw last (measured:
   backward FLOPs land on dropout modules). So the totals come from FlopCounterMode itself and
   the split by component from `ComponentFlopMode` below, which uses the *same* per-op
   formulas (`flop_registry`) and attributes each op exactly: forward (and recomputed) ops to
   the innermost component module running, backward ops to the component whose forward
   created the autograd node being executed (`torch._C._current_autograd_node()`). Its
   totals must equal FlopCounterMode's, or the count is rejected.
2. fvcore: `FlopCountAnalysis` (torch.jit.trace, forward only) counts one per multiply-add:
   its numbers are multiplied by 2 here (`FVCORE_FLOPS_PER_COUNT`).

Uncounted work is made visible: every op a counter skipped is listed, and a matrix product
that a counter did not count (CPU `scaled_dot_product_attention` in FlopCounterMode, grouped
expert matmuls, ...) is reported as `uncounted_matmuls`, which fails verification instead of
passing with a smaller number.
"""

from __future__ import annotations

import logging
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode, flop_registry

from reference_model.counting.params import component_key
from sizing.formulas import FLOP_TERMS

FVCORE_FLOPS_PER_COUNT = 2  # fvcore counts one per multiply-add; our convention is 2
# An op whose name matches this does matrix-product work; if a counter has no formula for it,
# its FLOPs were silently dropped.
MATMUL_LIKE = re.compile(
    r"(^|[._:])(mm|bmm|addmm|baddbmm|addbmm|matmul|linear|einsum|dot|mv|conv\w*|"
    r"_grouped_mm|_scaled_mm|\w*attention\w*|tensordot)($|[._])"
)


# Norm modules (layer index removed): no matmul; fvcore's own FLOPs for them are kept apart.
NORM_MODULES = (
    "emb_norm",
    "attn_norm",
    "attn_post_norm",
    "mlp_norm",
    "mlp_post_norm",
    "norm_f",
    "attn.q_a_norm",
    "attn.kv_a_norm",
    "attn.q_norm",
    "attn.k_norm",
)


# The modules whose matmuls sizing.formulas.flops has a component for: the keys of its FLOP terms, named
# as the reference model names its modules (a matmul in any other module is FLOPs outside every
# component, and fails the check).
FLOP_COMPONENTS = frozenset(term.key for term in FLOP_TERMS)


def flop_component(module_name: str) -> str | None:
    """'blocks.3.attn.q' -> 'attn.q'; 'blocks.0.moe.experts.5.up' -> 'moe.experts'; a module
    that is not a leaf matmul component (a block, the experts' list, one expert, a norm) -> None.
    The same naming as the parameter count (counting.component_key)."""
    key = component_key(module_name)
    # parents of matmuls (experts, the shared MLP, DSA's indexer), and the indexer's LayerNorm
    if module_name.endswith(("moe.experts", "moe.shared", "attn.indexer", "attn.indexer.k_norm")):
        return None
    return key if key in FLOP_COMPONENTS else None


def is_matmul_like(op_name: str) -> bool:
    return bool(MATMUL_LIKE.search(op_name.replace("aten::", "aten.")))


@dataclass
class TorchCount:
    """FLOPs (2 per multiply-add) by phase and component, plus what was skipped."""

    forward: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    backward: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    recompute: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    skipped_ops: Counter = field(default_factory=Counter)  # ops without a FLOP formula (norms, softmax, ...)
    uncounted_matmuls: Counter = field(default_factory=Counter)
    flop_counter_mode_total: int = 0  # FlopCounterMode's own total over the same run

    @property
    def total(self) -> int:
        return sum(self.forward.values()) + sum(self.backward.values()) + sum(self.recompute.values())


class ComponentFlopMode(TorchDispatchMode):
    """Counts with torch's flop_registry, attributing each op to a component (see module doc)."""

    def __init__(self, model: nn.Module, count: TorchCount):
        super().__init__()
        self.count = count
        self.stack: list[str] = []
        self.node_component: dict = {}
        self.handles = []
        for name, module in model.named_modules():
            key = flop_component(name)
            if key is None:
                continue
            self.handles.append(module.register_forward_pre_hook(self._enter(key)))
            self.handles.append(module.register_forward_hook(self._leave(key), always_call=True))

    def _enter(self, key):
        def hook(module, args):
            self.stack.append(key)

        return hook

    def _leave(self, key):
        def hook(module, args, output):
            self.stack.pop()
            stop = {a.grad_fn for a in args if isinstance(a, torch.Tensor) and a.grad_fn is not None}
            if isinstance(output, torch.Tensor) and output.grad_fn is not None:
                self._claim(output.grad_fn, stop, key)

        return hook

    def _claim(self, node, stop, key):
        """Every autograd node between the module's output and its inputs was made by it."""
        todo = [node]
        while todo:
            n = todo.pop()
            if n is None or n in stop or n in self.node_component or type(n).__name__ == "AccumulateGrad":
                continue
            self.node_component[n] = key
            todo.extend(next_fn for next_fn, _ in n.next_functions)

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        packet = func._overloadpacket
        name = str(packet)
        if packet not in flop_registry:
            if is_matmul_like(name):
                self.count.uncounted_matmuls[name] += 1
            else:
                self.count.skipped_ops[name] += 1
            return out
        flops = flop_registry[packet](*args, **kwargs, out_val=out)
        node = torch._C._current_autograd_node()
        if self.stack:  # inside a component's forward: the forward pass, or its recomputation
            phase = self.count.recompute if node is not None else self.count.forward
            phase[self.stack[-1]] += flops
        elif node is not None and node in self.node_component:
            self.count.backward[self.node_component[node]] += flops
        else:
            phase = self.count.backward if node is not None else self.count.forward
            phase["(unattributed)"] += flops
        return out


def count_torch(model: nn.Module, idx: torch.Tensor, backward: bool = True, attn_impl: str = "math") -> TorchCount:
    """Forward (and backward through a mean loss) of `model` on `idx`, counted by
    FlopCounterMode and by ComponentFlopMode at once. Works on the meta device."""
    count = TorchCount()
    mode = ComponentFlopMode(model, count)
    targets = idx if backward else None
    try:
        with FlopCounterMode(display=False) as reference:
            with mode:
                with torch.set_grad_enabled(backward):
                    _, loss = model(idx, targets, attn_impl=attn_impl)
                    if backward:
                        loss.backward()
    finally:
        mode.remove()
    count.forward, count.backward, count.recompute = dict(count.forward), dict(count.backward), dict(count.recompute)
    count.flop_counter_mode_total = reference.get_total_flops()
    return count


@dataclass
class FvcoreCount:
    forward: dict[str, int]  # our convention: 2 x fvcore's multiply-adds
    norm_flops: dict[str, int]  # fvcore's own LayerNorm/elementwise terms, kept apart
    other: dict[str, int]  # counted by fvcore outside any component module
    skipped_ops: Counter
    uncounted_matmuls: Counter


class _LogitsOnly(nn.Module):
    """fvcore traces with torch.jit.trace, which wants tensor outputs only."""

    def __init__(self, model: nn.Module, attn_impl: str):
        super().__init__()
        self.model, self.attn_impl = model, attn_impl

    def forward(self, idx):
        return self.model(idx, attn_impl=self.attn_impl)[0]


def count_fvcore(model: nn.Module, idx: torch.Tensor, attn_impl: str = "math") -> FvcoreCount:
    """fvcore's forward count, by component, in our 2-per-multiply-add convention."""
    from fvcore.nn import FlopCountAnalysis  # lazy: an optional dependency, needed by this counter only

    logging.getLogger("fvcore").setLevel(logging.ERROR)  # it warns per skipped op; we list them instead
    analysis = FlopCountAnalysis(_LogitsOnly(model, attn_impl), (idx,))
    analysis.unsupported_ops_warnings(False).uncalled_modules_warnings(False).tracer_warnings("none")
    forward: dict[str, int] = defaultdict(int)
    norms: dict[str, int] = defaultdict(int)
    other: dict[str, int] = defaultdict(int)
    by_module_op = analysis.by_module_and_operator()
    for module_name, ops in by_module_op.items():
        key = flop_component(module_name.removeprefix("model."))
        if key is None:
            continue
        forward[key] += FVCORE_FLOPS_PER_COUNT * sum(ops.values())
    # Whatever fvcore counted outside the component modules: norms, or a matmul we could not place.
    leaf_total = sum(forward.values())
    for module_name, ops in by_module_op.items():
        name = component_key(module_name.removeprefix("model."))
        if name in NORM_MODULES or module_name.endswith("attn.indexer.k_norm"):
            norms[name] += FVCORE_FLOPS_PER_COUNT * sum(ops.values())
    total = FVCORE_FLOPS_PER_COUNT * analysis.total()
    rest = total - leaf_total - sum(norms.values())
    if rest:
        other["(outside components)"] = rest
    skipped = Counter({str(op): n for op, n in analysis.unsupported_ops().items()})
    uncounted = Counter({op: n for op, n in skipped.items() if is_matmul_like(op)})
    for op in uncounted:
        del skipped[op]
    return FvcoreCount(dict(forward), dict(norms), dict(other), skipped, uncounted)
