"""Which framework a file is for, from its extension and content (or named with --from-format),
and the reader of each format."""

from __future__ import annotations

from sizing.frameworks.formats import READ_FORMATS
from sizing.frameworks.settings import FileSettings
from sizing.frameworks.text import parse_json, parse_yaml, read_text, split_command
from sizing.validate import SizingError, show


def read_settings(path: str, fmt: str | None = None) -> FileSettings:
    """The file read as this tool's options (sizing.frameworks.settings.FileSettings)."""
    text = read_text(path)
    fmt = fmt or detect_format(path, text)
    if fmt not in READ_FORMATS:
        raise SizingError(f"--from-format ({show(fmt)}) must be one of: {', '.join(READ_FORMATS)}")
    return _reader(fmt)(path, text)


def _reader(fmt: str):
    from sizing.frameworks import read_axolotl, read_deepspeed, read_engines, read_hf, read_megatron, read_torchtitan

    return {
        "torchtitan": read_torchtitan.read_torchtitan,
        "megatron": read_megatron.read_megatron_command,
        "megatron-yaml": read_megatron.read_megatron_yaml,
        "nemo": read_megatron.read_nemo_yaml,
        "deepspeed": read_deepspeed.read_deepspeed,
        "hf-trainer": read_hf.read_training_arguments,
        "accelerate": read_hf.read_accelerate,
        "axolotl": read_axolotl.read_axolotl,
        "vllm": lambda p, t: read_engines.read_engine_command(p, t, "vllm"),
        "sglang": lambda p, t: read_engines.read_engine_command(p, t, "sglang"),
        "trtllm": lambda p, t: read_engines.read_engine_command(p, t, "trtllm"),
    }[fmt]


def detect_format(path: str, text: str) -> str:
    """The format of `text`, from its extension and the names it uses; one line naming
    --from-format when it cannot tell."""
    where = f"--from {show(str(path), limit=120)}"
    name = str(path).lower()
    if name.endswith(".toml"):
        return "torchtitan"
    if name.endswith(".json"):
        keys = set(parse_json(text, where))
        if keys & {"zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size"}:
            return "deepspeed"
        if keys & {"per_device_train_batch_size", "output_dir", "gradient_accumulation_steps"}:
            return "hf-trainer"
        raise SizingError(f"{where}: a JSON that is neither a DeepSpeed config nor TrainingArguments; "
                          "name it with --from-format")  # fmt: skip
    if name.endswith((".yaml", ".yml")):
        return _yaml_format(parse_yaml(text, where), where)
    words = split_command(text, where)
    from sizing.frameworks.read_engines import engine_of

    engine = engine_of(words)
    if engine is not None:
        return engine
    if any(w.endswith(".py") for w in words) or any(w.startswith("--tensor-model-parallel") for w in words):
        return "megatron"
    raise SizingError(f"{where}: cannot tell its framework; name it with --from-format ({', '.join(READ_FORMATS)})")


def _yaml_format(data: dict, where: str) -> str:
    keys = set(data)
    if keys & {"base_model", "adapter", "sequence_len", "micro_batch_size", "datasets"}:
        return "axolotl"
    if keys & {"distributed_type", "compute_environment"}:
        return "accelerate"
    if "trainer" in keys and isinstance(data["trainer"], dict):
        return "nemo"
    text = repr(data)
    if "tensor_model_parallel_size" in text or "micro_batch_size" in text:
        return "megatron-yaml"
    raise SizingError(f"{where}: cannot tell its framework; name it with --from-format ({', '.join(READ_FORMATS)})")
