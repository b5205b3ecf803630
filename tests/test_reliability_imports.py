"""The import graph of ``spca/`` has no cycle.

Every ``import`` and ``from ... import`` statement of every module is an
edge, wherever it stands: at module level and also inside functions (a lazy
import still makes the importing module depend on the imported one, and a
cycle through one only fails later, on first use).  ``from . import name``
is an edge to the submodule ``name`` when there is one, else to the package.
A package's ``__init__`` is not an implicit dependency of its submodules
(Python runs it first, but it is allowed to re-export them).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "spca"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(root: Path) -> dict[str, Path]:
    found = {_module_name(p, root): p for p in root.rglob("*.py")}
    # compiled modules (no .py): nodes without outgoing edges
    for ext in ("*.pyx",):
        for p in root.rglob(ext):
            found.setdefault(_module_name(p, root), p)
    return found


def _resolve(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = name.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the spca modules it imports (anywhere in its body)."""
    modules = _modules(root)
    top = root.name
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        if path.suffix != ".py":
            continue
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node, name, is_package)
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    targets.append(sub if sub in modules else base)
            for t in targets:
                if t.split(".")[0] != top:
                    continue
                while t and t not in modules:  # import of an attribute path
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph[name].add(t)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(u: str) -> list[str] | None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state:
                found = visit(v)
                if found:
                    return found
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state:
            found = visit(u)
            if found:
                return found
    return None


def test_import_graph_has_no_cycle():
    graph = import_graph()
    assert "spca.text._stats" in graph and "spca.text._dask" in graph
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_data_flows_one_way_in_text():
    g = import_graph()
    assert "spca.text._partials" in g["spca.text._dask"]
    assert "spca.text._dask" in g["spca.text._stats"]
    assert "spca.text._readers" in g["spca.text._parquet"]
    assert "spca.text._parquet" in g["spca.text._source"]


@pytest.mark.parametrize("lazy", [False, True])
def test_the_check_finds_a_cycle(tmp_path, lazy):
    pkg = tmp_path / "spca"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("from . import b\n")
    body = "def f():\n    from .a import x\n" if lazy else "from spca.sub.a import x\n"
    (pkg / "sub" / "b.py").write_text(body)
    (pkg / "c.py").write_text("from .sub import a\nimport numpy\n")
    graph = import_graph(pkg)
    assert graph["spca.c"] == {"spca.sub.a"}
    assert find_cycle(graph) == ["spca.sub.a", "spca.sub.b", "spca.sub.a"]
