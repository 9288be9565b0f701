"""Text and markdown tables (tabulate) and CSV (the standard library) for the CLI's outputs.

tabulate is imported inside `table`, when a table is printed: `import sizing.cli` and the JSON
and CSV outputs do not load it (it brings importlib.metadata and wcwidth, tens of ms).
"""

from __future__ import annotations

import csv
import io

MARKDOWN_TABLE, TEXT_TABLE = "pipe", "simple"  # tabulate's names for the two layouts


def _is_number(text: str) -> bool:
    stripped = text.replace(",", "").replace(".", "").replace("-", "").replace("%", "").strip()
    return stripped.isdigit()


def _alignment(cells: list[list[str]], n_columns: int) -> list[str]:
    """Right-align a column whose every non-empty cell is a number (commas, signs, % allowed)."""

    def numeric(i: int) -> bool:
        values = [row[i] for row in cells if row[i]]
        return bool(values) and all(_is_number(v) for v in values)

    return ["right" if numeric(i) else "left" for i in range(n_columns)]


def table(headers: list[str], rows: list[list], fmt: str = "table") -> str:
    """fmt 'table': aligned text columns under a dashed rule; 'markdown': a pipe table.
    Cells are shown as str() gives them (no number parsing, leading spaces kept for indented
    sub-rows); numbers align right."""
    from tabulate import tabulate  # lazily: see the module docstring

    cells = [[str(c) for c in row] for row in rows]
    text = tabulate(
        cells,
        headers=headers,
        tablefmt=MARKDOWN_TABLE if fmt == "markdown" else TEXT_TABLE,
        disable_numparse=True,
        preserve_whitespace=True,
        colalign=_alignment(cells, len(headers)),
    )
    return "\n".join(line.rstrip() for line in text.splitlines())


def csv_text(headers: list[str], rows: list[list]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(rows)
    return buffer.getvalue()


def heading(text: str, fmt: str, level: int = 2) -> str:
    return f"{'#' * level} {text}" if fmt == "markdown" else f"{text}\n{'=' * len(text)}" if level == 1 else text
