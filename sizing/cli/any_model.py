"""One door for every architecture: the commands that size one model (`estimate`, `memory`) take a
hybrid, a vision-language model or any model_type transformers knows, as a preset or a config,
directly. A stack of identical attention + MLP blocks (every model_type sizing.inputs.hf reads)
keeps its own path (None here); a hybrid or vision-language config or preset is sized by
sizing.whole from sizing.hybrid and sizing.vision; any other model_type is counted by
transformers on the meta device (hf_meta, the `hf` extra), labelled so on every output.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass

import click

from sizing.cli.common import UserError
from sizing.validate import SizingError


def answers_whole_models(handler):
    """A command decorator: a preset or config that is not a stack of attention + MLP blocks (whole_source)
    goes to `handler(command, source, run_remote_code, kwargs)`; a stack to the command itself, which
    never sees --run-remote-code (the option layer declares it: spec_table.py)."""

    def wrap(command):
        @functools.wraps(command)
        def answer(*args, **kwargs):
            run_remote_code = kwargs.pop("run_remote_code", False)
            source = whole_source(kwargs.get("preset"), kwargs.get("config_path"), kwargs.get("overrides") or ())
            if source is None:
                return command(*args, **kwargs)
            kwargs.pop("verdict_only", None)  # the UI's fits-on switch: a whole model answers in full
            return handler(command, source, run_remote_code, kwargs)

        return answer

    return wrap


@dataclass(frozen=True)
class WholeSource:
    data: dict  # the parsed HF config
    name: str
    where: str | None  # the file, folder or hub id (a remote-code model's code lives there)
    kind: str  # sizing.whole.config_kind: hybrid, vision-language or transformers
    refusal: str | None = None  # why this tool's own reader refused it, when it fell to transformers


def _stack_preset(name: str) -> bool:
    """Whether `name` is a preset of the stack table (sizing.inputs): those never need sizing.whole,
    whose readers (hybrid, vision) cost ~40 ms to import, most of a command's start-up."""
    from sizing.inputs import get_preset

    try:
        get_preset(name)
    except KeyError:
        return False
    return True


def whole_source(preset: str | None, config_path: str | None, overrides: tuple[str, ...]) -> WholeSource | None:
    """The config of a model sizing.formulas does not size as one stack; None for a stack."""
    if preset and config_path:
        raise UserError("give either --preset or --config, not both")
    if preset and _stack_preset(preset):  # no name is both (tests/test_startup_path.py): skip sizing.whole
        return None
    from sizing.whole import config_kind, native_refusal, whole_preset_config

    if preset:
        data, name, where = whole_preset_config(preset.strip().lower()), preset, None
        if data is None:
            return None
    elif config_path:
        from sizing.inputs.hf import _read_json_object

        try:
            data = _read_json_object(config_path)
        except SizingError as exc:
            raise UserError(str(exc)) from None
        if "model_type" not in data:  # this tool's own JSON, or an HF file without its type: the stack
            return None  # reader reads the one and refuses the other, naming what to add
        name, where = config_path, config_path
    else:
        return None
    kind = config_kind(data)
    try:
        refusal = native_refusal(data, kind) if kind != "transformers" else None
    except SizingError as exc:  # bad input, not a part the formulas lack: the reader's own error
        if kind is None:
            return None  # the stack path reports it, naming the file
        raise UserError(str(exc)) from None
    if kind is None and refusal is None:
        return None
    if refusal is not None and overrides:
        raise UserError(refusal)  # --set may be what makes the stack's reader refuse: say so, do not guess
    if refusal is not None:
        kind = "transformers"
    if overrides:
        raise UserError(
            f"--set applies to attention + MLP stacks; {name} is a {kind} model: edit its config.json instead"
        )
    return WholeSource(data, name, where, kind, refusal)


def whole_model(
    source: WholeSource, seq_len: int | None, attention: str, run_remote_code: bool = False, activations: bool = True
):
    """The WholeModel of `source` at seq_len (default: the context its config states)."""
    from sizing.whole import default_context, native_whole_model

    try:
        if seq_len is None:
            seq_len, where = default_context(source.data, source.name)
        else:
            where = "--seq-len"
        if source.kind != "transformers":
            return native_whole_model(source.data, source.name, seq_len, attention, where)
        from hf_meta import measure_whole_model

        model = measure_whole_model(
            source.data, source.name, seq_len, source.where, run_remote_code, where, activations
        )
    except SizingError as exc:
        raise UserError(str(exc) if source.refusal is None else f"{source.refusal}; and {exc}") from None
    if source.refusal is not None:
        model = dataclasses.replace(model, notes=(*model.notes, f"this tool's own reader refused it: {source.refusal}"))
    return with_mtp_note(source.data, model)


def with_mtp_note(data: dict, model):
    """A transformers-counted model whose config states multi-token-prediction modules: whether
    transformers built them (their parameters, in the total) or not (in no number), said."""
    from sizing.inputs.hf import mtp_modules

    text = data.get("text_config") if isinstance(data.get("text_config"), dict) else data
    try:
        depth = mtp_modules(text)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    if not depth:
        return model
    built = sum(n for key, n in model.params.items() if re.search(r"(^|\.)(mtp|nextn)", key))
    note = f"the config states {depth} multi-token-prediction module(s) (num_nextn_predict_layers): " + (
        f"transformers built them ({built:,} parameters, in the total)"
        if built
        else "transformers builds none, so they are in no number here"
    )
    details = {**model.details, "mtp_modules": depth, "mtp_params_built": built}
    return dataclasses.replace(model, notes=(*model.notes, note), details=details)


# `sizing memory` options that size a stack by its formulas only (they have no meaning for a model
# counted whole): refused when given, never ignored
_STACK_ONLY = {
    "--recompute": ("recompute", "none"),
    "--attention-impl": ("attention_impl", "flash"),
    "--finetune": ("finetune", None),
    "--lora-rank": ("lora_rank", None),
    "--lora-targets": ("lora_targets", None),
    "--quant": ("quant", None),
    "--engine": ("engine", None),
    "--prefill-chunk": ("prefill_chunk", None),
    "--tp": ("tp", None),
    "--gpu-memory-utilization": ("utilization", None),
    "--max-num-batched-tokens": ("max_num_batched_tokens", None),
}


def memory_of_whole_model(command, source: WholeSource, run_remote_code: bool, kwargs: dict):
    """`sizing memory` of a whole model: its training memory; its inference memory (a hybrid's or VLM's
    by their own routes, sizing/cli/memory_other.py; Gemma 3n's and transformers-counted models' from
    the WholeModel)."""
    inference, fmt = kwargs["inference"], kwargs["fmt"]
    if inference and source.kind in ("hybrid", "vision-language"):
        from sizing.cli.memory_other import other_inference

        return other_inference(source, kwargs)
    options = {k: v for k, v in kwargs.items() if k not in ("preset", "config_path", "overrides", "inference", "fmt")}
    if not whole_memory(source, inference, fmt, run_remote_code, **options):
        raise SystemExit(3)  # sizing memory's "does not fit"


def whole_memory(source: WholeSource, inference: bool, fmt: str, run_remote_code: bool, **options) -> bool:
    """`sizing memory` of a WholeSource: training (model states + activations) or inference (weights +
    KV cache + state); prints it and returns False when it does not fit (unknown: True, said in the output)."""
    from sizing.inputs import default_gpu_for, get_gpu
    from sizing.render import render_whole_memory
    from sizing.whole import whole_inference_memory, whole_training_memory

    given = [flag for flag, (key, default) in _STACK_ONLY.items() if options.get(key, default) not in (default, None)]
    if given:
        raise UserError(f"{', '.join(given)} apply to attention + MLP stacks sized by formula, not to {source.name}")
    length = (options.get("context") if inference else None) or options.get("seq_len")
    model = whole_model(source, length, "full", run_remote_code, activations=not inference)
    reserve = None if options.get("reserve_gib") is None else int(options["reserve_gib"] * 2**30)
    try:
        gpu = get_gpu(options.get("gpu") or default_gpu_for(None)).key
        if inference:
            dtypes = {
                "weight_dtype": options.get("weight_dtype") or "bf16",
                "kv_dtype": options.get("kv_dtype") or "bf16",
            }
            memory = whole_inference_memory(model, gpu, options.get("batch") or 1, reserve_bytes=reserve, **dtypes)
        else:
            layout = {k: options[k] for k in ("precision", "optimizer", "zero", "dp")}
            memory = whole_training_memory(model, gpu, options.get("micro_batch") or 1, reserve_bytes=reserve, **layout)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_whole_memory(model, memory, fmt).rstrip("\n"))
    return memory["fits"] is not False  # unknown (a part not modelled) is said, not an exit 3


def whole_estimate(source: WholeSource, run_remote_code: bool, kwargs: dict) -> None:
    """`sizing estimate` of a hybrid, a vision-language model or a model counted by transformers."""
    from sizing.inputs import default_gpu_for, get_gpu
    from sizing.render import render_whole_estimate
    from sizing.training import TrainingRun
    from sizing.vocabulary import DEFAULT_MFU
    from sizing.whole import WholeEstimate

    stack_only = {"--recompute": kwargs.get("recompute") not in (None, "none"), "--power": kwargs.get("power_watts")}
    stack_only |= {"--grid-intensity": kwargs.get("grid_kg_co2_per_kwh"), "--calibration": kwargs.get("calibration")}
    named = [flag for flag, value in stack_only.items() if value]
    if named:
        raise UserError(f"{', '.join(named)} apply to attention + MLP stacks sized by formula, not to {source.name}")
    model = whole_model(source, kwargs.get("seq_len"), kwargs.get("attention") or "full", run_remote_code)
    try:
        gpu = get_gpu(kwargs.get("gpu") or default_gpu_for(None)).key
        training = None
        if kwargs.get("tokens") is not None:
            training = TrainingRun(
                tokens=kwargs["tokens"],
                gpu=gpu,
                dtype=kwargs.get("dtype"),
                mfu=kwargs.get("mfu") or DEFAULT_MFU,
                num_gpus=kwargs.get("num_gpus") or 1,
                price_per_gpu_hour=kwargs.get("price"),
            )
        est = WholeEstimate(model, training, gpu if kwargs.get("with_memory", True) else None)
        click.echo(render_whole_estimate(est, kwargs.get("fmt", "table")), nl=False)
    except SizingError as exc:
        raise UserError(str(exc)) from None
