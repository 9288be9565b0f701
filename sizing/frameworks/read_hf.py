"""Hugging Face: TrainingArguments saved as JSON (transformers TrainingArguments fields:
per_device_train_batch_size, gradient_accumulation_steps, bf16, fp16, gradient_checkpointing,
optim, max_steps, fsdp, fsdp_config, use_liger_kernel, torch_compile) and accelerate's config YAML
(accelerate config: distributed_type, num_processes, mixed_precision, fsdp_config.* with
fsdp_sharding_strategy, fsdp_offload_params, fsdp_activation_checkpointing; deepspeed_config.*)."""

from __future__ import annotations

from sizing.frameworks.read_deepspeed import deepspeed_stack
from sizing.frameworks.settings import FileSettings, Reading, boolean, integer
from sizing.frameworks.text import flat, parse_json, parse_yaml

# transformers OptimizerNames (training_args.py) -> this tool's optimizer; the paged ones keep the
# same bytes on the GPU (bitsandbytes pages them to CPU only under memory pressure).
HF_OPTIMIZERS = {
    "adamw_torch": "adamw", "adamw_torch_fused": "adamw", "adamw_hf": "adamw", "adamw_apex_fused": "adamw",
    "adamw_bnb_8bit": "adam8bit", "adamw_8bit": "adam8bit", "paged_adamw_8bit": "adam8bit",
    "paged_adamw_32bit": "adamw", "paged_adamw": "adamw", "sgd": "sgd",
}  # fmt: skip
SHARDING = {"full_shard": ("fsdp", "full"), "hybrid_shard": ("fsdp", "hybrid"), "shard_grad_op": ("zero", 2),
            "no_shard": ("zero", 0), "1": ("fsdp", "full"), "2": ("zero", 2), "3": ("zero", 0),
            "4": ("fsdp", "hybrid")}  # fmt: skip


def optimizer_knob(r: Reading, name: str) -> None:
    value = str(r.get(name)).lower()
    if value not in HF_OPTIMIZERS:
        raise r.fail(name, f"must be one of {', '.join(HF_OPTIMIZERS)} (the optimizers whose states are counted)")
    r.set("optimizer", HF_OPTIMIZERS[value], name)
    if value.startswith("paged_"):
        r.note(f"{name} {value}: paged states are counted on the GPU (bitsandbytes moves them to CPU only when "
               "the GPU runs out, at a cost in time)")  # fmt: skip


def read_training_arguments(path: str, text: str) -> FileSettings:
    r = Reading(path, "hf-trainer", flat(parse_json(text, path)))
    r.take("micro_batch", "per_device_train_batch_size", integer)
    if integer(r.get("gradient_accumulation_steps", 1)) > 1:
        r.take("micro_batches", "gradient_accumulation_steps", integer)
    for name, precision in (("bf16", "bf16-mixed"), ("fp16", "fp16-mixed")):
        if r.has(name) and boolean(r.get(name)):
            r.set("precision", precision, name)
    if r.has("gradient_checkpointing") and boolean(r.get("gradient_checkpointing")):
        r.set("recompute", "full", "gradient_checkpointing")
    if r.has("optim"):
        optimizer_knob(r, "optim")
    if r.has("use_liger_kernel") and boolean(r.get("use_liger_kernel")):
        r.set("cross_entropy", "chunked", "use_liger_kernel")
    fsdp = r.get("fsdp")
    if fsdp:
        words = fsdp.split() if isinstance(fsdp, str) else list(fsdp)
        for word in words:
            if word in SHARDING:
                r.set(*SHARDING[word], "fsdp")
            elif word == "offload":
                r.set("offload_params", True, "fsdp")
                r.set("offload_optimizer", True, "fsdp")
    if r.has("deepspeed"):
        r.note("deepspeed names a DeepSpeed config: read it too with --from that file", "deepspeed")
    return r.done()


def read_accelerate(path: str, text: str) -> FileSettings:
    r = Reading(path, "accelerate", flat(parse_yaml(text, path)))
    r.take("gpus", "num_processes", integer)
    precision = r.get("mixed_precision")
    if precision in ("bf16", "fp16", "fp8"):
        r.set("precision", {"bf16": "bf16-mixed", "fp16": "fp16-mixed", "fp8": "fp8"}[precision], "mixed_precision")
    kind = r.get("distributed_type")
    if kind == "FSDP":
        strategy = str(r.get("fsdp_config.fsdp_sharding_strategy", "FULL_SHARD")).lower()
        if strategy not in SHARDING:
            raise r.fail("fsdp_config.fsdp_sharding_strategy", f"must be one of {', '.join(SHARDING)}")
        names = ["distributed_type"] + [n for n in ("fsdp_config.fsdp_sharding_strategy",) if r.has(n)]
        r.set(*SHARDING[strategy], *names)
        if boolean(r.get("fsdp_config.fsdp_offload_params", False)):
            r.set("offload_params", True, "fsdp_config.fsdp_offload_params")
            r.set("offload_optimizer", True, "fsdp_config.fsdp_offload_params")
        if boolean(r.get("fsdp_config.fsdp_activation_checkpointing", False)):
            r.set("recompute", "full", "fsdp_config.fsdp_activation_checkpointing")
        r.set("stack", "fsdp", "distributed_type")
    elif kind == "DEEPSPEED":
        stage = r.get("deepspeed_config.zero_stage")
        if stage is not None:
            r.set("zero", integer(stage), "deepspeed_config.zero_stage")
        for part, key in (
            ("offload_optimizer_device", "offload_optimizer"),
            ("offload_param_device", "offload_params"),
        ):
            if r.get(f"deepspeed_config.{part}") in ("cpu", "nvme"):
                r.set(key, True, f"deepspeed_config.{part}")
        if r.has("deepspeed_config.gradient_accumulation_steps"):
            r.take("micro_batches", "deepspeed_config.gradient_accumulation_steps", integer)
        deepspeed_stack(r, "distributed_type")
    elif kind is not None and kind not in ("MULTI_GPU", "NO"):
        raise r.fail("distributed_type", "must be FSDP, DEEPSPEED, MULTI_GPU or NO")
    return r.done()
