"""The layout's rules (issue 30; /shared/design/ARCHITECTURE.md): no import cycle among the project's modules, no
module much over 600 lines, and the numeric core without Django.

Every ``import`` statement counts, at module level or inside a function (a lazy import is still a dependency),
except those under ``if TYPE_CHECKING:``. ``from package import name`` is an edge to ``package.name`` when that is
a module, else to ``package``."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("metaeval", "survey", "api", "config")
#: the most lines a module may have; the few above it are listed with a reason
MAX_LINES = 650
LONGER: dict[str, str] = {}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool, known: set[str]) -> set[str]:
    edges: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                edges.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = module.split(".") if is_package else module.split(".")[:-1]
                    anchor = anchor[: len(anchor) - child.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in child.names:
                    full = f"{base}.{alias.name}"
                    edges.add(full if full in known else base)
            visit(child)

    visit(tree)
    resolved = set()
    for edge in edges:
        while edge and edge not in known:
            edge = edge.rpartition(".")[0]
        if edge and edge != module:
            resolved.add(edge)
    return resolved


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py", known)
            for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def strong(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                strong(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strong(node)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(cycle) for cycle in cycles)


def test_no_module_over_the_size_limit():
    over = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in _modules().items()}
    over = {name: lines for name, lines in over.items() if lines > MAX_LINES and name not in LONGER}
    assert not over, f"modules over {MAX_LINES} lines (split them by concern): {over}"


@pytest.mark.parametrize("module", ["metaeval.core", "metaeval.cli", "metaeval"])
def test_the_numeric_core_and_the_command_line_never_import_django(module):
    code = ("import importlib, pkgutil, sys, " + module.split(".")[0] + "\n"
            f"import {module} as root\n"
            "names = [m.name for m in pkgutil.walk_packages(root.__path__, root.__name__ + '.')]\n"
            "skip = ('metaeval.models', 'metaeval.admin', 'metaeval.apps', 'metaeval.views', 'metaeval.services',\n"
            "        'metaeval.selectors', 'metaeval.tasks', 'metaeval.sharding', 'metaeval.leases',\n"
            "        'metaeval.reclaimer', 'metaeval.management', 'metaeval.migrations', 'metaeval.research_urls',\n"
            "        'metaeval.option_fields', 'metaeval.run_policy', 'metaeval.checks',\n"
            "        'metaeval.templatetags')\n"
            "for name in names:\n"
            "    if name.startswith(skip):\n"
            "        continue\n"
            "    importlib.import_module(name)\n"
            "bad = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))\n"
            "assert not bad, bad[:5]\n")
    if module == "metaeval":
        code = code.replace("names = [m.name", "names = ['metaeval.cli', 'metaeval.core'] or [m.name")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
