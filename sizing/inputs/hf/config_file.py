"""Reading a config file safely: a Hugging Face config.json or this tool's own JSON.

Only a regular file of at most MAX_CONFIG_BYTES is read (a FIFO would block, /dev/zero
never ends); JSON nesting, integer digits and float overflow are bounded before any field
is converted. No code from a config file is ever run.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sizing.inputs.config import ConfigError, ModelConfig
from sizing.inputs.hf.context import stated_contexts
from sizing.inputs.hf.hub import hub_config_path, looks_like_hub_id
from sizing.inputs.hf.read import SUPPORTED_MODEL_TYPES, from_hf_config
from sizing.validate import MAX_CONFIG_BYTES, MAX_JSON_DEPTH, SizingError, show

T = TypeVar("T")


def load_config_file(path: str) -> ModelConfig:
    """A Hugging Face config.json (has `model_type`), or this tool's JSON: a dict of
    ModelConfig fields, or the output of `sizing estimate --format json` (under model.config).
    A directory is read as its config.json; a hub id (owner/name, sizing.inputs.hf.hub) as that
    repository's config.json, from the local Hugging Face cache or downloaded alone."""
    return _config_from_data(_read_json_object(path), path)


@dataclass(frozen=True)
class ConfigFile:
    """A config file read once: the architecture and the contexts it states
    (sizing.inputs.hf.context): `context` is the pretraining context, the default T for training
    cost; `served_context` is max_position_embeddings, the default for inference."""

    config: ModelConfig
    context: int | None  # None: the file states none
    context_field: str | None  # e.g. "rope_scaling.original_max_position_embeddings"
    served_context: int | None = None
    served_field: str | None = None  # e.g. "max_position_embeddings"

    def context_source(self, path: str) -> str | None:
        """Where the default training T came from, naming the served context when it differs."""
        if self.context_field is None:
            return None
        if self.context_field.startswith("the default"):  # no pretraining context stated (context.py)
            return f"{self.context_field} of {path}"
        where = f"{self.context_field} in {path}"
        if self.served_context is not None and self.served_context != self.context:
            where += f": the pretraining context; it serves {self.served_context:,} ({self.served_field})"
        return where


def read_config_file(path: str) -> ConfigFile:
    """load_config_file, plus the contexts the file states, which `sizing estimate --config`
    and `estimate(path)` use when no seq_len is given."""
    data = _read_json_object(path)
    cfg = _config_from_data(data, path)
    stated = stated_contexts(data)
    return ConfigFile(cfg, stated.training, stated.training_field, stated.served, stated.served_field)


# keys only Hugging Face configs have (this tool's JSON names them d_model, n_layers, n_heads, d_ff)
HF_ONLY_KEYS = frozenset(
    {"architectures", "hidden_size", "n_embd", "num_hidden_layers", "n_layer", "num_attention_heads", "n_head"}
    | {"intermediate_size", "torch_dtype", "transformers_version"}
)


def read_config_json(path: str) -> dict:
    """The JSON object of a config file, of a directory's config.json or of a hub id's, read
    safely (a regular file only, bounded in size, nesting, digits and floats): what every
    `--config` reads first, whatever the model family (hybrid and vision-language included)."""
    return _read_json_object(path)


def load_family_config(path: str, convert: Callable[[dict], T]) -> T:
    """A config file read as `read_config_json` does, then converted by a family's own reader
    (sizing.hybrid.hybrid_from_hf_config, sizing.vision.vlm_from_hf_config): the same safe
    reading and the same one-line errors, naming the file, for every family."""
    data = _read_json_object(path)
    try:
        return convert(data)
    except SizingError as exc:
        raise ConfigError(f"config file {_shown(path)}: {exc}") from None


def _config_from_data(data: dict, path: str) -> ModelConfig:
    try:
        if "model_type" in data:
            return from_hf_config(data)
        model = data.get("model")
        if isinstance(model, dict) and isinstance(model.get("config"), dict):
            data = model["config"]
        elif set(data) & HF_ONLY_KEYS and not set(data) & {"d_model", "n_layers", "n_heads"}:
            # vocab_size is both an HF key and ours: HF-only keys and none of our core fields say HF
            raise ConfigError(
                "looks like a Hugging Face config but has no 'model_type': add the one of its architecture "
                f"(one of {len(SUPPORTED_MODEL_TYPES)} supported, e.g. llama, qwen2, gpt2; listed in docs/config.md)"
            )
        return ModelConfig.from_dict(data)
    except ConfigError as exc:
        raise ConfigError(f"config file {_shown(path)}: {exc}") from None


def _shown(path: str) -> str:
    return show(str(path), limit=300)


def _read_json_object(path: str) -> dict:
    """The JSON object in a config file. Only a regular file of at most MAX_CONFIG_BYTES is
    read (a FIFO would block, /dev/zero never ends), and nesting deeper than MAX_JSON_DEPTH,
    integers of more than 100 digits and numbers that overflow a float are refused."""
    where = f"config file {_shown(path)}"
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise ConfigError(f"{where} names no file: give a config.json, its directory or a hub id (owner/name)")
    p = Path(path)
    if isinstance(path, str) and looks_like_hub_id(path):  # owner/name: the hub's config.json
        p = Path(hub_config_path(path))
    if p.is_dir():
        if not (p / "config.json").is_file():
            raise ConfigError(f"{where} is a directory without a config.json")
        p = p / "config.json"
    raw = _read_regular_file(p, where)
    not_json = f"{where} is not JSON: give a config.json (model code, YAML and weight files are not read)"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(not_json) from None
    stripped = text.lstrip()
    if not stripped:
        raise ConfigError(f"{where} is empty")

    def bad_constant(name: str) -> Any:
        if name in ("Infinity", "-Infinity"):  # kept for the one field where transformers writes it
            return float(name.replace("Infinity", "inf"))
        raise ConfigError(f"{where} has {name}, which is not a JSON number")

    def bounded_int(digits: str) -> int:
        if len(digits) > 100:  # int() refuses 4,300 digits; no config field needs 100
            raise ConfigError(f"{where} has an integer of {len(digits)} digits")
        return int(digits)

    def finite_float(digits: str) -> float:
        value = float(digits)
        if value in (float("inf"), float("-inf")):
            raise ConfigError(f"{where} has {show(digits)}, which overflows a float")
        return value

    try:
        data = json.loads(text, parse_constant=bad_constant, parse_int=bounded_int, parse_float=finite_float)
    except RecursionError:
        raise ConfigError(f"{where} nests deeper than {MAX_JSON_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        if stripped[0] not in "{[":
            raise ConfigError(not_json) from None
        raise ConfigError(f"{where} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must hold a JSON object, not a JSON {type(data).__name__}")
    if _depth(data) > MAX_JSON_DEPTH:
        raise ConfigError(f"{where} nests deeper than {MAX_JSON_DEPTH} levels")
    _check_infinities(data, where)
    return data


# Mamba-2's dt clamp: transformers' default (0.0, inf), which its json writer saves as [0.0, Infinity]
# (Granite 4.0-H, Nemotron-H, Bamba configs on the hub). No size field may be infinite.
INFINITE_ALLOWED = frozenset({"time_step_limit", "mamba_dt_limit"})


def _check_infinities(data: dict, where: str) -> None:
    """An Infinity anywhere but under INFINITE_ALLOWED keys is refused, naming the key."""
    stack = [(key, value) for key, value in data.items()]
    while stack:
        key, value = stack.pop()
        if key in INFINITE_ALLOWED:
            continue
        if isinstance(value, float) and value in (float("inf"), float("-inf")):
            raise ConfigError(f"{where} has Infinity in {show(key)}, which is not a JSON number")
        if isinstance(value, dict):
            stack.extend(value.items())
        elif isinstance(value, list):
            stack.extend((key, item) for item in value)


def _read_regular_file(p: Path, where: str) -> bytes:
    """The bytes of a regular file of at most MAX_CONFIG_BYTES. Checked with stat before
    opening, and again on the open descriptor (O_NONBLOCK: a FIFO swapped in between cannot
    block the open)."""
    try:
        regular = stat.S_ISREG(os.stat(p).st_mode)
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)) if regular else None
    except FileNotFoundError:
        raise ConfigError(f"{where} not found") from None
    except OSError as exc:
        raise ConfigError(f"{where} cannot be read: {exc.strerror or exc}") from None
    except ValueError:  # a NUL byte in the path
        raise ConfigError(f"{where} is not a valid path") from None
    if fd is None:
        raise ConfigError(f"{where} is not a regular file (a FIFO, a device or a socket is not read)")
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # swapped since the stat
            raise ConfigError(f"{where} is not a regular file")
        try:
            raw = handle.read(MAX_CONFIG_BYTES + 1)  # never more, whatever st_size says (/proc)
        except OSError as exc:
            raise ConfigError(f"{where} cannot be read: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{where} has more than {MAX_CONFIG_BYTES:,} bytes; a config.json has a few thousand")
    return raw


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON (a scalar is 0, {} is 1), walked without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth + 1)
            if deepest > MAX_JSON_DEPTH:
                return deepest
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest
