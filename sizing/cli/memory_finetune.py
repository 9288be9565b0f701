"""`sizing memory --finetune lora|qlora`: fine-tuning memory on the GPUs asked for, answered by
the parallel model's term-by-term memory (sizing.parallel.memory, LoRA adapters and QLoRA's NF4
base from sizing.parallel.finetune) on a data-parallel layout of --dp GPUs, micro-batch b.
`--finetune full` is the ordinary `sizing memory` answer (every weight trains)."""

from __future__ import annotations

import click

from sizing.cli.common import UserError
from sizing.parallel import LORA_TARGETS
from sizing.validate import SizingError, require_choice

EXIT_DOES_NOT_FIT = 3


def lora_targets(text: str | None) -> tuple[str, ...] | None:
    """`--lora-targets q,v` -> ('q', 'v'); None when not given."""
    if text is None:
        return None
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    if not names:
        raise UserError(f"--lora-targets ({text!r}) must name projections: {', '.join(LORA_TARGETS)}")
    try:
        for name in names:
            require_choice("--lora-targets", name, LORA_TARGETS)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    return names


def finetune_memory(model, seq_len: int, fmt: str, **opts) -> bool:
    """With --finetune lora or qlora: print the plan of that run on dp GPUs (ZeRO stage as
    given) and, when it does not fit, the smallest changes that do; exit 3 if it clearly does not
    fit (not "tight"), and return True. With --finetune full (or none): False, the ordinary answer
    follows; the adapter options without lora or qlora are refused.
    opts: finetune, lora_rank, lora_targets, lora_base, lora_trained, cross_entropy, selective,
    offload_params, micro_batch, zero, dp, precision, optimizer, recompute, attention_impl, gpu,
    reserve (sizing.memory.runtime's RuntimeReserve, taken off the GPU before the fit)."""
    if opts["finetune"] in (None, "full"):
        given = [f"--{k.replace('_', '-')}" for k in ("lora_rank", "lora_targets", "lora_base", "lora_trained",
                 "cross_entropy", "selective", "offload_params") if opts.get(k)]  # fmt: skip
        if given:
            raise UserError(f"{', '.join(given)} apply to --finetune lora or qlora here (full training's "
                            "kernels and offload: `sizing parallel`)")  # fmt: skip
        return False
    opts["lora_targets"] = lora_targets(opts["lora_targets"])
    try:
        model.config.check_context(seq_len, "--seq-len")
    except SizingError as exc:
        raise UserError(str(exc)) from None
    _print_plan(model, seq_len, fmt, opts)
    return True


def _plan_for(model, base_len: int, opts: dict, gpu: str | None = None, **changes):
    """The fine-tune's plan (the reference model's memory, as `sizing memory` counts), with
    `changes` to the workload (seq_len, recompute, finetune) or the layout (dp, zero)."""
    from sizing.cli.emit import lora_options
    from sizing.inputs import Workload
    from sizing.parallel import ParallelLayout, StepOptions, parallel_plan

    fields = dict(
        dp=changes.get("dp", opts["dp"]),
        zero=changes.get("zero", opts["zero"]),
        micro_batch=opts["micro_batch"],
        micro_batches=1,
        offload_params=bool(opts.get("offload_params")),
    )
    fields |= {k: opts[k] for k in ("lora_rank", "lora_targets") if opts.get(k) is not None}
    finetune = changes.get("finetune", opts["finetune"])
    fields |= lora_options(opts.get("lora_base") if finetune == "lora" else None, opts.get("lora_trained"))
    run = Workload(changes.get("seq_len", base_len), recompute=changes.get("recompute", opts["recompute"]),
                   finetune=finetune, precision=opts["precision"], optimizer=opts["optimizer"],
                   attention_impl=opts["attention_impl"], loss=opts.get("cross_entropy"),
                   selective=opts.get("selective"))  # fmt: skip
    step = StepOptions(reference_memory=True)  # as `sizing memory` counts: the reference model's
    return parallel_plan(model.config, ParallelLayout(**fields), run, gpu or opts["gpu"], name=model.name,
                         step_options=step)  # fmt: skip


def _print_plan(model, seq_len: int, fmt: str, opts: dict) -> None:
    from sizing.memory import fit_verdict
    from sizing.render import render_parallel_plan

    try:
        plan = _plan_for(model, seq_len, opts)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    reserve = opts["reserve"]
    capacity = plan.gpu.memory_bytes - reserve.total_bytes
    click.echo(render_parallel_plan(plan, fmt).rstrip("\n"))
    verdict = fit_verdict(plan.per_gpu_bytes, reserve.total_bytes, plan.gpu.memory_bytes)
    if fmt in ("table", "markdown"):
        click.echo(f"{reserve.describe()}: {verdict.describe()} with it ({capacity / 2**30:.2f} GiB usable)")
    if plan.per_gpu_bytes <= capacity:
        return
    if fmt in ("table", "markdown"):
        for line in smallest_changes(model, seq_len, opts, reserve.total_bytes):
            click.echo(f"would fit: {line}")
    if not verdict.may_fit:
        raise SystemExit(EXIT_DOES_NOT_FIT)


def smallest_changes(model, seq_len: int, opts: dict, reserve_bytes: int) -> list[str]:
    """The smallest change of each kind that fits, in this order: recomputation, a shorter
    sequence, QLoRA (from LoRA), more GPUs (ZeRO-3 over dp), a bigger GPU."""
    from sizing.inputs import GPUS, get_gpu

    def fits(**changes) -> float | None:
        try:
            p = _plan_for(model, seq_len, opts, **changes)
        except SizingError:
            return None
        return p.per_gpu_bytes / 2**30 if p.per_gpu_bytes + reserve_bytes <= p.gpu.memory_bytes else None

    out = []
    for mode in ("selective", "full"):
        if mode != opts["recompute"] and (g := fits(recompute=mode)) is not None:
            out.append(f"--recompute {mode} ({g:.2f} GiB per GPU)")
            break
    for mode in dict.fromkeys((opts["recompute"], "full")):
        shorter = [t for t in (seq_len // 2**i for i in range(1, 6)) if t >= 256]
        found = next(((t, g) for t in shorter if (g := fits(seq_len=t, recompute=mode)) is not None), None)
        if found:
            extra = "" if mode == opts["recompute"] else f" --recompute {mode}"
            out.append(f"-T {found[0]}{extra} ({found[1]:.2f} GiB per GPU)")
            break
    if opts["finetune"] == "lora" and (g := fits(finetune="qlora", recompute="full")) is not None:
        out.append(f"--finetune qlora --recompute full ({g:.2f} GiB per GPU)")
    more = next(
        ((d, g) for d in (2, 4, 8, 16, 32, 64) if d > opts["dp"] and (g := fits(dp=d, zero=3)) is not None), None
    )
    if more:
        out.append(f"--dp {more[0]} --zero 3 ({more[1]:.2f} GiB per GPU)")
    own = get_gpu(opts["gpu"]).memory_bytes
    bigger = sorted((get_gpu(k) for k in GPUS if get_gpu(k).memory_bytes > own), key=lambda g: g.memory_bytes)
    found = next(((g.key, m) for g in bigger if (m := fits(gpu=g.key)) is not None), None)
    if found:
        out.append(f"--gpu {found[0]} ({found[1]:.2f} GiB per GPU)")
    return out
