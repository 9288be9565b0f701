"""`sizing memory`: training memory per GPU, or inference memory, and whether it fits.

Exit codes: 0 it fits, or training is "tight" (within the allocator's band either side of the
GPU's capacity: sizing.memory.verdict); 3 it clearly does not fit (the full report is still
printed, JSON has "verdict": "does not fit", "fits": false and a null max batch); 2 bad input
(one 'Error: ...' line on stderr).
"""

from __future__ import annotations

import click
from click.core import ParameterSource

from sizing.cli.any_model import answers_whole_models, memory_of_whole_model
from sizing.cli.common import UserError, resolve_model
from sizing.cli.from_file import with_file
from sizing.cli.memory_options import (
    engine_options,
    gpu_and_finetune_options,
    inference_options,
    tp_option,
    training_options,
)
from sizing.cli.memory_other import refuse_given as _refuse_given
from sizing.cli.option_layer import model_options, option
from sizing.inputs import GIB, default_gpu_for, get_gpu
from sizing.memory import EngineRun, inference_memory, training_memory
from sizing.render import render_memory
from sizing.validate import SizingError
from sizing.vocabulary import DEFAULT_FINETUNE_SEQ_LEN

EXIT_DOES_NOT_FIT = 3


@click.command()
@with_file
@model_options
@training_options
@gpu_and_finetune_options
@inference_options
@engine_options
@tp_option
@option("run_remote_code")
@option("format")
@option("verdict_only")
@answers_whole_models(memory_of_whole_model)  # a hybrid, vision-language or transformers-counted model
def memory(preset, config_path, overrides, inference, fmt, verdict_only, **options):
    """Training memory per GPU (or inference memory) and the largest batch that fits.

    Training: weights + gradients + optimizer states (sharded by ZeRO over --dp) +
    activations saved for backward + the logits' working set. Inference: weights + KV cache
    (2 x layers x kv heads x head_dim x bytes x context x batch; a sliding window caps the
    context) + the prefill activation peak (one forward over --prefill-chunk tokens). Exit
    code 0 when it fits or training is tight (within the allocator's band), 3 when it clearly
    does not fit (the report says what would), 2 on bad input.

    \b
    Example:
      sizing memory --preset llama2-7b --gpu h100 --zero 3 --dp 8 --micro-batch 4
      sizing memory --preset llama2-7b --recompute full --attention-impl math --format json
      sizing memory --preset llama2-70b --inference --context 4096 --batch 8 --weight-dtype int4
      sizing memory --preset gpt-oss-120b --inference --quant mxfp4-experts --gpu h100
      sizing memory --preset llama3-8b --inference --engine vllm --gpu-memory-utilization 0.9 --context 8192
      sizing memory --preset llama3-70b --inference --context 8192 --batch 16 --tp 8
      sizing memory --preset llama3-8b --gpu rtx4090 --finetune qlora --lora-rank 16
    """
    _refuse_given({"--images": options["images"], "--image-size": options["image_size"]}, "to a vision-language preset")
    model = resolve_model(preset, config_path, overrides)
    default_len = _default_len(
        model, config_path, inference, options["seq_len"], options["context"], options["finetune"]
    )
    gpu_key = _gpu_key(model, options["gpu"])
    _check_mode_options(inference, **options)
    reserve = _runtime_reserve(options["reserve_gib"], 1 if options["dp"] > 1 and not inference else 0)
    if (
        options["seq_len"] is None
        and options["finetune"] is not None
        and not inference
        and fmt in ("table", "markdown")
    ):
        click.echo(
            f"T = {default_len:,}: the fine-tuning default (axolotl's and NeMo's SFT recipes; --seq-len to change)"
        )
    if _answered_as_finetune(model, default_len, fmt, gpu_key, reserve, **options):
        return
    try:  # the API checks what the option types cannot (e.g. a config's own limits): one line, exit 2
        answer = _inference if inference else _training
        result = answer(model, default_len, gpu_key, reserve, fmt, advice=not verdict_only, **options)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    if result is None:  # --engine: its split is printed
        return
    click.echo(render_memory(result, fmt, details=True).rstrip("\n"))
    if not _may_fit(result):
        raise SystemExit(EXIT_DOES_NOT_FIT)


def _may_fit(result) -> bool:
    """Training: anything but a clear "does not fit" (fits or tight); inference: it fits."""
    verdict = getattr(result, "memory_verdict", None)
    return verdict.may_fit if verdict is not None else result.fits


def _default_len(model, config_path: str | None, inference: bool, seq_len, context, finetune=None) -> int | None:
    """--seq-len, else the preset's or the config file's context; one of them is needed unless
    --inference gives --context."""
    if seq_len is None and finetune is not None and not inference:  # a fine-tune is sized at a fine-tuning context
        return DEFAULT_FINETUNE_SEQ_LEN
    default_len = seq_len or (model.preset.context if model.preset else _file_context(config_path, inference))
    if default_len is None and (context is None or not inference):
        needed = "--context" if inference else "--seq-len"
        raise UserError(f"{needed} is needed for a model that is not a preset (e.g. {needed} 4096)")
    return default_len


def _gpu_key(model, gpu: str | None) -> str:
    """--gpu, else the preset's published run's GPU (sizing.inputs.default_gpu), as its table key."""
    try:
        return get_gpu(gpu or default_gpu_for(model.preset.name if model.preset else None)).key
    except SizingError as exc:
        raise UserError(str(exc)) from None


def _check_mode_options(
    inference: bool,
    *,
    seq_len,
    micro_batch,
    zero: int,
    dp: int,
    finetune,
    lora_rank,
    lora_targets,
    context,
    batch,
    weight_dtype,
    kv_dtype,
    prefill_chunk,
    quant,
    engine,
    utilization,
    max_num_batched_tokens,
    max_num_seqs,
    tp,
    **_,
) -> None:
    """The options of the other mode (training or inference) are errors, one line naming them."""
    engine_settings = {"--max-num-batched-tokens": max_num_batched_tokens, "--max-num-seqs": max_num_seqs}
    _check_deployed_options(inference, weight_dtype, quant, engine, utilization, engine_settings, tp)
    if inference:
        _refuse_training_options(seq_len if context is not None else None, micro_batch, zero, dp)
        _refuse_given({"--finetune": finetune, "--lora-rank": lora_rank, "--lora-targets": lora_targets}, "to training")
    else:
        _refuse_inference_options(context, batch, weight_dtype, kv_dtype, prefill_chunk)
        _refuse_given({"--tp": tp}, "to inference: add --inference (training layouts: `sizing parallel --tp`)")


def _answered_as_finetune(
    model, default_len: int, fmt: str, gpu_key: str, reserve, *, finetune, lora_rank, lora_targets, **options
) -> bool:
    """--finetune lora or qlora (or their options): that plan is printed (memory_finetune.py)
    and True; --finetune full or none: False, the ordinary answer follows."""
    extras = ("lora_base", "lora_trained", "cross_entropy", "selective", "offload_params")
    if finetune is None and lora_rank is None and lora_targets is None and not any(options[k] for k in extras):
        return False
    from sizing.cli.memory_finetune import finetune_memory

    adapters = dict(finetune=finetune, lora_rank=lora_rank, lora_targets=lora_targets)
    adapters |= {k: options[k] for k in extras}
    work = {k: options[k] for k in ("precision", "optimizer", "recompute", "attention_impl")}
    layout = dict(micro_batch=options["micro_batch"] or 1, zero=options["zero"], dp=options["dp"])
    return finetune_memory(model, default_len, fmt, **adapters, **work, **layout, gpu=gpu_key, reserve=reserve)


def _training(
    model,
    default_len: int,
    gpu_key: str,
    reserve,
    fmt: str,
    *,
    micro_batch,
    precision: str,
    optimizer: str,
    zero: int,
    dp: int,
    recompute: str,
    attention_impl: str,
    advice: bool = True,
    **_,
):
    """Training memory per GPU; when it does not fit (and `advice`), the parallel layouts that would."""
    model.config.check_context(default_len, "--seq-len")
    result = training_memory(
        model.config,
        default_len,
        micro_batch or 1,
        precision,
        optimizer,
        zero,
        dp,
        recompute,
        attention_impl,
        gpu_key,
        name=model.name,
        runtime_reserve=reserve,
    )
    if not result.fits and advice:
        result = _with_parallel_advice(result, model.config, dp, micro_batch or 1, gpu_key)
    return result


def _inference(
    model,
    default_len: int | None,
    gpu_key: str,
    reserve,
    fmt: str,
    *,
    context,
    batch,
    weight_dtype,
    kv_dtype,
    prefill_chunk,
    quant,
    tp,
    engine,
    utilization,
    max_num_batched_tokens,
    max_num_seqs,
    **_,
):
    """Inference memory (weights + KV cache + prefill peak); with --engine its split is printed
    instead and None returned."""
    model.config.check_context(context or default_len, "--context" if context else "--seq-len")
    result = inference_memory(
        model.config,
        context or default_len,
        batch or 1,
        weight_dtype or "bf16",
        kv_dtype or "bf16",
        gpu_key,
        name=model.name,
        prefill_chunk=prefill_chunk,
        quant=quant,
        tp=tp or 1,
        runtime_reserve=reserve,
    )
    if engine is None:
        return result
    run = EngineRun(engine, utilization, max_num_batched_tokens, max_num_seqs)
    _echo_engine(result, model, run, tp or 1, fmt)
    return None


def _check_deployed_options(inference, weight_dtype, quant, engine, utilization, engine_settings: dict, tp) -> None:
    """--quant and --engine apply to inference; --quant replaces --weight-dtype; the engine's options need --engine."""
    if not inference:
        _refuse_given(
            {"--quant": quant, "--engine": engine, "--gpu-memory-utilization": utilization, "--tp": tp}
            | engine_settings,
            "to inference: add --inference",
        )
    if quant is not None and weight_dtype is not None:
        raise UserError(f"--quant {quant} names the weight format; leave out --weight-dtype {weight_dtype}")
    if engine is None:
        _refuse_given({"--gpu-memory-utilization": utilization} | engine_settings, "with --engine (e.g. --engine vllm)")


def _echo_engine(result, model, run, tp: int, fmt: str) -> None:
    """The engine's split of the GPU (sizing/memory/engine.py): one rank's weights as the engine
    allocates them, its profiling run, the KV blocks; exit 3 when the engine would not start."""
    from sizing.memory import engine_memory_for
    from sizing.render import render_engine

    positions = model.preset.serving_context if model.preset else None
    weights = result.quant or result.weight_dtype
    e = engine_memory_for(result.config, weights, result.context, result.gpu, run, result.kv_dtype, tp, positions)
    click.echo(render_engine(e, fmt, weights).rstrip("\n"))
    if not e.fits:
        raise SystemExit(EXIT_DOES_NOT_FIT)


def _runtime_reserve(reserve_gib: float | None, communicators: int):
    """--runtime-reserve as given, else the CUDA context + NCCL estimate (sizing.memory.runtime)."""
    from sizing.memory import default_runtime_reserve, given_runtime_reserve

    if reserve_gib is None:
        return default_runtime_reserve(communicators)
    return given_runtime_reserve(round(reserve_gib * GIB))


def _file_context(config_path: str | None, inference: bool) -> int | None:
    """A config file's default context (sizing.inputs.hf.context): the pretraining context for
    training, max_position_embeddings (what it serves) for inference."""
    if config_path is None:
        return None
    from sizing.inputs.hf import read_config_file

    read = read_config_file(config_path)
    return read.served_context if inference else read.context


def _refuse_training_options(seq_len, micro_batch, zero: int, dp: int) -> None:
    """With --inference, the training options are errors; those with a default are refused
    when the user typed them, whatever the value."""
    ctx = click.get_current_context()
    typed = {
        f"--{name.replace('_', '-')}": True
        for name in ("precision", "optimizer", "recompute", "attention_impl")
        if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None)
    }
    _refuse_given(
        {"--seq-len": seq_len, "--micro-batch": micro_batch, "--zero": zero or None, "--dp": dp if dp != 1 else None}
        | typed,
        "to training; with --inference use --batch, --context, --weight-dtype and --kv-dtype",
    )


def _refuse_inference_options(context, batch, weight_dtype, kv_dtype, prefill_chunk) -> None:
    """Without --inference, the inference options are errors. ZeRO over one rank (--dp 1) is
    accepted, as `sizing parallel` and training_memory() accept it: it shards nothing (DeepSpeed
    runs ZeRO on one GPU, e.g. with CPU offload)."""
    _refuse_given(
        {
            "--context": context,
            "--batch": batch,
            "--weight-dtype": weight_dtype,
            "--kv-dtype": kv_dtype,
            "--prefill-chunk": prefill_chunk,
        },
        "to inference: add --inference (training uses --micro-batch and --seq-len)",
    )


def _with_parallel_advice(result, cfg, dp: int, micro_batch: int, gpu_key: str):
    """The would-fit list, with "how many GPUs" answered once, by the search `sizing parallel`
    runs (sizing.parallel.min_gpus), in place of the ZeRO-3-only count; plus what fits on the
    same dp GPUs: a tp/pp/cp layout, CPU offload, LoRA, QLoRA (each the fastest that fits)."""
    import dataclasses

    from sizing.inputs import Workload
    from sizing.parallel import LAYOUT_ALTERNATIVES, min_gpus_hint, min_gpus_that_fit, search_layout, would_fit

    work = Workload(
        result.seq_len,
        precision=result.precision,
        optimizer=result.optimizer,
        recompute=None,  # the search tries none, selective and full
        attention_impl=result.attention_impl,
        global_batch=dp * micro_batch,
        gpus=dp,
    )
    found = []
    best = search_layout(cfg, work, gpu=gpu_key).best
    if best is not None:
        found.append(("a parallel layout", best))
    found += [(w, p) for w, p in would_fit(cfg, work, more_gpus=False, gpu=gpu_key) if w in LAYOUT_ALTERNATIVES]
    hints = tuple(
        f"{what} on {dp} GPU{'s' if dp > 1 else ''}: {p.layout.label()}, recompute {p.work.recompute}, "
        f"{p.per_gpu_bytes / GIB:.2f} GiB per GPU (sizing parallel)"
        for what, p in found
    )
    fewest = min_gpus_that_fit(cfg, work.with_(global_batch=None), gpu=gpu_key)
    own = tuple(w for w in result.would_fit if not _is_gpu_count(w))
    first = (min_gpus_hint(fewest),) if fewest is not None and fewest.layout.world > dp else ()
    return dataclasses.replace(result, would_fit=first + own + hints)


def _is_gpu_count(hint: str) -> bool:
    """sizing.memory's own "fewest ZeRO-3 ranks" hints, which min_gpus_that_fit answers instead."""
    return hint.startswith(("ZeRO-3 over at least", "recompute full and ZeRO-3 over at least"))
