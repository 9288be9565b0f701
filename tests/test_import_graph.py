"""The import graph of the project's packages, read from the source (every module parsed with
ast, relative imports resolved, imports inside functions included, `if TYPE_CHECKING:` blocks
left out since they never run):

- it has no cycle, not even one hidden behind an import placed inside a function;
- `sizing` is the core: it never imports torch, transformers, reference_model or hf_meta (the `hf`
  extra's meta-device counts) at module level, and only the command layer (sizing/cli/*) imports
  them at all, inside the command bodies;
- `sizing` never imports heavy optional packages at module level (`sizing estimate` stays light);
- neither package imports examples/.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sizing", "reference_model", "hf_meta", "examples")
HEAVY = ("torch", "fvcore", "pandas", "numpy", "matplotlib")  # never at module level in sizing
COMMAND_LAYER = "sizing.cli"  # the only part of sizing that may run the reference model
# sizing modules outside the command layer that import torch / reference_model inside a
# function, each with its reason. Empty is the goal.
LAYERING_EXCEPTIONS = {
    # `sizing report --with-verification`: the hook that asks reference_model for verification.md.
    "sizing.report.build": "the verification-page hook of `sizing report --with-verification`",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def _lazy_exports(path: Path) -> dict[str, str]:
    """A package's `_LAZY = {name: module}` table (names it lends, loaded on first use)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


LAZY = {name: _lazy_exports(path) for name, path in MODULES.items() if path.name == "__init__.py"}


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # a module of MODULES, or the top-level name of an outside package
    line: int
    in_function: bool


class _Collector(ast.NodeVisitor):
    def __init__(self, name: str, is_package: bool):
        self.name, self.is_package = name, is_package
        self.depth = 0
        self.found: list[Import] = []

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_If(self, node):
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        ):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def _add(self, target: str, node):
        if target not in MODULES:  # an outside package: keep its top-level name
            target = target.split(".")[0]
        self.found.append(Import(self.name, target, node.lineno, self.depth > 0))

    def visit_Import(self, node):
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node):
        if node.level:
            package = self.name if self.is_package else self.name.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{node.module}" if node.module else package
        else:
            base = node.module
        for alias in node.names:
            candidate = f"{base}.{alias.name}"
            lent = LAZY.get(base, {}).get(alias.name)  # a name the package loads from one of its modules
            self._add(candidate if candidate in MODULES else lent or base, node)  # `from pkg import submodule`


def _imports(name: str) -> list[Import]:
    path = MODULES[name]
    collector = _Collector(name, path.name == "__init__.py")
    collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return collector.found


IMPORTS = {name: _imports(name) for name in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module, or a module importing itself
    (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _in(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_graph_sees_every_module_and_their_imports():
    assert {
        "sizing",
        "sizing.cli.verify",
        "reference_model.verify.registry",
        "reference_model.verify.check",
        "examples.train_demo",
    } <= set(MODULES)
    targets = {(i.target, i.in_function) for i in IMPORTS["sizing.cli.verify"]}
    assert ("reference_model.verify.registry", True) in targets and ("sizing.cli.option_layer", False) in targets
    relative = {i.target for i in IMPORTS["reference_model.verify.registry"]}
    assert {"reference_model.verify.check", "reference_model.counting.params", "sizing.inputs.config"} <= relative


def test_no_import_cycle():
    graph = {name: {i.target for i in found if i.target in MODULES} for name, found in IMPORTS.items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle_hidden_in_a_function():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _cycles(graph) == [["a", "b", "c"], ["e"]]


@pytest.mark.parametrize("name", [n for n in MODULES if _in(n, "sizing")])
def test_sizing_keeps_torch_and_the_reference_model_in_the_command_layer(name):
    for i in IMPORTS[name]:
        runs_model = i.target.split(".")[0] in ("torch", "reference_model", "hf_meta", "transformers")
        if i.target.split(".")[0] in HEAVY or runs_model:
            assert i.in_function, f"{name}:{i.line} imports {i.target} at module level"
        if runs_model:
            assert _in(name, COMMAND_LAYER) or name in LAYERING_EXCEPTIONS, (
                f"{name}:{i.line} imports {i.target} outside the command layer ({COMMAND_LAYER})"
            )


@pytest.mark.parametrize("name", [n for n in MODULES if not _in(n, "examples")])
def test_packages_never_import_the_examples(name):
    assert not [i for i in IMPORTS[name] if _in(i.target, "examples")]


def _package_of(module: str) -> str:
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


@pytest.mark.parametrize("package", ["sizing", "reference_model", "hf_meta"])
def test_no_import_reaches_past_a_package_init(package):
    """Code imports another package's names from the package (`from sizing.memory import
    training_memory`), never from its modules: a package's modules are its own business."""
    reaching = []
    for name, path in MODULES.items():
        if not name.startswith(package):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in MODULES:
                target = node.module
                if MODULES[target].name == "__init__.py" or target.split(".")[0] not in (
                    "sizing",
                    "reference_model",
                    "hf_meta",
                ):
                    continue
                owner = target.rpartition(".")[0]
                inside = _package_of(name) == owner or _package_of(name).startswith(owner + ".")
                if not inside:
                    reaching.append(f"{name}:{node.lineno} imports {target}")
    assert reaching == []
