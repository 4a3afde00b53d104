"""The project's import graph, read from its source (tests/test_imports.py): import cycles between modules, and
the imports of the project's own modules placed inside functions."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("backend", "socialpub_tui", "recipes")
MARK = "deferred"


def cycles() -> list[tuple[str, ...]]:
    """Every set of modules that import one another in a circle (strongly connected components of more than one
    module), imports inside functions and under TYPE_CHECKING included, each sorted."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    counter = 0

    def visit(v: str) -> None:  # Tarjan's algorithm
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.find_modules_directly_imported_by(v)):
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
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for module in sorted(graph.modules):
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


@dataclass(frozen=True)
class LocalImport:
    """An import of one of the project's modules inside a function."""

    module: str  # the importing module
    line: int
    imported: str
    marked: bool  # a comment containing `deferred` on its line or the line above says what it defers


def _own(node: ast.Import | ast.ImportFrom) -> str | None:
    if isinstance(node, ast.ImportFrom):
        name = node.module or ""
        return name if node.level == 0 and name.split(".")[0] in PACKAGES else None
    names = [a.name for a in node.names if a.name.split(".")[0] in PACKAGES]
    return names[0] if names else None


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def local_imports(package: str) -> Iterator[LocalImport]:
    """The in-function imports of the project's own modules in `package`'s source files."""
    for path in sorted((ROOT / package).rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        tree = ast.parse(source)
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                if not isinstance(node, ast.Import | ast.ImportFrom):
                    continue
                imported = _own(node)
                if imported is None:
                    continue
                around = lines[node.lineno - 2 : node.end_lineno or node.lineno]
                yield LocalImport(_module_name(path), node.lineno, imported, any(MARK in t for t in around))


def unique_local_imports(package: str) -> list[LocalImport]:
    """local_imports without the repeats ast.walk makes of a nested function's imports."""
    return sorted(
        {(i.module, i.line): i for i in local_imports(package)}.values(), key=lambda i: (i.module, i.line)
    )
