"""The tables that are data, not code: presets, GPUs and published runs, as JSON files.

Built-in files live in `sizing/data/` (shipped with the package). A user adds entries without
editing the package, in the same format, in either of two ways:

* a folder: `$SIZING_DATA_DIR`, else `$XDG_CONFIG_HOME/sizing`, else `~/.config/sizing`; a
  `gpus.json` or `presets.json` there is read by every command;
* one file for one run: `sizing --gpu-file F ...` / `sizing --presets-file F ...` (the command
  group's options), or `add_user_file("gpus", F)` from Python.

A user entry may not reuse a built-in name (it would silently change a documented figure).
Every file is read once, on first use, and checked field by field: a bad entry is one line
naming the file, the entry and the field (`gpus.json: gpu 'my-gpu': memory_gib (-1) must be
a positive number`).
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Mapping
from typing import Any

from sizing.validate import SizingError, show

# os.path, not pathlib: pathlib (with urllib.parse and ipaddress) is ~3 ms of `sizing estimate`'s start
DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
KINDS = ("gpus", "presets")
_extra_files: dict[str, list[str]] = {kind: [] for kind in KINDS}
_tables_read: list = []  # the cached readers of the tables, cleared when a user file is added


def cached_table(reader):
    """A table reader, run once on first use; read again after add_user_file."""
    cached = functools.cache(reader)
    _tables_read.append(cached)
    return cached


class DataFileError(SizingError):
    """A data file that cannot be read or has a bad entry (one line, naming the field)."""


def user_dir() -> str:
    """The user's data folder: $SIZING_DATA_DIR, else $XDG_CONFIG_HOME/sizing, else ~/.config/sizing."""
    if os.environ.get("SIZING_DATA_DIR"):
        return os.path.expanduser(os.environ["SIZING_DATA_DIR"])
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "sizing")


class LiveTable(Mapping):
    """A read-only view of one table of a reader (`reader()[index]`): it reads the files on first
    use, and a module that imported it sees user files added later."""

    def __init__(self, reader, index: int):
        self._reader, self._index = reader, index

    def _table(self) -> dict:
        return self._reader()[self._index]

    def __getitem__(self, key):
        return self._table()[key]

    def __iter__(self):
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return f"LiveTable({list(self)!r})"


def add_user_file(kind: str, path: str | os.PathLike) -> None:
    """Read `path` as a user `kind` file ("gpus" or "presets") beside the built-in table. Call
    before the table's first use (the CLI does so before any command runs)."""
    if kind not in KINDS:
        raise SizingError(f"data file kind ({show(kind)}) must be one of: {', '.join(KINDS)}")
    p = os.path.expanduser(os.fspath(path))
    if not os.path.isfile(p):
        raise DataFileError(f"{kind} file ({show(str(path))}) is not a readable file")
    _extra_files[kind].append(p)
    for reader in _tables_read:
        reader.cache_clear()


def user_files(kind: str) -> list[str]:
    """The user's files of `kind`: the folder's `<kind>.json` if present, then any added."""
    folder_file = os.path.join(user_dir(), f"{kind}.json")
    return ([folder_file] if os.path.isfile(folder_file) else []) + list(_extra_files[kind])


def read_json(path: str | os.PathLike) -> Any:
    """A JSON file's content; one line naming the file and the position of a syntax error."""
    name = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataFileError(f"{name}: cannot be read ({type(exc).__name__})") from None
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise DataFileError(f"{name}: not valid JSON ({exc.msg} at line {exc.lineno})") from None


def _refuse_constant(name: str) -> None:
    raise DataFileError(f"JSON constant {name} is not a number here (use a finite number or null)")


def builtin(name: str) -> Any:
    """The content of the built-in data file `name` (e.g. "gpus.json")."""
    return read_json(os.path.join(DATA_DIR, name))


def entries(content: Any, key: str, origin: str) -> list[dict]:
    """content[key] as a list of objects, or one line saying what the file should hold."""
    rows = content.get(key) if isinstance(content, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise DataFileError(f'{origin}: must be an object with "{key}": a list of objects')
    return rows


def check_field(label: str, field: str, annotation: str, value: Any) -> Any:
    """`value` as the field's annotation wants it (str, int, float, bool, tuple of str, dict of
    positive numbers; `X | None` allows null), else one line naming the field."""
    kinds = [k.strip() for k in annotation.split("|")]
    if value is None:
        if "None" in kinds:
            return None
        raise DataFileError(f"{label}: {field} is required")
    kind = next(k for k in kinds if k != "None")

    def fail(what: str):
        raise DataFileError(f"{label}: {field} ({show(value)}) must be {what}")

    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "str":
        return value if isinstance(value, str) else fail("a string")
    if kind == "bool":
        return value if isinstance(value, bool) else fail("true or false")
    if kind == "int":
        return value if number and isinstance(value, int) and value > 0 else fail("a positive integer")
    if kind == "float":
        return value if number and math.isfinite(value) and value > 0 else fail("a positive finite number")
    if kind.startswith("tuple"):
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return tuple(value) if ok else fail("a list of strings")
    if kind.startswith("dict"):
        ok = isinstance(value, dict) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0
            for v in value.values()
        )
        return dict(value) if ok else fail("an object of positive finite numbers")
    raise DataFileError(f"{label}: {field} has a type ({annotation}) a data file cannot hold")


def build(cls, row: dict, label: str, special: dict | None = None):
    """An instance of the dataclass `cls` from one JSON object, each field checked against its
    annotation; `special` maps a field to a function (value, label) -> the field's value."""
    import dataclasses

    special = special or {}
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(row) - set(fields))
    if unknown:
        raise DataFileError(f"{label}: unknown field(s) {', '.join(map(show, unknown))}; valid: {', '.join(fields)}")
    kwargs = {}
    for name, f in fields.items():
        if name not in row:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise DataFileError(f"{label}: {name} is required")
            continue
        value = row[name]
        kwargs[name] = special[name](value, label) if name in special else check_field(label, name, str(f.type), value)
    return cls(**kwargs)


def to_json_value(value: Any) -> Any:
    """A dataclass field's value as JSON holds it (tuples as lists, nested dataclasses as objects
    of their non-default fields)."""
    import dataclasses

    if dataclasses.is_dataclass(value):
        return {
            f.name: to_json_value(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if getattr(value, f.name) != f.default
        }
    if isinstance(value, (tuple, list)):
        return [to_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json_value(v) for k, v in value.items()}
    return value


def records(cls, content, kind: str, origin: str, key: str, special: dict | None = None) -> list:
    """The `kind` entries of one file as `cls` records, each labelled by its `key` field."""
    rows = entries(content, kind, origin)
    what = kind.rstrip("s")
    return [build(cls, row, f"{origin}: {what} {row.get(key)!r}", special) for row in rows]


class LazyRecords(Mapping):
    """Built-in records by key, each built (and checked) from its JSON object on first access:
    `sizing estimate -p llama2-7b` builds one ModelConfig, not one per preset. Every built-in
    entry is built and checked by the tests (tests/test_data_files.py); a user's files are built
    when read, so a bad entry of theirs is one line at once."""

    def __init__(self, cls, special: dict | None):
        self._cls, self._special = cls, special
        self._rows: dict = {}  # key -> (JSON object, label), or None once built
        self._built: dict = {}

    def add_row(self, name: str, row: dict, label: str) -> None:
        self._rows[name] = (row, label)
        self._built.pop(name, None)

    def add_record(self, name: str, record) -> None:
        self._rows[name], self._built[name] = None, record

    def __getitem__(self, name):
        if name not in self._built:
            row, label = self._rows[name]  # KeyError for a name not in the table
            self._built[name] = build(self._cls, row, label, self._special)
        return self._built[name]

    def __contains__(self, name) -> bool:
        return name in self._rows

    def __iter__(self):
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def _builtin_records(cls, content, kind: str, key: str, special: dict | None) -> LazyRecords:
    """The built-in file's records, unbuilt; an entry without a text key is built at once (its error)."""
    table = LazyRecords(cls, special)
    origin, what = f"{kind}.json", kind.rstrip("s")
    for row in entries(content, kind, origin):
        label = f"{origin}: {what} {row.get(key)!r}"
        name = row.get(key)
        if isinstance(name, str):
            table.add_row(name, row, label)
        else:
            record = build(cls, row, label, special)
            table.add_record(getattr(record, key), record)
    return table


def table_with_user_files(cls, kind: str, key: str, special: dict | None = None) -> tuple[Mapping, dict]:
    """(records by key, aliases): sizing/data/<kind>.json (each entry built on first use), then
    the user's <kind> files (built when read), none of which may reuse a built-in key or alias."""
    content = builtin(f"{kind}.json")
    table = _builtin_records(cls, content, kind, key, special)
    aliases = dict(content.get("aliases", {}))
    for path in user_files(kind):
        for record in records(cls, read_json(path), kind, os.path.basename(path), key, special):
            name = getattr(record, key)
            if name in table or name in aliases:
                raise DataFileError(f"{os.path.basename(path)}: {kind.rstrip('s')} {name!r} is already defined")
            table.add_record(name, record)
    return table, aliases
