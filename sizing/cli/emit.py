"""`--emit FORMAT [--out PATH]` for `sizing parallel` and `sizing serve`: the answer, and the
chosen layout or serving plan as the framework's own file (sizing.frameworks.write_training /
emit_serving), written atomically to --out, or printed instead of the answer without --out.
Also the LoRA layout options both `parallel` and `memory --finetune` take."""

from __future__ import annotations

import click

from sizing.cli.common import UserError
from sizing.validate import SizingError, require_choice

TRAINING_EMITS: tuple[str, ...] = ("torchtitan", "megatron", "deepspeed")
SERVING_EMITS: tuple[str, ...] = ("vllm", "sglang", "trtllm")


def answer_plan(plan, fmt: str, emit: str | None, out: str | None) -> None:
    """Print the plan (render_parallel_plan), or emit it as a trainer's file."""
    from sizing.render import render_parallel_plan

    if emit is None:
        if out is not None:
            raise UserError("--out applies to --emit (e.g. --emit torchtitan --out train.toml)")
        click.echo(render_parallel_plan(plan, fmt))
        return
    from sizing.frameworks import emit_training

    try:
        text = emit_training(plan, emit)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    _write(text, out, render_parallel_plan(plan, fmt))


def answer_serving(text_of_answer: str, emit: str | None, out: str | None, make) -> None:
    """Print a serving answer, or emit `make(emit)` (the engine's command line)."""
    if emit is None:
        if out is not None:
            raise UserError("--out applies to --emit (e.g. --emit vllm --out serve.sh)")
        click.echo(text_of_answer)
        return
    try:
        text = make(emit)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    _write(text, out, text_of_answer)


def _write(text: str, out: str | None, answer: str) -> None:
    """The emitted file to --out (atomically; the answer is printed), or to stdout alone."""
    if out is None:
        click.echo(text, nl=False)
        return
    from pathlib import Path

    from sizing.report import write_bytes_atomic

    try:
        write_bytes_atomic(Path(out), text.encode("utf-8"))
    except OSError as exc:
        raise UserError(f"--out {out}: cannot be written ({exc.strerror or exc})") from None
    click.echo(answer.rstrip("\n"))
    click.echo(f"wrote {out}")


def lora_options(lora_base: str | None, lora_trained: str | None) -> dict:
    """ParallelLayout fields of --lora-base and --lora-trained embedding,lm_head."""
    from sizing.parallel import LORA_TRAINED_MODULES

    fields: dict = {}
    if lora_base is not None:
        fields["lora_base"] = lora_base
    if lora_trained is not None:
        names = tuple(dict.fromkeys(t.strip() for t in lora_trained.split(",") if t.strip()))
        try:
            fields["lora_trained"] = tuple(require_choice("--lora-trained", n, LORA_TRAINED_MODULES) for n in names)
        except SizingError as exc:
            raise UserError(str(exc)) from None
        if not names:
            raise UserError(f"--lora-trained ({lora_trained!r}) must name modules: {', '.join(LORA_TRAINED_MODULES)}")
    return fields


def model_id(model, config_path: str | None) -> str:
    """What an engine loads: the preset's hub id, else the --config path or hub id."""
    if model.preset is not None and model.preset.hf_id:
        return model.preset.hf_id
    if config_path:
        return config_path
    raise UserError(f"--emit: {model.name} has no hub id to serve; give --config with its hub id or path")


def serving_plan_of_estimate(model, config_path, result, prefix_caching):
    """The engine settings of one `sizing serve` answer (a static batch of `batch` sequences)."""
    from sizing.frameworks import ServingPlan

    s = result.settings
    summary = (
        f"{result.model} on {s.gpus} x {result.gpu.key}: tp {s.tp}, {s.gpus // s.tp} replica(s), batch {s.batch}, "
        f"prompt {s.prompt} + output {s.output}, weights {s.weight_dtype}, KV {s.kv_dtype}",
        f"fits: {result.fits}; time to first token {result.ttft_seconds * 1e3:.0f} ms, "
        f"{result.tpot_seconds * 1e3:.1f} ms per output token",
    )
    return ServingPlan(model_id(model, config_path), summary, s.tp, 1, s.gpus // s.tp, s.prompt + s.output,
                       s.batch, s.weight_dtype, s.kv_dtype, prefix_caching=prefix_caching)  # fmt: skip


def serving_plan_of_capacity(model, config_path, plan, prefix_caching):
    """The engine settings of the capacity plan's best row: replicas of (tp, pp); the most sequences
    a replica admits is twice the mean it decodes at this load (E[N] of the Poisson steady state),
    room for the load's peaks, said in the header."""
    import math

    from sizing.frameworks import ServingPlan

    best = plan.best
    if best is None or best.load is None:
        raise UserError("--emit: no layout serves this rate within the bounds; nothing to launch")
    mean = best.load.state.decoding
    seqs = max(1, math.ceil(2 * mean))
    cost = best.usd_per_million_output_tokens
    summary = (
        f"{plan.model} at {plan.rate:g} requests/s on {plan.gpu}: {best.replicas} replica(s) of tp {best.tp} x pp "
        f"{best.pp} ({best.gpus} GPUs), weights {best.weight_dtype}, KV {best.kv_dtype}",
        f"max sequences {seqs} = 2 x the mean decoding E[N] = {mean:.1f} per replica at this load"
        + (f"; ${cost:.2f} per million output tokens" if cost is not None else ""),
    )
    return ServingPlan(model_id(model, config_path), summary, best.tp, best.pp, best.replicas,
                       math.ceil(plan.prompt + plan.output), seqs, best.weight_dtype, best.kv_dtype,
                       prefix_caching=prefix_caching)  # fmt: skip
