"""torchtitan's train config (.toml), by the names of torchtitan/config/job_config.py:
[model] name, flavor; [training] seq_len, local_batch_size, global_batch_size, steps,
mixed_precision_param, mixed_precision_reduce; [parallelism] data_parallel_replicate_degree,
data_parallel_shard_degree (-1: the rest of the GPUs), tensor_parallel_degree,
pipeline_parallel_degree, pipeline_parallel_schedule, pipeline_parallel_microbatch_size,
context_parallel_degree, expert_parallel_degree, expert_tensor_parallel_degree;
[activation_checkpoint] mode, selective_ac_option; [compile] enable; [float8] / [quantize.linear.float8]
recipe_name, enable_fsdp_float8_all_gather; [optimizer] name."""

from __future__ import annotations

from sizing.frameworks.models import torchtitan_model
from sizing.frameworks.settings import FileSettings, Reading, boolean, integer
from sizing.frameworks.text import flat, parse_toml

SCHEDULES = {"1F1B": "1f1b", "GPipe": "1f1b", "Interleaved1F1B": "interleaved", "InterleavedZeroBubble": "interleaved"}
FLOAT8_RECIPES = {"tensorwise": "tensorwise", "rowwise": "blockwise", "rowwise_with_gw_hp": "blockwise"}


def read_torchtitan(path: str, text: str) -> FileSettings:
    r = Reading(path, "torchtitan", flat(parse_toml(text, path)))
    torchtitan_model(r)
    r.take("seq_len", "training.seq_len", integer)
    _layout(r)
    _batch(r)
    _precision(r)
    mode = r.get("activation_checkpoint.mode")
    if mode is not None:
        if mode not in ("none", "selective", "full"):
            raise r.fail("activation_checkpoint.mode", "must be none, selective or full")
        r.set("recompute", mode, "activation_checkpoint.mode")
        option = r.get("activation_checkpoint.selective_ac_option")
        if mode == "selective" and option is not None:
            # "op": op-level; a number n: every n-th layer checkpointed whole (not a policy this tool models)
            if str(option) != "op":
                raise r.fail("activation_checkpoint.selective_ac_option", "is layer-level ('op' is read)")
            r.set("selective", "op", "activation_checkpoint.selective_ac_option")
    compiled = boolean(r.get("compile.enable", False))
    r.set(
        "stack",
        "torchtitan-compile" if compiled else "torchtitan-eager",
        *(("compile.enable",) if r.has("compile.enable") else ()),
    )
    optimizer = r.get("optimizer.name")
    if optimizer is not None:
        if str(optimizer).lower() not in ("adamw", "adam"):
            raise r.fail("optimizer.name", "must be AdamW or Adam (the optimizers whose states are counted)")
        r.set("optimizer", "adamw", "optimizer.name")
    return r.done()


def _layout(r: Reading) -> None:
    for name, key in (("tensor_parallel_degree", "tp"), ("pipeline_parallel_degree", "pp"),
                      ("context_parallel_degree", "cp"), ("expert_parallel_degree", "ep"),
                      ("expert_tensor_parallel_degree", "etp")):  # fmt: skip
        r.take(key, f"parallelism.{name}", integer)
    if integer(r.get("parallelism.tensor_parallel_degree", 1)) > 1:  # torchtitan's TP plan shards norms: SP
        r.set("sp", True, "parallelism.tensor_parallel_degree")
    replicate = integer(r.get("parallelism.data_parallel_replicate_degree", 1))
    shard = integer(r.get("parallelism.data_parallel_shard_degree", -1))
    names = [n for n in ("parallelism.data_parallel_replicate_degree", "parallelism.data_parallel_shard_degree")
             if r.has(n)]  # fmt: skip
    if shard == -1 or shard > 1:
        r.set("fsdp", "hybrid" if replicate > 1 else "full", *names)
        if replicate > 1 and shard > 1:
            r.set("shard_group", shard, *names)
    if shard > 0 and replicate * shard > 1:
        r.set("dp", replicate * shard, *names)
    schedule = r.get("parallelism.pipeline_parallel_schedule")
    if schedule is not None:
        if schedule not in SCHEDULES:
            raise r.fail("parallelism.pipeline_parallel_schedule", f"must be one of {', '.join(SCHEDULES)}")
        r.set("schedule", SCHEDULES[schedule], "parallelism.pipeline_parallel_schedule")
        if SCHEDULES[schedule] == "interleaved":
            r.set("v", 2, "parallelism.pipeline_parallel_schedule")  # torchtitan's default: 2 stages per rank


def _batch(r: Reading) -> None:
    local = r.take("micro_batch", "training.local_batch_size", integer)
    pp = integer(r.get("parallelism.pipeline_parallel_degree", 1))
    if pp > 1 and local is not None:
        micro = integer(r.get("parallelism.pipeline_parallel_microbatch_size", 1))
        if local % micro:
            raise r.fail(
                "training.local_batch_size", f"must be a multiple of pipeline_parallel_microbatch_size ({micro})"
            )
        r.set("micro_batch", micro, "training.local_batch_size", "parallelism.pipeline_parallel_microbatch_size")
        r.set(
            "micro_batches",
            local // micro,
            "training.local_batch_size",
            "parallelism.pipeline_parallel_microbatch_size",
        )
    global_batch = integer(r.get("training.global_batch_size", -1))
    if global_batch > 0:
        r.set("global_batch", global_batch, "training.global_batch_size")
        steps = r.get("training.steps")
        if steps is not None:
            r.set("tokens", integer(steps) * global_batch * integer(r.get("training.seq_len")), "training.steps",
                  "training.global_batch_size", "training.seq_len")  # fmt: skip
    elif r.has("training.steps"):
        r.note("training.steps: the tokens need the global batch (set training.global_batch_size, or --tokens)",
               "training.steps")  # fmt: skip


def _precision(r: Reading) -> None:
    param = r.get("training.mixed_precision_param", "bfloat16")
    if param not in ("bfloat16", "float32"):
        raise r.fail("training.mixed_precision_param", "must be bfloat16 or float32")
    names = [n for n in ("training.mixed_precision_param",) if r.has(n)]
    r.set("precision", "bf16-mixed" if param == "bfloat16" else "fp32", *names)
    reduce = r.get("training.mixed_precision_reduce")
    if reduce is not None:
        r.set("grad_reduce", "fp32" if reduce == "float32" else "bf16", "training.mixed_precision_reduce")
    converters = r.get("model.converters", [])
    section = next(
        (s for s in ("float8", "quantize.linear.float8") if any(k.startswith(s + ".") for k in r.fields)), None
    )
    if "float8" in (converters or []) or (section and r.has(f"{section}.recipe_name")):
        r.set("precision", "fp8", *[n for n in ("model.converters",) if r.has(n)])
        recipe = r.get(f"{section}.recipe_name") if section else None
        if recipe is not None:
            if recipe not in FLOAT8_RECIPES:
                raise r.fail(f"{section}.recipe_name", f"must be one of {', '.join(FLOAT8_RECIPES)}")
            r.set("fp8_recipe", FLOAT8_RECIPES[recipe], f"{section}.recipe_name")
        if section and r.has(f"{section}.enable_fsdp_float8_all_gather"):
            r.note(f"{section}.enable_fsdp_float8_all_gather: FSDP gathers the weights in fp8 (torchao); the "
                   "memory model keeps torchao's bf16 weights, and the step model times a bf16 all-gather",
                   f"{section}.enable_fsdp_float8_all_gather")  # fmt: skip
