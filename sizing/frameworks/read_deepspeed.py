"""DeepSpeed's JSON config (deepspeed.ai/docs/config-json): train_batch_size,
train_micro_batch_size_per_gpu, gradient_accumulation_steps (train_batch_size = micro x
accumulation x data-parallel ranks), zero_optimization.stage and its offload_optimizer /
offload_param devices, bf16.enabled / fp16.enabled, optimizer.type. "auto" (the HF Trainer
integration fills it) is left to this tool's default and listed."""

from __future__ import annotations

from sizing.frameworks.settings import FileSettings, Reading, boolean, integer
from sizing.frameworks.text import flat, parse_json

OPTIMIZERS = {"adam": "adamw", "adamw": "adamw", "fusedadam": "adamw", "cpuadam": "adamw", "sgd": "sgd"}


def deepspeed_stack(r: Reading, *names: str) -> None:
    """The step model's stack for a DeepSpeed run: `deepspeed` once the step-time table has one,
    else the closest there is (megatron-deepspeed: DeepSpeed's ZeRO engine under Megatron's
    kernels), said so."""
    from sizing.parallel import STACKS

    if "deepspeed" in STACKS:
        r.set("stack", "deepspeed", *names)
    else:
        r.set("stack", "megatron-deepspeed", *names)
        r.note("DeepSpeed is timed as stack megatron-deepspeed, the closest the step-time table has "
               "(DeepSpeed's ZeRO engine; docs/step-time.md)")  # fmt: skip


def read_deepspeed(path: str, text: str) -> FileSettings:
    r = Reading(path, "deepspeed", flat(parse_json(text, path)))
    read_deepspeed_fields(r, "")
    return r.done()


def read_deepspeed_fields(r: Reading, prefix: str) -> None:
    """DeepSpeed's settings under `prefix` (accelerate nests them, with its own names)."""

    def number(name: str) -> int | None:
        value = r.get(prefix + name)
        if value is None or value == "auto":
            return None
        try:
            return integer(value)
        except ValueError as exc:
            raise r.fail(prefix + name, str(exc)) from None

    micro, accumulation, total = (number(n) for n in ("train_micro_batch_size_per_gpu",
                                                      "gradient_accumulation_steps", "train_batch_size"))  # fmt: skip
    if micro is not None:
        r.set("micro_batch", micro, prefix + "train_micro_batch_size_per_gpu")
    if total is not None:
        r.set("global_batch", total, prefix + "train_batch_size")
        if micro is not None and accumulation is not None:
            if total % (micro * accumulation):
                raise r.fail(prefix + "train_batch_size", f"is not micro ({micro}) x accumulation ({accumulation}) x "
                             "data-parallel ranks")  # fmt: skip
            r.set("dp", total // (micro * accumulation), *(prefix + n for n in ("train_batch_size",
                  "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")))  # fmt: skip
    elif accumulation is not None:
        r.set("micro_batches", accumulation, prefix + "gradient_accumulation_steps")
    stage = r.get(prefix + "zero_optimization.stage")
    if stage is not None:
        stage = integer(stage)
        if stage not in (0, 1, 2, 3):
            raise r.fail(prefix + "zero_optimization.stage", "must be 0, 1, 2 or 3")
        r.set("zero", stage, prefix + "zero_optimization.stage")
    for part, key in (("offload_optimizer", "offload_optimizer"), ("offload_param", "offload_params")):
        device = r.get(f"{prefix}zero_optimization.{part}.device")
        if device in ("cpu", "nvme"):
            r.set(key, True, f"{prefix}zero_optimization.{part}.device")
    for dtype, precision in (("bf16", "bf16-mixed"), ("fp16", "fp16-mixed")):
        enabled = r.get(f"{prefix}{dtype}.enabled")
        if enabled not in (None, "auto") and boolean(enabled):
            r.set("precision", precision, f"{prefix}{dtype}.enabled")
    optimizer = r.get(prefix + "optimizer.type")
    if optimizer is not None:
        if str(optimizer).lower() not in OPTIMIZERS:
            raise r.fail(prefix + "optimizer.type", f"must be one of {', '.join(OPTIMIZERS)} (states counted)")
        r.set("optimizer", OPTIMIZERS[str(optimizer).lower()], prefix + "optimizer.type")
    deepspeed_stack(r)
