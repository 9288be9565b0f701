"""Small files with one job (the team's rule): no module under sizing/ or reference_model/ over
400 lines and no function over 60 (counted with ast, from its `def` line to its last line,
docstring included). The offenders are listed by name, so the failure says what to split."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sizing", "reference_model")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _functions(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.lineno, node.end_lineno - node.lineno + 1


def test_the_walk_sees_the_packages():
    names = {p.relative_to(ROOT).as_posix() for p in _modules()}
    assert {"sizing/estimate.py", "sizing/cli/spec_table.py", "reference_model/model/gpt.py"} <= names
    assert len(names) > 150


def test_no_module_over_400_lines():
    long = [f"{p.relative_to(ROOT)}: {n}" for p in _modules() if (n := _lines(p)) > MAX_MODULE_LINES]
    assert long == [], "modules over 400 lines: " + "; ".join(long)


def test_no_function_over_60_lines():
    long = [
        f"{p.relative_to(ROOT)}:{line} {name}: {n}"
        for p in _modules()
        for name, line, n in _functions(p)
        if n > MAX_FUNCTION_LINES
    ]
    assert long == [], "functions over 60 lines: " + "; ".join(long)


def test_the_counts_are_what_they_say():
    # a 3-line function (def, docstring, return) and a 2-line module count as 3 and 2
    source = 'def f():\n    """Doc."""\n    return 1\n'
    ((name, line, n),) = [
        (node.name, node.lineno, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef)
    ]
    assert (name, line, n) == ("f", 1, 3) and len("a = 1\nb = 2\n".splitlines()) == 2
