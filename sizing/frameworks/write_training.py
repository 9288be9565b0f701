"""A training plan (sizing.parallel.ParallelPlan) as the file a trainer starts from: torchtitan's
train config (.toml), Megatron-LM's arguments (a pretrain_gpt.py command line) or DeepSpeed's
JSON, each with a header saying what was sized, by which version of this tool. Reading the file
back (sizing.frameworks.read_settings) asks the same question (tests/test_frameworks_roundtrip.py).
A layout the framework cannot run is refused in one line naming what it lacks."""

from __future__ import annotations

import json

from sizing.frameworks.models import TORCHTITAN_MODELS
from sizing.validate import SizingError
from sizing.vocabulary import ceil_div

TRAINING_EMITS: tuple[str, ...] = ("torchtitan", "megatron", "deepspeed")
_TT_SCHEDULES = {"1f1b": "1F1B", "interleaved": "Interleaved1F1B"}
# Presets torchtitan has no flavor of but whose shapes one has (torchtitan's llama3 flavors are Llama 3.1's,
# the same blocks and vocabulary as Llama 3's; read back, the file names llama3.1-*).
SAME_SHAPES_FLAVORS = {"llama3-8b": ("llama3", "8B"), "llama3-70b": ("llama3", "70B")}


def emit_training(plan, fmt: str) -> str:
    if fmt not in TRAINING_EMITS:
        raise SizingError(f"--emit ({fmt}) must be one of: {', '.join(TRAINING_EMITS)} for a training plan")
    return {"torchtitan": _torchtitan, "megatron": _megatron, "deepspeed": _deepspeed}[fmt](plan)


def header(plan, comment: str = "#") -> list[str]:
    """What was sized, the answer, and by which tool: comment lines."""
    from sizing import __version__

    lay, work = plan.layout, plan.work
    lines = [
        f"Sized by transformer-sizing {__version__} (sizing parallel): {plan.model} on {lay.world} x {plan.gpu.key}",
        f"layout {lay.label()}; T {work.seq_len:,}, global batch {lay.global_batch():,} sequences, "
        f"recompute {work.recompute}, precision {work.precision}",
        f"step {plan.step_seconds:.3f} s, MFU {plan.mfu:.3f}, {plan.per_gpu_bytes / 2**30:.2f} GiB per GPU "
        f"({plan.memory_verdict.describe() if hasattr(plan.memory_verdict, 'describe') else ''})",
    ]
    if work.tokens:
        lines.append(f"{work.tokens:,} tokens: {plan.gpu_hours / 24 / lay.world:.1f} days on {lay.world} GPUs")
    return [f"{comment} {line}".rstrip() for line in lines]


def _steps(plan) -> int | None:
    tokens_per_step = plan.layout.global_batch() * plan.work.seq_len
    return None if not plan.work.tokens else ceil_div(plan.work.tokens, tokens_per_step)


def _preset(plan) -> str | None:
    from sizing.inputs import PRESETS, get_preset

    name = str(plan.model)
    return name if name in PRESETS and get_preset(name).config == plan.config else None


def _refuse(fmt: str, what: str, instead: str) -> SizingError:
    return SizingError(f"--emit {fmt}: {what}; {instead}")


def _torchtitan(plan) -> str:
    lay, work = plan.layout, plan.work
    if lay.fsdp is None and lay.zero > 0:
        raise _refuse("torchtitan", f"the layout shards with ZeRO-{lay.zero} (flat shards), which torchtitan does "
                      "not run", "give --fsdp full with the layout, or --emit megatron / deepspeed")  # fmt: skip
    if lay.finetune != "full" or lay.offload_optimizer or lay.offload_params:
        raise _refuse("torchtitan", "LoRA and CPU offload are not torchtitan train settings", "--emit deepspeed")
    flavors = {v: k for k, v in TORCHTITAN_MODELS.items()} | SAME_SHAPES_FLAVORS
    flavor = flavors.get(_preset(plan) or "")
    out = header(plan) + [""]
    if flavor:
        out += ["[model]", f'name = "{flavor[0]}"', f'flavor = "{flavor[1]}"', ""]
    else:
        out += [f"# [model]: torchtitan has no flavor of {plan.model} here; set name and flavor", ""]
    local = lay.micro_batch * (lay.micro_batches if lay.pp > 1 else 1)
    out += ["[training]", f"seq_len = {work.seq_len}", f"local_batch_size = {local}",
            f"global_batch_size = {lay.global_batch()}"]  # fmt: skip
    if _steps(plan):
        out.append(f"steps = {_steps(plan)}")
    out += [f'mixed_precision_param = "{"float32" if work.precision == "fp32" else "bfloat16"}"']
    if work.grad_reduce:
        out.append(f'mixed_precision_reduce = "{"float32" if work.grad_reduce == "fp32" else "bfloat16"}"')
    shard, replicate = (lay.dp * lay.cp // lay.cp, 1) if lay.fsdp == "full" else (1, lay.dp)
    if lay.fsdp == "hybrid":
        shard, replicate = lay.hybrid_shard_group, lay.dp // lay.hybrid_shard_group
    out += ["", "[parallelism]", f"data_parallel_replicate_degree = {replicate}",
            f"data_parallel_shard_degree = {shard}", f"tensor_parallel_degree = {lay.tp}",
            f"pipeline_parallel_degree = {lay.pp}", f"context_parallel_degree = {lay.cp}",
            f"expert_parallel_degree = {lay.ep}", f"expert_tensor_parallel_degree = {lay.etp}"]  # fmt: skip
    if lay.pp > 1:
        out += [f'pipeline_parallel_schedule = "{_TT_SCHEDULES[lay.pp_schedule]}"',
                f"pipeline_parallel_microbatch_size = {lay.micro_batch}"]  # fmt: skip
    out += ["", "[activation_checkpoint]", f'mode = "{work.recompute}"']
    if work.recompute == "selective" and work.selective == "op":
        out.append('selective_ac_option = "op"')
    out += ["", "[compile]", f"enable = {'true' if work.stack == 'torchtitan-compile' else 'false'}"]
    if work.precision == "fp8":
        recipe = {"tensorwise": "tensorwise", "blockwise": "rowwise"}.get(work.fp8_recipe, "tensorwise")
        out += ["", "[float8]", f'recipe_name = "{recipe}"']
    return "\n".join(out) + "\n"


def _megatron(plan) -> str:
    lay, work, cfg = plan.layout, plan.work, plan.config
    if lay.finetune != "full":
        raise _refuse("megatron", "LoRA is not a pretrain_gpt.py argument", "--emit deepspeed (HF PEFT) instead")
    args = [("num-layers", cfg.n_layers), ("hidden-size", cfg.d_model), ("ffn-hidden-size", cfg.d_ff),
            ("num-attention-heads", cfg.n_heads), ("vocab-size", cfg.vocab_size)]  # fmt: skip
    flags = []
    if cfg.kv_heads != cfg.n_heads:
        flags.append("group-query-attention")
        args.append(("num-query-groups", cfg.kv_heads))
    if cfg.head_dim not in (None, cfg.d_model // cfg.n_heads):
        args.append(("kv-channels", cfg.head_dim))
    if cfg.is_moe:
        args += [("num-experts", cfg.n_experts), ("moe-router-topk", cfg.top_k)]
        if cfg.expert_d_ff and cfg.expert_d_ff != cfg.d_ff:
            args.append(("moe-ffn-hidden-size", cfg.expert_d_ff))
    flags += ["swiglu"] if cfg.mlp == "swiglu" else []
    args += [("normalization", "RMSNorm" if cfg.norm == "rmsnorm" else "LayerNorm")]
    args += [("position-embedding-type", "rope" if cfg.position == "rope" else "learned_absolute")]
    flags += [] if cfg.tied_embeddings else ["untie-embeddings-and-output-weights"]
    flags += [] if cfg.qkv_bias or cfg.mlp_bias else ["disable-bias-linear"]
    args += [("seq-length", work.seq_len), ("max-position-embeddings", max(work.seq_len, cfg.max_positions or 0)),
             ("tensor-model-parallel-size", lay.tp), ("pipeline-model-parallel-size", lay.pp),
             ("context-parallel-size", lay.cp), ("expert-model-parallel-size", lay.ep),
             ("expert-tensor-parallel-size", lay.etp), ("micro-batch-size", lay.micro_batch),
             ("global-batch-size", lay.global_batch())]  # fmt: skip
    if lay.pp_schedule == "interleaved":
        args.append(("virtual-pipeline-model-parallel-size", lay.v))
    if _steps(plan):
        args.append(("train-iters", _steps(plan)))
    flags += ["sequence-parallel"] if lay.sequence_parallel else []
    flags += ["use-distributed-optimizer"] if lay.zero >= 1 and lay.fsdp is None else []
    flags += ["use-torch-fsdp2"] if lay.fsdp is not None else []
    flags += _megatron_precision(work, args)
    if work.recompute != "none":
        args.append(("recompute-granularity", work.recompute))
        if work.recompute == "full":
            args += [("recompute-method", "uniform"), ("recompute-num-layers", 1)]
    if work.optimizer == "sgd":
        args.append(("optimizer", "sgd"))
    nodes = ceil_div(lay.world, lay.gpus_per_node)
    launcher = f"torchrun --nproc-per-node {min(lay.world, lay.gpus_per_node)} --nnodes {nodes} pretrain_gpt.py"
    words = [f"--{k} {v}" for k, v in args] + [f"--{f}" for f in flags]
    return "\n".join(header(plan) + [launcher + " \\"] + [f"  {w} \\" for w in words[:-1]] + [f"  {words[-1]}"]) + "\n"


def _megatron_precision(work, args: list) -> list[str]:
    flags = []
    if work.precision == "fp8":
        flags.append("bf16")
        args += [
            ("fp8-format", "hybrid"),
            ("fp8-recipe", {"tensorwise": "tensorwise"}.get(work.fp8_recipe, work.fp8_recipe)),
        ]
        if work.fp8_params:
            flags.append("fp8-param-gather")
    elif work.precision in ("bf16-mixed", "bf16"):
        flags.append("bf16")
    elif work.precision == "fp16-mixed":
        flags.append("fp16")
    if work.grad_reduce == "bf16":
        flags.append("grad-reduce-in-bf16")
    if work.loss == "fused":
        flags.append("cross-entropy-loss-fusion")
    return flags


def _deepspeed(plan) -> str:
    lay, work = plan.layout, plan.work
    if lay.tp > 1 or lay.pp > 1 or lay.cp > 1 or lay.ep > 1:
        raise _refuse("deepspeed", f"its JSON holds ZeRO and batch settings only, and this layout needs tp {lay.tp}, "
                      f"pp {lay.pp}, cp {lay.cp}, ep {lay.ep}", "--emit megatron, or give --tp 1 --pp 1")  # fmt: skip
    zero = 3 if lay.fsdp is not None else lay.zero
    script = (
        f"set in the training script: model {plan.model}, sequence length {work.seq_len}, recompute {work.recompute}"
    )
    config: dict = {"_comment": " | ".join([line.lstrip("# ") for line in header(plan)] + [script])}
    config.update(train_batch_size=lay.global_batch(), train_micro_batch_size_per_gpu=lay.micro_batch,
                  gradient_accumulation_steps=lay.micro_batches)  # fmt: skip
    zero_cfg: dict = {"stage": zero}
    if lay.offload_optimizer:
        zero_cfg["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if lay.offload_params:
        zero_cfg["offload_param"] = {"device": "cpu", "pin_memory": True}
    config["zero_optimization"] = zero_cfg
    config["bf16"] = {"enabled": work.precision in ("bf16-mixed", "bf16")}
    if work.precision == "fp16-mixed":
        config["fp16"] = {"enabled": True}
    if work.precision not in ("bf16-mixed", "bf16", "fp16-mixed", "fp32"):
        raise _refuse("deepspeed", f"precision {work.precision} is not a DeepSpeed JSON setting", "--emit megatron")
    config["optimizer"] = {"type": "SGD" if work.optimizer == "sgd" else "AdamW"}
    if work.optimizer == "adam8bit":
        raise _refuse(
            "deepspeed", "an 8-bit optimizer is set in the training script, not the JSON", "--optimizer adamw"
        )
    return json.dumps(config, indent=2) + "\n"
