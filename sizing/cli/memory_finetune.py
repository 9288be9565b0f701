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
    given), exit 3 if it clearly does not fit (not "tight"), and return True. With --finetune
    full (or none): False, the ordinary answer follows; --lora-rank / --lora-targets without lora or qlora are refused.
    opts: finetune, lora_rank, lora_targets, micro_batch, zero, dp, precision, optimizer,
    recompute, attention_impl, gpu, reserve (sizing.memory.runtime's RuntimeReserve, taken off
    the GPU before the fit)."""
    if opts["finetune"] in (None, "full"):
        if opts["lora_rank"] is not None or opts["lora_targets"] is not None:
            raise UserError("--lora-rank and --lora-targets apply to --finetune lora or qlora")
        return False
    opts["lora_targets"] = lora_targets(opts["lora_targets"])
    try:
        model.config.check_context(seq_len, "--seq-len")
    except SizingError as exc:
        raise UserError(str(exc)) from None
    _print_plan(model, seq_len, fmt, opts)
    return True


def _print_plan(model, seq_len: int, fmt: str, opts: dict) -> None:
    from sizing.inputs import Workload
    from sizing.memory import fit_verdict
    from sizing.parallel import ParallelLayout, StepOptions, parallel_plan
    from sizing.render import render_parallel_plan

    fields = dict(dp=opts["dp"], zero=opts["zero"], micro_batch=opts["micro_batch"], micro_batches=1)
    if opts.get("lora_rank") is not None:
        fields["lora_rank"] = opts["lora_rank"]
    if opts.get("lora_targets") is not None:
        fields["lora_targets"] = opts["lora_targets"]

    work = dict(precision=opts["precision"], optimizer=opts["optimizer"], attention_impl=opts["attention_impl"])

    def plan_for(recompute: str):
        run = Workload(seq_len, recompute=recompute, finetune=opts["finetune"], **work)
        return parallel_plan(
            model.config,
            ParallelLayout(**fields),
            run,
            opts["gpu"],
            name=model.name,
            step_options=StepOptions(reference_memory=True),  # as `sizing memory` counts: the reference model's
        )

    try:
        plan = plan_for(opts["recompute"])
        lighter = [plan_for(mode) for mode in ("selective", "full") if mode != opts["recompute"]]
    except SizingError as exc:
        raise UserError(str(exc)) from None
    reserve = opts["reserve"]
    capacity = plan.gpu.memory_bytes - reserve.total_bytes

    def fits(p) -> bool:
        return p.per_gpu_bytes <= capacity

    click.echo(render_parallel_plan(plan, fmt).rstrip("\n"))
    verdict = fit_verdict(plan.per_gpu_bytes, reserve.total_bytes, plan.gpu.memory_bytes)
    if fmt in ("table", "markdown"):
        click.echo(f"{reserve.describe()}: {verdict.describe()} with it ({capacity / 2**30:.2f} GiB usable)")
    if fits(plan):
        return
    if fmt in ("table", "markdown"):
        for other in (p for p in lighter if fits(p)):
            click.echo(f"would fit: --recompute {other.work.recompute} ({other.per_gpu_bytes / 2**30:.2f} GiB per GPU)")
    if not verdict.may_fit:
        raise SystemExit(EXIT_DOES_NOT_FIT)
