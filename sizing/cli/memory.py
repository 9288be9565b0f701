"""`sizing memory`: training memory per GPU, or inference memory, and whether it fits.

Exit codes: 0 it fits; 3 it does not fit (the full report is still printed, JSON has
"fits": false and a null max batch); 2 bad input (one 'Error: ...' line on stderr).
"""

from __future__ import annotations

import click
from click.core import ParameterSource

from ..default_gpu import default_gpu_for
from ..hardware import get_gpu
from ..memory import OPTIMIZER_ALIASES, OPTIMIZERS, ZERO_STAGES, inference_memory, training_memory
from ..memory.engine import ENGINES
from ..memory.quant import FORMATS as QUANT_FORMATS
from ..parallel.layout import FINETUNE_MODES
from ..render.memory import render_memory
from ..units import GIB
from ..validate import MAX_SEQ_LEN, SizingError
from ..vocabulary import (
    ATTENTION_IMPL_ALIASES,
    ATTENTION_IMPLS,
    DEFAULT_ATTENTION_IMPL,
    DEFAULT_OPTIMIZER,
    DEFAULT_PRECISION,
    DEFAULT_RECOMPUTE,
    DTYPE_BITS,
    PRECISION_ALIASES,
    PRECISION_POLICIES,
    RECOMPUTE_MODES,
)
from .common import FORMATS, UserError, model_options, resolve_model
from .options import Choice, Count, Number

EXIT_DOES_NOT_FIT = 3


_SEQ_LEN = Count("--seq-len", maximum=MAX_SEQ_LEN)
_CONTEXT = Count("--context", maximum=MAX_SEQ_LEN)
_PRECISION = Choice("--precision", PRECISION_POLICIES, PRECISION_ALIASES)  # mixed = bf16-mixed
_OPTIMIZER = Choice("--optimizer", OPTIMIZERS, OPTIMIZER_ALIASES)  # adam = adamw
_ATTENTION_IMPL = Choice("--attention-impl", ATTENTION_IMPLS, ATTENTION_IMPL_ALIASES)  # sdpa = flash


@click.command()
@model_options
@click.option("--seq-len", "-T", type=_SEQ_LEN, help="Tokens per sequence (default: the preset's context).")
@click.option("--micro-batch", "-b", type=Count("--micro-batch"), help="Sequences per GPU per step.  [default: 1]")
@click.option(
    "--precision",
    type=_PRECISION,
    default=DEFAULT_PRECISION,
    show_default=True,
    help="fp32; bf16-mixed / fp16-mixed (16-bit weights and grads, fp32 master + states: 16 B/param "
    "with AdamW); bf16 (pure, no master copy).",
)
@click.option(
    "--optimizer",
    type=_OPTIMIZER,
    default=DEFAULT_OPTIMIZER,
    show_default=True,
    help="adamw (m, v); sgd (momentum); adam8bit (bitsandbytes block-wise 8-bit m, v).",
)
@click.option(
    "--zero",
    type=Choice("--zero", ZERO_STAGES),
    default=0,
    show_default=True,
    help="ZeRO stage over --dp: 1 shards optimizer states, 2 + gradients, 3 + weights (FSDP FULL_SHARD).",
)
@click.option(
    "--dp", type=Count("--dp"), default=1, show_default=True, help="Data-parallel degree (ZeRO shards over it)."
)
@click.option(
    "--recompute",
    type=Choice("--recompute", RECOMPUTE_MODES),
    default=DEFAULT_RECOMPUTE,
    show_default=True,
    help="Activation recomputation: selective (attention core) or full (each block keeps its input).",
)
@click.option(
    "--attention-impl",
    "attention_impl",
    type=_ATTENTION_IMPL,
    default=DEFAULT_ATTENTION_IMPL,
    show_default=True,
    help="math materialises the T x T scores and probabilities; flash (= sdpa) is a fused kernel.",
)
@click.option("--gpu", help="GPU name (see `sizing gpus`).  [default: h100-sxm, or the preset's published run's GPU]")
@click.option(
    "--finetune",
    type=Choice("--finetune", FINETUNE_MODES),
    help="Training: full (every weight trains), lora or qlora (frozen bf16 / NF4 base, adapters train).  "
    "[default: full]",
)
@click.option("--lora-rank", type=Count("--lora-rank"), help="LoRA / QLoRA rank r.  [default: 16]")
@click.option(
    "--lora-targets", metavar="q,k,v,o,up,gate,down", help="Projections with adapters.  [default: all linears]"
)
@click.option(
    "--runtime-reserve",
    "reserve_gib",
    type=Number("--runtime-reserve", 0, 1024, exclusive_minimum=False, what="GiB in [0, 1024]"),
    metavar="GiB",
    help="Memory the process holds beyond its tensors (CUDA context, NCCL, allocator), taken off the GPU "
    "before the fit.  [default: 0.5 GiB CUDA context + 0.25 GiB NCCL with --dp > 1; docs/memory.md]",
)
@click.option("--inference", is_flag=True, help="Inference memory (weights + KV cache) instead of training.")
@click.option(
    "--context",
    "-C",
    type=_CONTEXT,
    help="Inference: tokens in the KV cache per sequence (default: --seq-len or the preset's context).",
)
@click.option("--batch", type=Count("--batch"), help="Inference: sequences decoded together.  [default: 1]")
@click.option(
    "--weight-dtype", type=Choice("--weight-dtype", DTYPE_BITS), help="Inference: weight dtype.  [default: bf16]"
)
@click.option("--kv-dtype", type=Choice("--kv-dtype", DTYPE_BITS), help="Inference: KV cache dtype.  [default: bf16]")
@click.option(
    "--prefill-chunk",
    type=Count("--prefill-chunk", maximum=MAX_SEQ_LEN),
    help="Inference: tokens per prefill forward (chunked prefill; up to batch x context for a batch "
    "prefilled at once).  [default: one sequence's context]",
)
@click.option(
    "--quant",
    type=Choice("--quant", QUANT_FORMATS),
    help="Inference: a deployed weight format (GPTQ/AWQ, MXFP4, NVFP4, fp8, GGUF) with its real bits per "
    "weight and 16-bit tensors, instead of --weight-dtype.",
)
@click.option("--engine", type=Choice("--engine", ENGINES), help="Inference: the engine's own split (vllm, sglang).")
@click.option(
    "--gpu-memory-utilization",
    "--mem-fraction-static",
    "utilization",
    type=Number("--gpu-memory-utilization", 0, 1, what="a number in (0, 1]"),
    help="With --engine: the GPU share the engine takes.  [default: vllm 0.9, sglang 0.88]",
)
@click.option(
    "--max-num-batched-tokens",
    type=Count("--max-num-batched-tokens", maximum=MAX_SEQ_LEN),
    help="With --engine vllm: tokens of the profiling forward.  [default: 8192]",
)
# ---- i25: inference under tensor parallelism
@click.option(
    "--tp",
    type=Count("--tp"),
    help="Inference: tensor-parallel GPUs; memory per GPU (weights / tp, its KV heads).  [default: 1]",
)
@click.option("--format", "fmt", type=Choice("--format", FORMATS), default="table", show_default=True)
def memory(
    preset,
    config_path,
    overrides,
    seq_len,
    micro_batch,
    precision,
    optimizer,
    zero,
    dp,
    recompute,
    attention_impl,
    gpu,
    finetune,
    lora_rank,
    lora_targets,
    reserve_gib,
    inference,
    context,
    batch,
    weight_dtype,
    kv_dtype,
    prefill_chunk,
    quant,
    engine,
    utilization,
    max_num_batched_tokens,
    tp,
    fmt,
):
    """Training memory per GPU (or inference memory) and the largest batch that fits.

    Training: weights + gradients + optimizer states (sharded by ZeRO over --dp) +
    activations saved for backward + the logits' working set. Inference: weights + KV cache
    (2 x layers x kv heads x head_dim x bytes x context x batch; a sliding window caps the
    context) + the prefill activation peak (one forward over --prefill-chunk tokens). Exit
    code 0 when it fits, 3 when it does not (the report says what would), 2 on bad input.

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
    model = resolve_model(preset, config_path, overrides)
    default_len = seq_len or (model.preset.context if model.preset else _file_context(config_path, inference))
    if default_len is None and (context is None or not inference):
        needed = "--context" if inference else "--seq-len"
        raise UserError(f"{needed} is needed for a model that is not a preset (e.g. {needed} 4096)")
    try:
        gpu_key = get_gpu(gpu or default_gpu_for(model.preset.name if model.preset else None)).key
    except SizingError as exc:
        raise UserError(str(exc)) from None
    _check_deployed_options(inference, weight_dtype, quant, engine, utilization, max_num_batched_tokens, tp)
    if inference:
        _refuse_training_options(seq_len if context is not None else None, micro_batch, zero, dp)
        _refuse_given({"--finetune": finetune, "--lora-rank": lora_rank, "--lora-targets": lora_targets}, "to training")
    else:
        _refuse_inference_options(context, batch, weight_dtype, kv_dtype, prefill_chunk, zero, dp)
        _refuse_given({"--tp": tp}, "to inference: add --inference (training layouts: `sizing parallel --tp`)")
    reserve = _runtime_reserve(reserve_gib, 1 if dp > 1 and not inference else 0)
    if finetune is not None or lora_rank is not None or lora_targets is not None:
        from .memory_finetune import finetune_memory

        adapters = dict(finetune=finetune, lora_rank=lora_rank, lora_targets=lora_targets)
        work = dict(precision=precision, optimizer=optimizer, recompute=recompute, attention_impl=attention_impl)
        layout = dict(micro_batch=micro_batch or 1, zero=zero, dp=dp, gpu=gpu_key, reserve=reserve)
        if finetune_memory(model, default_len, fmt, **adapters, **work, **layout):
            return
    try:  # the API checks what the option types cannot (e.g. a config's own limits): one line, exit 2
        if inference:
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
            if engine is not None:
                _echo_engine(result, engine, utilization, max_num_batched_tokens, tp, fmt)
                return
        else:
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
            if not result.fits:
                result = _with_parallel_advice(result, model.config, dp, micro_batch or 1, gpu_key)
    except SizingError as exc:
        raise UserError(str(exc)) from None
    click.echo(render_memory(result, fmt, details=True).rstrip("\n"))
    if not result.fits:
        raise SystemExit(EXIT_DOES_NOT_FIT)


def _check_deployed_options(inference, weight_dtype, quant, engine, utilization, max_num_batched_tokens, tp) -> None:
    """--quant and --engine apply to inference; --quant replaces --weight-dtype; the engine's options need --engine."""
    if not inference:
        _refuse_given(
            {"--quant": quant, "--engine": engine, "--gpu-memory-utilization": utilization, "--tp": tp}
            | {"--max-num-batched-tokens": max_num_batched_tokens},
            "to inference: add --inference",
        )
    if quant is not None and weight_dtype is not None:
        raise UserError(f"--quant {quant} names the weight format; leave out --weight-dtype {weight_dtype}")
    if engine is None:
        _refuse_given(
            {"--gpu-memory-utilization": utilization, "--max-num-batched-tokens": max_num_batched_tokens},
            "with --engine (e.g. --engine vllm)",
        )


def _echo_engine(result, engine: str, utilization, max_num_batched_tokens, tp, fmt: str) -> None:
    """The engine's split of the GPU (sizing/memory/engine.py); exit 3 when the engine would not start."""
    from ..memory.engine import DEFAULT_MAX_NUM_BATCHED_TOKENS, engine_memory
    from ..render.engine import render_engine
    from ..serve.quant_bytes import model_weights_bytes

    e = engine_memory(
        result.config,
        model_weights_bytes(result.config, result.quant or result.weight_dtype),  # whole; engine_memory divides by tp
        result.context,
        engine,
        result.gpu,
        utilization,
        result.kv_dtype,
        tp or 1,
        max_num_batched_tokens or DEFAULT_MAX_NUM_BATCHED_TOKENS,
    )
    click.echo(render_engine(e, fmt, result.quant or result.weight_dtype).rstrip("\n"))
    if not e.fits:
        raise SystemExit(EXIT_DOES_NOT_FIT)


def _runtime_reserve(reserve_gib: float | None, communicators: int):
    """--runtime-reserve as given, else the CUDA context + NCCL estimate (sizing.memory.runtime)."""
    from ..memory.runtime import default_runtime_reserve, given_runtime_reserve

    if reserve_gib is None:
        return default_runtime_reserve(communicators)
    return given_runtime_reserve(round(reserve_gib * GIB))


def _file_context(config_path: str | None, inference: bool) -> int | None:
    """A config file's default context (sizing.hf_context): the pretraining context for
    training, max_position_embeddings (what it serves) for inference."""
    if config_path is None:
        return None
    from ..config_file import read_config_file

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


def _refuse_inference_options(context, batch, weight_dtype, kv_dtype, prefill_chunk, zero: int, dp: int) -> None:
    """Without --inference, the inference options are errors, and ZeRO needs dp ranks to shard over."""
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
    if zero and dp == 1:
        raise UserError(f"--zero {zero} shards over --dp ranks; give --dp 2 or more (e.g. --zero {zero} --dp 8)")


def _with_parallel_advice(result, cfg, dp: int, micro_batch: int, gpu_key: str):
    """The would-fit list, with "how many GPUs" answered once, by the search `sizing parallel`
    runs (sizing.parallel.min_gpus), in place of the ZeRO-3-only count; plus what fits on the
    same dp GPUs: a tp/pp/cp layout, CPU offload, LoRA, QLoRA (each the fastest that fits)."""
    import dataclasses

    from ..parallel.min_gpus import min_gpus_hint, min_gpus_that_fit
    from ..parallel.search import ALTERNATIVES, search_layout, would_fit

    options = dict(
        gpu=gpu_key, precision=result.precision, optimizer=result.optimizer, attention_impl=result.attention_impl
    )
    batch = dp * micro_batch
    found = []
    best = search_layout(cfg, result.seq_len, batch, dp, **options).best
    if best is not None:
        found.append(("a parallel layout", best))
    keep = {label for label, layout_changes, _ in ALTERNATIVES if layout_changes}  # offload, LoRA, QLoRA
    found += [(w, p) for w, p in would_fit(cfg, result.seq_len, batch, dp, more_gpus=False, **options) if w in keep]
    hints = tuple(
        f"{what} on {dp} GPU{'s' if dp > 1 else ''}: {p.layout.label()}, recompute {p.work.recompute}, "
        f"{p.per_gpu_bytes / GIB:.2f} GiB per GPU (sizing parallel)"
        for what, p in found
    )
    fewest = min_gpus_that_fit(cfg, result.seq_len, **options)
    own = tuple(w for w in result.would_fit if not _is_gpu_count(w))
    first = (min_gpus_hint(fewest),) if fewest is not None and fewest.layout.world > dp else ()
    return dataclasses.replace(result, would_fit=first + own + hints)


def _is_gpu_count(hint: str) -> bool:
    """sizing.memory's own "fewest ZeRO-3 ranks" hints, which min_gpus_that_fit answers instead."""
    return hint.startswith(("ZeRO-3 over at least", "recompute full and ZeRO-3 over at least"))


def _refuse_given(options: dict, applies: str) -> None:
    """A UserError naming the options given (not None) that apply only to the other mode."""
    given = [name for name, value in options.items() if value is not None]
    if given:
        raise UserError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} {applies}")
