"""What a reader makes of a file: Knobs (an option of the commands, its value, and the file
field it came from), the fields it did not use, and notes; `Reading` is the small builder each
reader fills, so that a field is marked used only when a knob or a note took it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sizing.validate import SizingError, show


class Knob(NamedTuple):
    key: str  # the option's key in sizing/cli/spec_table.py (seq_len, tp, preset, ...)
    value: Any  # as the flag takes it: a number, a name, True for an on flag
    field: str  # where in the file, e.g. "training.seq_len = 8192"


@dataclass(frozen=True)
class FileSettings:
    """A framework's file read as the options of this tool (sizing.frameworks)."""

    path: str
    format: str  # a key of sizing.frameworks.detect.READ_FORMATS
    knobs: tuple[Knob, ...]
    ignored: tuple[str, ...]  # "field = value" of every setting the calculator does not use
    notes: tuple[str, ...] = ()  # how a setting was mapped where it is not one flag
    model: Any = None  # a ModelConfig the file states whole (Megatron's architecture flags), else None

    def get(self, key: str, default: Any = None) -> Any:
        for knob in self.knobs:
            if knob.key == key:
                return knob.value
        return default

    def keys(self) -> set[str]:
        return {k.key for k in self.knobs}


def shown(value: Any) -> str:
    """A file value as the report prints it (short)."""
    if isinstance(value, str):
        return show(value, limit=60)
    text = repr(value) if not isinstance(value, (int, float, bool)) else str(value).lower()
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class Reading:
    """The builder a reader fills from a file's fields (dotted names for nested ones)."""

    path: str
    format: str
    fields: dict[str, Any]
    knobs: list[Knob] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    model: Any = None
    alias: dict[str, str] = field(default_factory=dict)  # a short name -> the dotted field it stands for

    def name(self, name: str) -> str:
        """The field `name` stands for: itself, or the dotted field its alias names."""
        return name if name in self.fields else self.alias.get(name, name)

    @property
    def where(self) -> str:
        return f"{show(self.path, limit=120)} ({self.format})"

    def has(self, name: str) -> bool:
        name = self.name(name)
        return name in self.fields and self.fields[name] is not None

    def get(self, name: str, default: Any = None) -> Any:
        """The field's value (and it is marked used), or default."""
        name = self.name(name)
        if name in self.fields:
            self.used.add(name)
            value = self.fields[name]
            return default if value is None else value
        return default

    def first(self, *names: str) -> tuple[str, Any] | None:
        """(name, value) of the first of names the file sets."""
        for name in names:
            if self.has(name):
                return self.name(name), self.get(name)
        return None

    def set(self, key: str, value: Any, *names: str) -> None:
        """A knob `key` = value, taken from the fields `names` (all marked used)."""
        if value is None:
            return
        names = tuple(self.name(n) for n in names)
        for name in names:
            self.used.add(name)
        described = ", ".join(f"{n} = {shown(self.fields.get(n))}" for n in names) or f"a {self.format} file"
        if any(k.key == key for k in self.knobs):
            self.knobs[:] = [k for k in self.knobs if k.key != key]
        self.knobs.append(Knob(key, value, described))

    def take(self, key: str, name: str, convert=None) -> Any:
        """The knob `key` from one field, converted (convert(value) may raise SizingError or
        return None: not used)."""
        if not self.has(name):
            return None
        name = self.name(name)
        value = self.get(name)
        try:
            value = convert(value) if convert else value
        except (TypeError, ValueError) as exc:
            raise SizingError(f"{self.where}: {name} ({shown(self.fields[name])}) {exc}") from None
        self.set(key, value, name)
        return value

    def note(self, text: str, *names: str) -> None:
        self.notes.append(text)
        self.used.update(self.name(n) for n in names)

    def fail(self, name: str, why: str) -> SizingError:
        name = self.name(name)
        return SizingError(f"{self.where}: {name} ({shown(self.fields.get(name))}) {why}")

    def done(self) -> FileSettings:
        ignored = tuple(f"{n} = {shown(v)}" for n, v in self.fields.items() if n not in self.used)
        return FileSettings(self.path, self.format, tuple(self.knobs), ignored, tuple(self.notes), self.model)


def integer(value: Any) -> int:
    """A whole number from a file (an int, or text of one); bool and fractions refused."""
    if isinstance(value, bool):
        raise ValueError("must be a whole number, not true/false")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise ValueError("must be a whole number")


def boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.strip().lower() in ("true", "1", "yes")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ValueError("must be true or false")
