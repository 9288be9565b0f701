"""Megatron-LM / Megatron-Bridge (a command line of pretrain_gpt.py arguments, or a YAML recipe of
the same names) and NeMo 2 recipes (the YAML `nemo llm pretrain --factory ... --yaml` writes, or a
recipe exported with its `trainer.strategy`, `data`, `peft` sections), read through
sizing.frameworks.megatron_args."""

from __future__ import annotations

import re
from typing import Any

from sizing.frameworks.megatron_args import (
    launcher_gpus,
    megatron_architecture,
    parse_argv,
    read_megatron_args,
)
from sizing.frameworks.models import architecture_model, hub_model
from sizing.frameworks.settings import FileSettings, Reading, integer
from sizing.frameworks.text import flat, parse_yaml, split_command


def read_megatron_command(path: str, text: str) -> FileSettings:
    """`[torchrun ...] pretrain_gpt.py --tensor-model-parallel-size 8 ...`."""
    launcher, args = parse_argv(split_command(text, path), path)
    r = Reading(path, "megatron", dict(args))
    launcher_gpus(r, launcher)
    _model(r)
    read_megatron_args(r, args)
    return r.done()


def read_megatron_yaml(path: str, text: str) -> FileSettings:
    """A YAML of Megatron argument names at any depth (Megatron-Bridge: model.*, train.*, ddp.*)."""
    fields = flat(parse_yaml(text, path))
    r = Reading(path, "megatron-yaml", fields)
    args = _by_last_key(r, fields)
    precision = r.first("mixed_precision")
    if precision and isinstance(precision[1], str):  # Megatron-Bridge names a recipe: bf16_mixed, bf16_with_fp8_...
        r.set("precision", "fp8" if "fp8" in precision[1] else "bf16-mixed", precision[0])
    _model(r)
    read_megatron_args(r, args)
    return r.done()


# NeMo 2's model config classes (nemo/collections/llm/gpt/model/llama.py Llama3Config8B ...;
# Megatron-Bridge's Llama3ModelProvider8B ...) -> preset: family and size in the class name.
_NEMO_MODEL = re.compile(r"(Llama31?|Llama2|Qwen3|Mixtral)(?:Config|ModelProvider)(\d+x?\d*B)", re.IGNORECASE)
_NEMO_PRESETS = {
    ("llama3", "8B"): "llama3-8b", ("llama31", "8B"): "llama3.1-8b", ("llama3", "70B"): "llama3-70b",
    ("llama31", "70B"): "llama3.1-70b", ("llama31", "405B"): "llama3.1-405b", ("llama2", "7B"): "llama2-7b",
    ("llama2", "13B"): "llama2-13b", ("llama2", "70B"): "llama2-70b", ("qwen3", "8B"): "qwen3-8b",
    ("qwen3", "14B"): "qwen3-14b", ("qwen3", "32B"): "qwen3-32b", ("mixtral", "8x7B"): "mixtral-8x7b",
}  # fmt: skip


def read_nemo_yaml(path: str, text: str) -> FileSettings:
    """A NeMo 2 recipe: trainer (devices, num_nodes, max_steps, strategy), data (seq_length,
    micro/global batch), model.config (its class), peft (LoRA dim), optim, plugins (precision)."""
    fields = flat(parse_yaml(text, path))
    r = Reading(path, "nemo", fields)
    devices, nodes = r.first("trainer.devices"), r.first("trainer.num_nodes")
    if devices:
        r.set(
            "gpus", integer(devices[1]) * integer(nodes[1] if nodes else 1), devices[0], *(nodes[:1] if nodes else ())
        )
    precision = r.first("trainer.plugins.precision", "trainer.precision")
    if precision:
        fp8 = r.first("trainer.plugins.fp8")
        r.set("precision", "fp8" if fp8 and fp8[1] else str(precision[1]), precision[0], *(fp8[:1] if fp8 else ()))
    peft = r.first("peft._target_", "peft.target")
    if peft:
        kind = "qlora" if "qlora" in str(peft[1]).lower() else "lora"
        r.set("finetune", kind, peft[0])
        r.take("lora_rank", "peft.dim", integer)
    args = _by_last_key(r, fields)
    model = r.first("model.config._target_", "model._target_")
    if model:
        _nemo_model(r, model)
    read_megatron_args(r, args)
    steps = r.first("trainer.max_steps")
    if steps and r.has("data.global_batch_size") and r.has("data.seq_length"):
        tokens = integer(steps[1]) * integer(r.get("data.global_batch_size")) * integer(r.get("data.seq_length"))
        r.set("tokens", tokens, steps[0], "data.global_batch_size", "data.seq_length")
    return r.done()


def _nemo_model(r: Reading, model: tuple[str, Any]) -> None:
    match = _NEMO_MODEL.search(str(model[1]))
    preset = match and _NEMO_PRESETS.get((match.group(1).lower(), match.group(2).upper().replace("X", "x")))
    if not preset:
        raise r.fail(model[0], "names a model config with no preset here; give --preset or --config beside --from")
    r.set("preset", preset, model[0])


def _by_last_key(r: Reading, fields: dict[str, Any]) -> dict[str, Any]:
    """{argument: value} keyed by the last part of each dotted name; one name set twice to
    different values is a contradiction, refused naming both fields."""
    args: dict[str, Any] = {}
    seen: dict[str, str] = {}
    for name, value in fields.items():
        last = name.rsplit(".", 1)[-1]
        if last in seen and fields[seen[last]] != value and not last.startswith("_"):
            raise r.fail(name, f"contradicts {seen[last]} ({fields[seen[last]]!r})")
        seen.setdefault(last, name)
        args[last] = value
    r.alias.update(seen)  # the argument's name stands for its dotted field in what is reported
    return args


def _model(r: Reading) -> None:
    """The model: --hf-model / --tokenizer-model naming a hub model with a preset, else the architecture."""
    fields = megatron_architecture(r)
    if fields is not None:
        names = [n for n in ("num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads") if r.has(n)]
        named = next((r.get(n) for n in ("hf_model_id", "tokenizer_model") if isinstance(r.fields.get(n), str)), None)
        architecture_model(r, fields, tuple(names), named)
    elif r.has("hf_model_id") or r.has("hf_model"):
        hub_model(r, "hf_model_id" if r.has("hf_model_id") else "hf_model")
