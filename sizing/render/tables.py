"""Text and markdown tables (tabulate) and CSV (the standard library) for the CLI's outputs.

tabulate is imported inside `table`, when a table is printed: `import sizing.cli` and the JSON
and CSV outputs do not load it. When it is imported, `import_tabulate` spares it two imports that
were most of `sizing estimate`'s time above the floor (benchmarks/README.md):
* importlib.metadata (~15 ms unloaded): tabulate 0.10 imports it only to read its own version,
  which the installed `tabulate-<version>.dist-info` folder beside the package names as well;
* wcwidth (~10 ms, where installed): tabulate's optional wide-character (CJK) widths. The tables
  here hold no wide characters, and without it the layout is the same on every install (a fresh
  virtual environment has no wcwidth; this machine has it through IPython).
"""

from __future__ import annotations

import importlib.util
import io
import os
import re
import sys
import types

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


_DIST_INFO = re.compile(r"tabulate-([^-]+)\.dist-info$")


def _installed_tabulate_version() -> str | None:
    """tabulate's version from the name of its dist-info folder, or None where there is not exactly one."""
    spec = importlib.util.find_spec("tabulate")
    if spec is None or not spec.submodule_search_locations:
        return None
    site = os.path.dirname(next(iter(spec.submodule_search_locations)))
    try:
        found = [m.group(1) for m in map(_DIST_INFO.match, os.listdir(site)) if m]
    except OSError:
        return None
    return found[0] if len(found) == 1 else None


def import_tabulate():
    """The tabulate module, imported without wcwidth, and without importlib.metadata where its
    version can be read from its dist-info folder: during the import a stand-in answers tabulate's
    one question (its version, so `tabulate.__version__` is the real one, as pandas checks). Both
    entries of sys.modules are put back straight after, so a later import of either loads the real
    module."""
    if "tabulate" in sys.modules:
        return sys.modules["tabulate"]
    seeded: dict[str, types.ModuleType | None] = {"wcwidth": None}  # None: `import wcwidth` raises ImportError
    version = None if "importlib.metadata" in sys.modules else _installed_tabulate_version()
    if version is not None:
        stand_in = types.ModuleType("importlib.metadata")
        stand_in.PackageNotFoundError = type("PackageNotFoundError", (ModuleNotFoundError,), {})
        stand_in.version = lambda name: version if name == "tabulate" else _raise(stand_in.PackageNotFoundError(name))
        seeded["importlib.metadata"] = stand_in
    saved = {name: sys.modules.get(name, _ABSENT) for name in seeded}
    sys.modules.update(seeded)
    try:
        import tabulate
    finally:
        for name, module in saved.items():
            if module is _ABSENT:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return tabulate


_ABSENT = object()


def _raise(exc: Exception):
    raise exc


def table(headers: list[str], rows: list[list], fmt: str = "table") -> str:
    """fmt 'table': aligned text columns under a dashed rule; 'markdown': a pipe table.
    Cells are shown as str() gives them (no number parsing, leading spaces kept for indented
    sub-rows); numbers align right."""
    tabulate = import_tabulate().tabulate  # lazily: see the module docstring
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
    import csv  # only for --format csv

    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(rows)
    return buffer.getvalue()


def heading(text: str, fmt: str, level: int = 2) -> str:
    return f"{'#' * level} {text}" if fmt == "markdown" else f"{text}\n{'=' * len(text)}" if level == 1 else text
