"""Reading a framework's file safely, as data: the same guard as a config.json (a regular file
of at most MAX_CONFIG_BYTES, never a FIFO or a device: sizing.inputs.hf.config_file), then
JSON, TOML (tomllib), YAML (PyYAML's safe loader, no aliases, bounded depth) or a command
line (shlex). No code in a file is ever run.

YAML: PyYAML is already installed with this tool (huggingface_hub depends on it), and its
SafeLoader builds only plain scalars, lists and dicts; a strict subset reader of our own would
refuse files that real tools write (flow lists, quoted keys, block scalars). Its one risk for a
reader like ours, an alias bomb (a few lines that expand to billions of nodes), is closed by
refusing anchors and aliases before anything is built; nesting is bounded as for JSON.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from sizing.validate import MAX_JSON_DEPTH, SizingError, show


def read_text(path: str) -> str:
    """The text of a regular file of at most MAX_CONFIG_BYTES (UTF-8), one SizingError line otherwise."""
    from sizing.inputs.hf import _read_regular_file

    where = f"--from {show(str(path), limit=200)}"
    try:
        raw = _read_regular_file(Path(path), where)
    except SizingError:
        raise
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SizingError(f"{where} is not UTF-8 text (a trainer config, a JSON, a YAML or a command line)") from None


def parse_json(text: str, where: str) -> dict:
    """A JSON object, with the config reader's limits (no NaN, bounded depth)."""

    def bad_constant(name: str) -> Any:
        raise SizingError(f"{where} has {name}, which is not a JSON number")

    try:
        data = json.loads(text, parse_constant=bad_constant)
    except RecursionError:
        raise SizingError(f"{where} nests deeper than {MAX_JSON_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise SizingError(f"{where} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    return _object(data, where)


def parse_toml(text: str, where: str) -> dict:
    """A TOML document (tomllib, Python 3.11+; tomli where installed on 3.10)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            raise SizingError(f"{where}: reading TOML needs Python 3.11 or later (or pip install tomli)") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SizingError(f"{where} is not valid TOML: {exc}") from None
    return _object(data, where)


def parse_yaml(text: str, where: str) -> dict:
    """A YAML mapping through PyYAML's SafeLoader, after refusing anchors, aliases and nesting
    deeper than MAX_JSON_DEPTH (checked on the event stream, before any node is built)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    depth = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise SizingError(f"{where} uses a YAML anchor or alias (&name / *name), which is not read")
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_JSON_DEPTH:
                    raise SizingError(f"{where} nests deeper than {MAX_JSON_DEPTH} levels")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise SizingError(f"{where} is not valid YAML{at}: {getattr(exc, 'problem', None) or exc}") from None
    return _object(data, where)


def split_command(text: str, where: str) -> list[str]:
    """A shell command line as its words: comments and backslash-newlines dropped, `VAR=value`
    prefixes and a leading `python -m`, `torchrun ...` launcher kept for the reader to skip."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = " ".join(line.rstrip().removesuffix("\\") for line in lines)
    try:
        return shlex.split(joined, comments=True)
    except ValueError as exc:
        raise SizingError(f"{where} is not a command line the shell would read: {exc}") from None


def _object(data: Any, where: str) -> dict:
    if not isinstance(data, dict):
        raise SizingError(f"{where} must hold a mapping of settings, not a {type(data).__name__}")
    return data


def flat(data: dict, prefix: str = "") -> dict[str, Any]:
    """A nested mapping as dotted keys ('training.seq_len': 8192); lists stay values."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flat(value, name + "."))
        else:
            out[name] = value
    return out
