"""Count the reference model's parameters by component, keyed like
`sizing.formulas.params.param_components`, and compare with the formulas: the `params` check of
`sizing verify`."""

from __future__ import annotations

import re
import time
from typing import NamedTuple

import torch.nn as nn

from reference_model.model import build
from reference_model.verify import CheckResult
from sizing.formulas import param_components
from sizing.inputs import ModelConfig

_LAYER = re.compile(r"^blocks\.\d+\.")
_EXPERT = re.compile(r"^moe\.experts\.\d+\.(up|gate|down)$")
_SHARED = re.compile(r"^moe\.shared\.(up|gate|down)$")
_SUFFIX = re.compile(r"\.(weight|bias)$")


def component_key(param_name: str) -> str:
    """'blocks.3.attn.q.weight' -> 'attn.q'; 'blocks.0.moe.experts.5.gate.bias' -> 'moe.experts'."""
    key = _SUFFIX.sub("", _LAYER.sub("", param_name))
    if _SHARED.match(key):
        return "moe.shared"  # the shared experts: one MLP, one component
    if key.startswith("attn.indexer."):
        return "attn.indexer"  # DSA's lightning indexer: wq_b, wk, k_norm, weights_proj
    return "moe.experts" if _EXPERT.match(key) else key


def count_params_by_component(model: nn.Module) -> dict[str, int]:
    """{component: parameters}. named_parameters() yields a shared tensor once, and a tied
    lm_head does not register the embedding weight at all: tied weights count once.
    Works on meta tensors (numel only)."""
    counts: dict[str, int] = {}
    for name, p in model.named_parameters():
        key = component_key(name)
        counts[key] = counts.get(key, 0) + p.numel()
    return counts


class ParamRow(NamedTuple):
    component: str
    formula: int  # sizing's count
    counted: int  # the built model's numel
    difference: int  # counted - formula


def compare_params(cfg: ModelConfig) -> list[ParamRow]:
    """Build `cfg` on the meta device and compare component by component. Components on
    either side only (a key the formulas lack, or a part the model lacks) show up with 0 on
    the other side. Order: the formulas' order, then any extra keys of the model."""
    counted = count_params_by_component(build(cfg, device="meta"))
    formula = {c.key: c.count for c in param_components(cfg)}
    keys = list(formula) + [k for k in counted if k not in formula]
    return [ParamRow(k, formula.get(k, 0), counted.get(k, 0), counted.get(k, 0) - formula.get(k, 0)) for k in keys]


def agreed_params(cfg: ModelConfig) -> list[ParamRow]:
    """The rows compare_params gives when every count equals the formula, from the formula alone
    (no model built): tests/test_verification_report.py compares the page with them, while
    tests/test_reference_params.py counts every preset."""
    return [ParamRow(c.key, c.count, c.count, 0) for c in param_components(cfg)]


def verify_params(name: str, cfg: ModelConfig, *, count: bool = True, **_options) -> CheckResult:
    """The `params` check: sizing's formula vs numel() of the model built on meta, by component
    (count=False: the result when every count agrees, agreed_params)."""
    start = time.perf_counter()
    rows = compare_params(cfg) if count else agreed_params(cfg)
    seconds = time.perf_counter() - start
    expressions = {
        c.key: (f"{c.layers}·({c.formula})" if c.per_layer is not None else c.formula) for c in param_components(cfg)
    }
    table = [[r.component, r.formula, r.counted, r.difference, expressions.get(r.component, "")] for r in rows]
    total_formula, total_counted = sum(r.formula for r in rows), sum(r.counted for r in rows)
    table.append(["total", total_formula, total_counted, total_counted - total_formula, ""])
    ok = all(r.difference == 0 for r in rows)
    return CheckResult(
        "params", name, ["component", "formula", "counted", "difference", "expression"], table, ok, seconds
    )
