"""Plain-text and markdown tables without dependencies (the estimate path stays light;
reports use pandas + tabulate)."""

from __future__ import annotations

import csv
import io


def _is_number(text: str) -> bool:
    stripped = text.replace(",", "").replace(".", "").replace("-", "").replace("%", "").strip()
    return stripped.isdigit()


def table(headers: list[str], rows: list[list], fmt: str = "table") -> str:
    """fmt 'table': aligned text columns; 'markdown': a pipe table. Numbers align right."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    right = [all(_is_number(r[i]) for r in cells if r[i]) and any(r[i] for r in cells) for i in range(len(headers))]

    def line(values, sep):
        padded = [v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right)]
        return sep.join(padded)

    if fmt == "markdown":
        rule = ["-" * (w - 1) + ":" if r else "-" * w for w, r in zip(widths, right)]
        out = ["| " + line(headers, " | ") + " |", "| " + " | ".join(rule) + " |"]
        out += ["| " + line(r, " | ") + " |" for r in cells]
        return "\n".join(out)
    out = [line(headers, "  "), "  ".join("-" * w for w in widths)]
    out += [line(r, "  ") for r in cells]
    return "\n".join(line.rstrip() for line in out)


def csv_text(headers: list[str], rows: list[list]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(rows)
    return buffer.getvalue()


def heading(text: str, fmt: str, level: int = 2) -> str:
    return f"{'#' * level} {text}" if fmt == "markdown" else f"{text}\n{'=' * len(text)}" if level == 1 else text
