"""axolotl's YAML config (docs/config-reference.qmd): base_model, adapter (lora / qlora), lora_r,
lora_target_modules / lora_target_linear, lora_modules_to_save, load_in_8bit / load_in_4bit,
sequence_len, micro_batch_size, gradient_accumulation_steps, optimizer, bf16 / fp16,
gradient_checkpointing, flash_attention, liger_fused_linear_cross_entropy / liger_cross_entropy,
fsdp / fsdp_config (fsdp_offload_params), deepspeed."""

from __future__ import annotations

from sizing.frameworks.models import hub_model
from sizing.frameworks.read_hf import optimizer_knob
from sizing.frameworks.settings import FileSettings, Reading, boolean, integer
from sizing.frameworks.text import flat, parse_yaml

# PEFT / HF module names -> the projections this tool's LoRA targets (sizing.parallel.LORA_TARGETS)
PROJECTIONS = {"q_proj": "q", "k_proj": "k", "v_proj": "v", "o_proj": "o", "up_proj": "up",
               "gate_proj": "gate", "down_proj": "down"}  # fmt: skip
SAVED_MODULES = {"embed_tokens": "embedding", "lm_head": "lm_head", "wte": "embedding"}


def read_axolotl(path: str, text: str) -> FileSettings:
    data = parse_yaml(text, path)
    lists = {k: v for k, v in data.items() if isinstance(v, list)}  # kept whole: target lists, datasets
    r = Reading(path, "axolotl", {**flat({k: v for k, v in data.items() if k not in lists}), **lists})
    if r.has("base_model"):
        hub_model(r, "base_model")
    r.take("seq_len", "sequence_len", integer)
    r.take("micro_batch", "micro_batch_size", integer)
    if integer(r.get("gradient_accumulation_steps", 1)) > 1:
        r.take("micro_batches", "gradient_accumulation_steps", integer)
    _adapter(r)
    if r.has("optimizer"):
        optimizer_knob(r, "optimizer")
    for name, precision in (("bf16", "bf16-mixed"), ("fp16", "fp16-mixed")):
        if r.has(name) and r.get(name) in (True, "true", "auto"):
            r.set("precision", precision, name)
    if r.has("gradient_checkpointing") and r.get("gradient_checkpointing") not in (False, "false"):
        r.set("recompute", "full", "gradient_checkpointing")
    if r.has("flash_attention"):
        r.set("attention_impl", "flash" if boolean(r.get("flash_attention")) else "math", "flash_attention")
    if r.has("liger_fused_linear_cross_entropy") and boolean(r.get("liger_fused_linear_cross_entropy")):
        r.set("cross_entropy", "chunked", "liger_fused_linear_cross_entropy")
    elif r.has("liger_cross_entropy") and boolean(r.get("liger_cross_entropy")):
        r.set("cross_entropy", "fused", "liger_cross_entropy")
    if r.has("fsdp") and r.get("fsdp"):
        r.set("fsdp", "full", "fsdp")
        if boolean(r.get("fsdp_config.fsdp_offload_params", False)):
            r.set("offload_params", True, "fsdp_config.fsdp_offload_params")
    if r.has("deepspeed"):
        r.note("deepspeed names a DeepSpeed config: read it too with --from that file", "deepspeed")
    return r.done()


def _adapter(r: Reading) -> None:
    adapter = r.get("adapter")
    eight, four = (r.has(n) and boolean(r.get(n)) for n in ("load_in_8bit", "load_in_4bit"))
    if adapter is None:
        if eight or four:
            raise r.fail(
                "load_in_8bit" if eight else "load_in_4bit",
                "needs adapter: lora or qlora (a quantised base trains only adapters)",
            )
        r.set("finetune", "full")
        return
    if adapter not in ("lora", "qlora"):
        raise r.fail("adapter", "must be lora or qlora")
    if adapter == "qlora" and not four:
        raise r.fail("adapter", "qlora needs load_in_4bit: true (axolotl's QLoRA loads the base in NF4)")
    if adapter == "lora" and four:
        raise r.fail("load_in_4bit", "with adapter lora: use adapter qlora for a 4-bit base")
    r.set("finetune", adapter, "adapter", *[n for n in ("load_in_4bit",) if four])
    if eight:
        r.set("lora_base", "int8", "load_in_8bit")
    r.take("lora_rank", "lora_r", integer)
    targets = r.get("lora_target_modules")
    if targets:
        names = [PROJECTIONS.get(t) for t in targets]
        if None in names:
            bad = targets[names.index(None)]
            raise r.fail("lora_target_modules", f"names {bad!r}; projections read: {', '.join(PROJECTIONS)}")
        r.set("lora_targets", ",".join(dict.fromkeys(names)), "lora_target_modules")
    elif r.has("lora_target_linear"):
        r.get("lora_target_linear")  # all linears: this tool's default targets
    saved = r.get("lora_modules_to_save")
    if saved:
        modules = [SAVED_MODULES.get(m) for m in saved]
        if None in modules:
            raise r.fail(
                "lora_modules_to_save", f"names {saved[modules.index(None)]!r}; read: {', '.join(SAVED_MODULES)}"
            )
        r.set("lora_trained", ",".join(dict.fromkeys(modules)), "lora_modules_to_save")
