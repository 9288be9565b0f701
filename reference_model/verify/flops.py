"""FLOP verification: the formulas of `sizing.formulas.flops` against the counted FLOPs of the reference
model, component by component, forward and training (forward + backward), with both counters.

- Full-size presets run on the meta device with FlopCounterMode (no memory, no arithmetic).
- fvcore needs real tensors (it traces), so it runs a scaled-down config with the same
  architecture switches (`small.small_config`) on CPU, as does the torch counter for that config.
- Exact equality is required: any difference, any matmul a counter did not count, or any
  FLOPs a counter could not attribute to a component fails the check.

`verify_flops` is the `flops` check of `sizing verify`: both runs as one CheckResult.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field

import torch
from torch.utils.checkpoint import set_checkpoint_early_stop

from reference_model.counting import FULL_SIZE_BATCH, count_fvcore, count_torch, full_size_seq_len
from reference_model.model import build, small_config
from reference_model.verify.check import CheckResult
from sizing import FLOP_COUNTERS, require_choice
from sizing.formulas import SELECTIVE_RECOMPUTE_KEYS, flop_breakdown
from sizing.inputs import ModelConfig

TOY_SEQ_LEN, TOY_BATCH = 32, 2


@dataclass
class FlopRow:
    component: str
    formula: str
    expected: int
    torch: int | None = None
    fvcore: int | None = None

    def differences(self) -> list[int]:
        return [c - self.expected for c in (self.torch, self.fvcore) if c is not None]


@dataclass
class FlopCheck:
    """One model at one sequence length: forward and training rows per component."""

    name: str
    device: str
    batch: int
    seq_len: int
    counters: tuple[str, ...]
    forward: list[FlopRow]
    training: list[FlopRow]
    recompute: list[FlopRow] = field(default_factory=list)  # checkpointed blocks: one forward of them
    recompute_selective: list[FlopRow] = field(default_factory=list)  # checkpointed attention core: QK^T, AV
    skipped: dict[str, dict[str, int]] = field(default_factory=dict)  # counter -> op -> calls
    uncounted_matmuls: dict[str, dict[str, int]] = field(default_factory=dict)
    extra_terms: dict[str, dict[str, int]] = field(default_factory=dict)  # e.g. fvcore's LayerNorm FLOPs
    flop_counter_mode_total: int | None = None
    component_total: int | None = None

    @property
    def ok(self) -> bool:
        rows = self.forward + self.training + self.recompute + self.recompute_selective
        return (
            all(d == 0 for r in rows for d in r.differences())
            and not any(self.uncounted_matmuls.values())
            and self.flop_counter_mode_total == self.component_total
        )


def _rows(expected: dict[str, int], formulas: dict[str, str], counted: dict[str, dict[str, int]]) -> list[FlopRow]:
    keys = list(expected) + sorted(k for c in counted.values() for k in c if k not in expected)
    rows = []
    for key in dict.fromkeys(keys):
        row = FlopRow(key, formulas.get(key, "(not in the formula)"), expected.get(key, 0))
        for counter, values in counted.items():
            setattr(row, counter, values.get(key, 0))
        rows.append(row)
    return rows


def check_flops(
    cfg: ModelConfig,
    name: str,
    seq_len: int,
    device: str = "cpu",
    counters: str = "both",
    batch: int = 2,
    recompute: bool = False,
    seed: int = 0,
    attn_impl: str = "math",
) -> FlopCheck:
    """Count forward and forward+backward of `cfg` on `device` and compare with the formula.
    On "meta" only the torch counter can run (fvcore needs values to trace). attn_impl "math"
    is what the counters can see; "sdpa" is there to show a fused kernel going uncounted."""
    require_choice("counter", counters, FLOP_COUNTERS)
    use_torch = counters in ("torch", "both")
    use_fvcore = counters in ("fvcore", "both") and device != "meta"
    model = build(cfg, device=device, seed=seed if device != "meta" else None)
    if device == "meta":  # no values to draw: token ids of the right shape, nothing allocated anywhere
        idx = torch.empty((batch, seq_len), dtype=torch.long, device="meta")
    else:
        generator = torch.Generator().manual_seed(seed)
        idx = torch.randint(0, cfg.vocab_size, (batch, seq_len), generator=generator).to(device)

    breakdown = flop_breakdown(cfg, seq_len, "full")
    formulas = {c.key: c.formula for c in breakdown.components}
    fwd = {c.key: c.forward * batch for c in breakdown.components}
    train = {c.key: c.forward * batch * (1 + c.backward_per_forward) for c in breakdown.components}
    check = FlopCheck(
        name, device, batch, seq_len, tuple(c for c, on in (("torch", use_torch), ("fvcore", use_fvcore)) if on), [], []
    )
    counted_fwd, counted_train = {}, {}
    if use_torch:
        tc = count_torch(model, idx, backward=True, attn_impl=attn_impl)
        counted_fwd["torch"] = tc.forward
        counted_train["torch"] = {
            k: tc.forward.get(k, 0) + tc.backward.get(k, 0) for k in set(tc.forward) | set(tc.backward)
        }
        check.skipped["torch"] = dict(tc.skipped_ops)
        check.uncounted_matmuls["torch"] = dict(tc.uncounted_matmuls)
        check.flop_counter_mode_total, check.component_total = tc.flop_counter_mode_total, tc.total
    if use_fvcore:
        fc = count_fvcore(model, idx, attn_impl=attn_impl)
        counted_fwd["fvcore"] = {**fc.forward, **fc.other}
        check.skipped["fvcore"] = dict(fc.skipped_ops)
        check.uncounted_matmuls["fvcore"] = dict(fc.uncounted_matmuls)
        check.extra_terms["fvcore (norms, not in the matmul formula)"] = fc.norm_flops
    check.forward = _rows(fwd, formulas, counted_fwd)
    check.training = _rows(train, formulas, counted_train)
    if recompute and use_torch:
        check.recompute = _recompute_rows(model, idx, fwd, formulas, "full", attn_impl)
        check.recompute_selective = _recompute_rows(model, idx, fwd, formulas, "selective", attn_impl)
    if not use_torch:
        check.flop_counter_mode_total = check.component_total = None
    return check


def formula_check(
    cfg: ModelConfig,
    name: str,
    seq_len: int,
    device: str = "cpu",
    counters: str = "both",
    batch: int = 2,
    recompute: bool = False,
    **_options,
) -> FlopCheck:
    """What check_flops returns when every counter agrees with the formula, built from the formula
    alone (no model, no counting, milliseconds): the same rows, each counted figure equal to the
    expected one. tests/test_verification_report.py compares its tables with the committed
    reports/verification.md, so a formula change or a mismatch there shows without a recount."""
    require_choice("counter", counters, FLOP_COUNTERS)
    use_torch = counters in ("torch", "both")
    use_fvcore = counters in ("fvcore", "both") and device != "meta"
    breakdown = flop_breakdown(cfg, seq_len, "full")
    formulas = {c.key: c.forward for c in breakdown.components}
    texts = {c.key: c.formula for c in breakdown.components}
    fwd = {k: v * batch for k, v in formulas.items()}
    train = {c.key: c.forward * batch * (1 + c.backward_per_forward) for c in breakdown.components}
    used = tuple(c for c, on in (("torch", use_torch), ("fvcore", use_fvcore)) if on)
    check = FlopCheck(name, device, batch, seq_len, used, [], [])
    check.forward = _rows(fwd, texts, {c: fwd for c in used})
    check.training = _rows(train, texts, {"torch": train} if use_torch else {})
    if recompute and use_torch:
        for mode, keep in (("full", lambda k: k != "lm_head"), ("selective", lambda k: k in SELECTIVE_RECOMPUTE_KEYS)):
            expected = {k: v for k, v in fwd.items() if keep(k)}
            rows = _rows(expected, texts, {"torch": expected})
            setattr(check, "recompute" if mode == "full" else "recompute_selective", rows)
    return check


def _recompute_rows(model, idx, fwd, formulas, mode: str, attn_impl: str) -> list[FlopRow]:
    """What a checkpointed model re-runs in backward, by component. "full" (checkpointed
    blocks): exactly one forward of the blocks, not the lm_head. "selective" (checkpointed
    attention core): QK^T and AV once more. torch stops a non-reentrant recomputation early
    once every saved tensor is rebuilt, which skips each block's last matmul (its output is not
    saved); that saving is real but implementation-specific, so the count disables early stop
    to see the whole re-run."""
    model.set_checkpointing(mode)
    try:
        with set_checkpoint_early_stop(False):
            tc = count_torch(model, idx, backward=True, attn_impl=attn_impl)
    finally:
        model.set_checkpointing("none")
    keep = (lambda k: k != "lm_head") if mode == "full" else (lambda k: k in SELECTIVE_RECOMPUTE_KEYS)
    expected = {k: v for k, v in fwd.items() if keep(k)}
    return _rows(expected, formulas, {"torch": tc.recompute})


# ---------------------------------------------------------------- sizing verify --flops
# A full-size MoE with more experts than this runs its meta FLOP count over one period of its
# layer patterns (full width, fewer blocks): 58 layers x 256 experts of DeepSeek-V3 are ~10^6
# dispatched ops, minutes on 2 cores; one period is seconds and exercises every kind of block.
MAX_FULL_DEPTH_EXPERTS = 8
# `sizing verify --all` (53 presets) runs every full-size count that way: the full-depth meta runs
# took ~3 s a preset (llama2-70b's 80 blocks, mixtral-8x22b's 56 x 8 experts), over the 60 s
# budget for the lot. Depth enters the formulas only through the layer counts, which the toy
# run checks with every block built; tests/test_flop_verify.py keeps full-depth meta runs.
MIN_PROBE_LAYERS = 2  # at least two blocks, so one block's output feeds another


def full_size_probe(cfg: ModelConfig, shallow: bool = False) -> tuple[ModelConfig, str | None]:
    """The config the full-size FLOP run builds, and a note when it is not `cfg` itself: for a
    large MoE (or any model when `shallow`), the first dense layers plus one period of its MoE /
    local-global / NoPE patterns (the lcm of their steps), every width unchanged. The formulas
    depend on depth only through the layer counts, which the toy run checks with every pattern
    present."""
    if not shallow and cfg.n_experts <= MAX_FULL_DEPTH_EXPERTS:
        return cfg, None
    period = math.lcm(cfg.moe_layer_step, cfg.full_attention_every or 1, cfg.nope_layer_every or 1)
    layers = min(cfg.n_layers, max(MIN_PROBE_LAYERS, cfg.first_dense_layers + period))
    if layers == cfg.n_layers:
        return cfg, None
    why = (
        "every preset at once (--all) runs each at one period of its blocks, within the time budget"
        if shallow and cfg.n_experts <= MAX_FULL_DEPTH_EXPERTS
        else f"{cfg.n_experts} experts in each of {cfg.n_moe_layers} layers are too many dispatched ops for seconds"
    )
    note = (
        f"full size, meta: every width of the model, {layers} of its {cfg.n_layers} layers (the "
        f"{cfg.first_dense_layers} dense ones first and one period of {period} of its layer patterns): {why}"
    )
    return dataclasses.replace(cfg, n_layers=layers), note


def flops_share_key(name: str, cfg: ModelConfig, counter: str = "both", **_options) -> tuple:
    """What the flops checks of two models can share: their toy-size run (the key of its cache
    in `_toy_flops`). The parallel runner runs models with one key in one process, in order."""
    return ("flops", small_config(cfg, TOY_SEQ_LEN), counter)


def _toy_flops(
    name: str, cfg: ModelConfig, counter: str, cache: dict | None, notes: list[str], check_fn=check_flops
) -> FlopCheck:
    """The toy-size run of `cfg`, counted once per toy config within one `run_checks` (presets of
    one family often shrink to the same toy model: gpt2-medium/large/xl, qwen3-30b/235b)."""
    key = (*flops_share_key(name, cfg, counter), check_fn)
    if cache is not None and key in cache:
        check, first = cache[key]
        notes.append(f"toy size, cpu: the same toy config as {first}, counted once for both")
        return check
    check = check_fn(
        small_config(cfg, TOY_SEQ_LEN),
        name,
        TOY_SEQ_LEN,
        device="cpu",
        counters=counter,
        batch=TOY_BATCH,
        recompute=counter != "fvcore",
    )
    if cache is not None:
        cache[key] = (check, name)
    return check


def verify_flops(
    name: str, cfg: ModelConfig, seq_len: int | None = None, counter: str = "both", check_fn=check_flops, **_options
) -> CheckResult:
    """The `flops` check: matmul FLOPs by component, forward and training (forward + backward):
    - the model at full size on the meta device, counted by FlopCounterMode, at
      `full_size_seq_len(name, cfg, seq_len)`;
    - the same switches at toy size (small_config) on CPU, counted by the chosen counters
      (fvcore needs real tensors), with a checkpointed run that must re-count one forward.
    check_fn: check_flops (count), or formula_check (the result when every count agrees)."""
    start = time.perf_counter()
    T = full_size_seq_len(name, cfg, seq_len)
    runs, probe_notes = [], []
    if counter in ("torch", "both"):
        probe, note = full_size_probe(cfg, shallow=_options.get("shallow", False))
        probe_notes += [note] if note else []
        runs.append(
            ("full size, meta", check_fn(probe, name, T, device="meta", counters="torch", batch=FULL_SIZE_BATCH))
        )
    runs.append(("toy size, cpu", _toy_flops(name, cfg, counter, _options.get("toy_cache"), probe_notes, check_fn)))
    rows, notes = [], list(probe_notes)
    for run, check in runs:
        for phase, phase_rows in (
            ("forward", check.forward),
            ("training", check.training),
            ("recompute", check.recompute),
            ("recompute selective", check.recompute_selective),
        ):
            for r in phase_rows:
                diffs = r.differences()
                rows.append(
                    [run, phase, r.component, r.expected, r.torch, r.fvcore, max(diffs, key=abs) if diffs else None]
                )
        notes += _run_notes(f"{run} (batch {check.batch}, T {check.seq_len})", check)
    notes.append(
        "FLOPs: 2 per multiply-add (fvcore counts 1: multiplied by 2); attention convention: full "
        "(dense masked matmul, T keys per query)"
    )
    ok = all(check.ok for _, check in runs)
    return CheckResult(
        "flops",
        name,
        ["run", "phase", "component", "formula", "torch", "fvcore", "difference"],
        rows,
        ok,
        time.perf_counter() - start,
        notes,
    )


def _run_notes(label: str, check: FlopCheck) -> list[str]:
    """What a run's table does not show: the totals' agreement, uncounted and skipped ops."""
    notes = []
    if check.flop_counter_mode_total is not None:
        notes.append(
            f"{label}: FlopCounterMode total {check.flop_counter_mode_total:,} = sum of components "
            f"{check.component_total:,}: {check.flop_counter_mode_total == check.component_total}"
        )
    for counter_name, ops in check.uncounted_matmuls.items():
        if ops:
            notes.append(f"{label}: UNCOUNTED MATMULS by {counter_name}: {ops}")
    for counter_name, ops in check.skipped.items():
        top = ", ".join(f"{op} x{n}" for op, n in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))[:12])
        notes.append(
            f"{label}: {counter_name} skipped (no FLOP formula; not matmuls): {top}"
            + (f" and {len(ops) - 12} more" if len(ops) > 12 else "")
        )
    for term, values in check.extra_terms.items():
        if any(values.values()):
            notes.append(f"{label}: {term}: {values}")
    return notes
