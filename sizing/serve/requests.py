"""The requests a server sees: a mix of (prompt, output) lengths with their shares, from one
fixed pair or from a trace file, for the load model (load.py).

A trace file is CSV or JSONL, one row per request or per histogram bin:

    prompt_tokens,output_tokens,weight        (CSV: a header line, then rows; `#` lines skipped)
    {"prompt_tokens": 512, "output_tokens": 128, "weight": 3}     (JSONL: one object per line)

`weight` is optional (1 when absent): a count or a share, normalised here, so a raw trace (one
row per request) and a histogram (one row per bin at its representative lengths, e.g. a
ShareGPT-like distribution) read the same way. Every bad row is named on its own line (its
line number, the field, the value and what is valid). A mix of more than MAX_CLASSES distinct
pairs is binned: six prompt sextiles, and six output sextiles within each, each bin at its
weighted mean lengths (the means of the mix are kept, up to rounding).
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path

from sizing.validate import MAX_SEQ_LEN, SizingError, decimal_parts, require_int, show

FIELDS = ("prompt_tokens", "output_tokens", "weight")
MAX_CLASSES = 36  # the load model's cost grows with the classes; 6 x 6 bins keep the shape
MAX_TRACE_BYTES = 64 * 2**20
MAX_BAD_ROWS_SHOWN = 10
_BINS = 6


@dataclass(frozen=True)
class RequestClass:
    prompt: int
    output: int  # output tokens, the first from the prefill (>= 2)
    share: float  # of the requests


@dataclass(frozen=True)
class RequestMix:
    classes: tuple[RequestClass, ...]
    source: str  # "fixed" or the trace file's name

    @property
    def mean_prompt(self) -> float:
        return sum(c.share * c.prompt for c in self.classes)

    @property
    def token_prompt(self) -> int:
        """The prompt a prefill token belongs to, on average: Σ w P² / Σ w P (rounded). Causal
        prefill FLOPs per token are affine in the prompt, so this gives the mix's mean."""
        return round(sum(c.share * c.prompt**2 for c in self.classes) / self.mean_prompt)

    @property
    def mean_output(self) -> float:
        return sum(c.share * c.output for c in self.classes)

    @property
    def mean_decode_steps(self) -> float:
        """E[O - 1]: decode iterations per request (the prefill gives the first token)."""
        return sum(c.share * (c.output - 1) for c in self.classes)

    @property
    def mean_decode_context(self) -> int:
        """The mean context of a decoding sequence, each class weighted by the iterations it
        decodes: Σ w (O - 1)(P + O/2) / Σ w (O - 1), rounded down."""
        steps = self.mean_decode_steps
        return int(sum(c.share * (c.output - 1) * (c.prompt + c.output / 2) for c in self.classes) / steps)

    @property
    def longest(self) -> int:
        return max(c.prompt + c.output for c in self.classes)

    def describe(self) -> str:
        if len(self.classes) == 1:
            c = self.classes[0]
            return f"{c.prompt} in / {c.output} out"
        return (
            f"{self.source}: {len(self.classes)} classes, mean {self.mean_prompt:,.0f} in / {self.mean_output:,.0f} out"
        )

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "mean_prompt_tokens": self.mean_prompt,
            "mean_output_tokens": self.mean_output,
            "classes": [{"prompt_tokens": c.prompt, "output_tokens": c.output, "share": c.share} for c in self.classes],
        }


def fixed_mix(prompt: int, output: int) -> RequestMix:
    """Every request of `prompt` tokens in and `output` out."""
    require_int("prompt", prompt, maximum=MAX_SEQ_LEN)
    require_int("output", output, minimum=2, maximum=MAX_SEQ_LEN)
    return RequestMix((RequestClass(prompt, output, 1.0),), "fixed")


def mix_from_rows(rows: list[tuple[int, int, float]], source: str) -> RequestMix:
    """Rows (prompt, output, weight), already checked: equal pairs merged, shares normalised,
    binned past MAX_CLASSES."""
    merged: dict[tuple[int, int], float] = {}
    for prompt, output, weight in rows:
        merged[(prompt, output)] = merged.get((prompt, output), 0.0) + weight
    total = sum(merged.values())
    if not total > 0:
        raise SizingError(f"{source}: the weights sum to 0; give at least one row a positive weight")
    pairs = sorted((p, o, w / total) for (p, o), w in merged.items() if w > 0)
    if len(pairs) > MAX_CLASSES:
        pairs = _binned(pairs)
    return RequestMix(tuple(RequestClass(p, o, w) for p, o, w in pairs), source)


def _binned(pairs: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """Prompt sextiles by share, output sextiles by share within each, each bin at its weighted
    mean lengths (rounded; output at least 2)."""
    out = []
    for group in _split(sorted(pairs), key=lambda r: r[0]):
        for b in _split(sorted(group, key=lambda r: (r[1], r[0])), key=lambda r: r[1]):
            w = sum(r[2] for r in b)
            p = round(sum(r[0] * r[2] for r in b) / w)
            o = max(2, round(sum(r[1] * r[2] for r in b) / w))
            out.append((p, o, w))
    return sorted(out)


def _split(rows: list, key) -> list[list]:
    """Rows (sorted by `key`) in at most _BINS consecutive groups of about equal share; equal
    keys stay together."""
    total, groups, acc = sum(r[2] for r in rows), [[]], 0.0
    for i, r in enumerate(rows):
        groups[-1].append(r)
        acc += r[2]
        boundary = len(groups) < _BINS and acc >= total * len(groups) / _BINS
        if boundary and i + 1 < len(rows) and key(rows[i + 1]) != key(r):
            groups.append([])
    return [g for g in groups if g]


def read_trace(path: str | Path) -> RequestMix:
    """A trace file (.csv or .jsonl, by its suffix) as a mix; SizingError naming every bad row."""
    path = Path(path)
    name = show(str(path), limit=120)
    if path.suffix.lower() not in (".csv", ".jsonl"):
        raise SizingError(f"trace ({name}) must be a .csv or .jsonl file")
    try:
        if path.stat().st_size > MAX_TRACE_BYTES:
            raise SizingError(f"trace ({name}) is larger than {MAX_TRACE_BYTES // 2**20} MiB")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SizingError(f"trace ({name}) cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    reader = _jsonl_rows if path.suffix.lower() == ".jsonl" else _csv_rows
    rows, bad = reader(text)
    if bad:
        shown = [f"{path.name} line {n}: {why}" for n, why in bad[:MAX_BAD_ROWS_SHOWN]]
        more = len(bad) - len(shown)
        raise SizingError("\n".join(shown + ([f"... and {more} more bad rows"] if more else [])))
    if not rows:
        raise SizingError(f"trace ({name}) has no rows; expected {', '.join(FIELDS[:2])} and an optional weight")
    return mix_from_rows(rows, path.name)


def _csv_rows(text: str) -> tuple[list, list]:
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.startswith("#")]
    if not lines:
        return [], []
    header_line, header = lines[0][0], [h.strip() for h in next(csv.reader([lines[0][1]]))]
    missing = [f for f in FIELDS[:2] if f not in header]
    unknown = [h for h in header if h not in FIELDS]
    if missing or unknown:
        why = f"missing {', '.join(missing)}" if missing else f"unknown column {show(unknown[0])}"
        return [], [(header_line, f"header ({show(','.join(header))}): {why}; columns: {', '.join(FIELDS)}")]
    rows, bad = [], []
    for n, line in lines[1:]:
        values = next(csv.reader(io.StringIO(line)))
        if len(values) != len(header):
            bad.append((n, f"{len(values)} values for {len(header)} columns ({', '.join(header)})"))
            continue
        _check_row(dict(zip(header, (v.strip() for v in values), strict=True)), n, rows, bad)
    return rows, bad


def _jsonl_rows(text: str) -> tuple[list, list]:
    rows, bad = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            bad.append((n, "not a JSON object"))
            continue
        if not isinstance(record, dict):
            bad.append((n, f"not a JSON object ({show(record)})"))
            continue
        unknown = [k for k in record if k not in FIELDS]
        if unknown:
            bad.append((n, f"unknown field {show(unknown[0])}; fields: {', '.join(FIELDS)}"))
            continue
        _check_row(record, n, rows, bad)
    return rows, bad


def _check_row(record: dict, n: int, rows: list, bad: list) -> None:
    """Appends (prompt, output, weight) to rows, or (line, why) to bad."""
    try:
        prompt = _count(record, "prompt_tokens", 1)
        output = _count(record, "output_tokens", 2)
        weight = _weight(record.get("weight", 1))
    except SizingError as exc:
        bad.append((n, str(exc)))
        return
    rows.append((prompt, output, weight))


def _count(record: dict, field: str, minimum: int) -> int:
    if field not in record:
        raise SizingError(f"{field} missing")
    value = record[field]
    if isinstance(value, str):
        parts = decimal_parts(value)
        if parts is None or (parts[2] < 0 and parts[1]) or len(parts[1]) + parts[2] > 15:
            raise SizingError(f"{field} ({show(value)}) must be an integer >= {minimum}")
        value = parts[0] * int(parts[1] or "0") * 10 ** parts[2]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return require_int(field, value, minimum, MAX_SEQ_LEN)


def _weight(value) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise SizingError(f"weight ({show(value)}) must be a finite number >= 0") from None
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    if not ok or value > 1e15:
        raise SizingError(f"weight ({show(value)}) must be a finite number >= 0 (at most 1e15)")
    return float(value)
