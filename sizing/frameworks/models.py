"""The model a framework's file names, as this tool's model options: a preset when the file names
a model that has one (a hub id equal to a preset's hf_id, torchtitan's name and flavor, an
architecture equal to a preset's shapes), else the hub id or config path (--config), else a
ModelConfig built from the architecture the file states (Megatron's --num-layers ...)."""

from __future__ import annotations

from sizing.frameworks.settings import Reading
from sizing.validate import SizingError

# torchtitan's model name and flavor (torchtitan/models/*/__init__.py, e.g. llama3_configs
# "8B", "70B", "405B"; qwen3_configs; deepseekv3_configs) -> this tool's preset.
TORCHTITAN_MODELS: dict[tuple[str, str], str] = {
    ("llama3", "8B"): "llama3.1-8b",
    ("llama3", "70B"): "llama3.1-70b",
    ("llama3", "405B"): "llama3.1-405b",
    ("llama2", "7B"): "llama2-7b",
    ("llama2", "13B"): "llama2-13b",
    ("llama2", "70B"): "llama2-70b",
    ("qwen3", "8B"): "qwen3-8b",
    ("qwen3", "14B"): "qwen3-14b",
    ("qwen3", "32B"): "qwen3-32b",
    ("qwen3", "30B-A3B"): "qwen3-30b-a3b",
    ("qwen3", "235B-A22B"): "qwen3-235b-a22b",
    ("deepseek_v3", "16B"): "deepseek-v2-lite",
    ("deepseek_v3", "671B"): "deepseek-v3",
    ("llama4", "17bx16e"): "llama-4-scout",
    ("llama4", "17bx128e"): "llama-4-maverick",
    ("gpt_oss", "20b"): "gpt-oss-20b",
    ("gpt_oss", "120b"): "gpt-oss-120b",
}

# A fine-tuned or instruction-tuned release keeps its base model's shapes.
_VARIANT_SUFFIXES = ("-instruct", "-chat", "-it", "-base", "-hf", "-fp8", "-awq", "-gptq-int4", "-gptq-int8")


def preset_for_hub_id(hub_id: str) -> str | None:
    """The preset whose hf_id is `hub_id` (case-insensitive, without @revision), or whose hf_id
    is the same id without an -Instruct / -Chat / -it suffix."""
    from sizing.inputs import PRESETS, get_preset

    wanted = hub_id.partition("@")[0].strip().lower()
    by_id = {get_preset(n).hf_id.lower(): n for n in PRESETS if get_preset(n).hf_id}
    if wanted in by_id:
        return by_id[wanted]
    stripped = wanted
    for suffix in _VARIANT_SUFFIXES:
        stripped = stripped.removesuffix(suffix)
    return by_id.get(stripped)


def hub_model(reading: Reading, name: str) -> None:
    """The knob for a model field holding a hub id or a local path: its preset, else --config."""
    value = reading.get(name)
    if not isinstance(value, str) or not value.strip():
        raise reading.fail(name, "must name a model (a hub id such as Qwen/Qwen3-8B, or a path)")
    preset = preset_for_hub_id(value)
    if preset is not None:
        reading.set("preset", preset, name)
    else:
        reading.set("config", value.strip(), name)


def torchtitan_model(reading: Reading) -> None:
    """torchtitan's [model] name and flavor as a preset."""
    name, flavor = reading.get("model.name"), reading.get("model.flavor")
    if name is None:
        return
    preset = TORCHTITAN_MODELS.get((str(name), str(flavor)))
    if preset is None:
        known = ", ".join(f"{n} {f}" for n, f in TORCHTITAN_MODELS)
        raise SizingError(
            f"{reading.where}: model.name {name!r} flavor {flavor!r} has no preset here ({known}); "
            "give --preset or --config beside --from"
        )
    reading.set("preset", preset, "model.name", "model.flavor")


def architecture_model(reading: Reading, fields: dict, names: tuple[str, ...], hub_id: str | None = None) -> None:
    """A model the file states shape by shape (ModelConfig fields): the preset with exactly these
    shapes when there is one (the one whose hub id the file also names first: Llama 2 70B and
    Llama 3 70B share their shapes, not their vocabulary), else the config itself (FileSettings.model)."""
    from sizing.inputs import PRESETS, ModelConfig, get_preset

    shape = ("n_layers", "d_model", "n_heads", "d_ff", "n_kv_heads")
    named = preset_for_hub_id(hub_id) if hub_id else None
    for n in ([named] if named else []) + list(PRESETS):
        cfg = get_preset(n).config
        if all(getattr(cfg, k) == fields[k] for k in shape if k in fields) and (
            "vocab_size" not in fields or cfg.vocab_size == fields["vocab_size"]
        ):
            reading.set("preset", n, *names)
            reading.note(f"the architecture flags are {n}'s shapes: sized as preset {n}")
            return
    if "vocab_size" not in fields:
        raise SizingError(
            f"{reading.where}: the architecture matches no preset and states no vocabulary size "
            "(--vocab-size or a preset via --preset)"
        )
    reading.model = ModelConfig(**fields)
    reading.used.update(reading.name(n) for n in names)
