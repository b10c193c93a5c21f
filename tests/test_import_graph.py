"""lampy's import graph has no circle: every import, including those inside functions
(only ``if TYPE_CHECKING:`` blocks are left out), goes one way between modules."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _modules() -> dict[str, Path]:
    mods = {}
    for path in (ROOT / "lampy").rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = path
    return mods


def _resolve(name: str, mods: dict[str, Path]) -> str | None:
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path, mods: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text())
    skipped = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names
            ]
        else:
            continue
        for t in targets:
            resolved = _resolve(t, mods) if t.startswith("lampy") else None
            if resolved and resolved != module:
                found.add(resolved)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_import_graph_has_no_circle() -> None:
    """No two modules of lampy import each other, directly or through others."""
    mods = _modules()
    graph = {m: _imports(m, p, mods) for m, p in mods.items()}
    assert len(graph) > 100
    assert _cycles(graph) == []


def test_the_memory_module_imports_nothing_from_the_engine() -> None:
    """lampy/_memory.py (allocation and ownership) sits below the engine."""
    mods = _modules()
    imported = _imports("lampy._memory", mods["lampy._memory"], mods)
    assert not any(m.startswith("lampy.autograd") for m in imported), imported


NODE_FIELDS = "held|value|scope|grad|charged|version|needs_grad|params|versions|handle|kept|watch"


def test_only_the_node_changes_its_fields() -> None:
    """A Node's fields are written by its own transitions (``lampy/autograd/_node.py``);
    the one exception is the ledger's hot path, which writes ``charged`` and drops
    ``value`` (``lampy/autograd/_ledger.py``)."""
    import re

    write = re.compile(rf"\b(node|n|inp|leaf|root)\.({NODE_FIELDS})\s*(=|\+=|-=)[^=]")
    found = []
    for path in (ROOT / "lampy").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "lampy/autograd/_node.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = write.search(line.split("#")[0])
            if m is None or line.strip().startswith(('"', "``")):
                continue
            if rel == "lampy/autograd/_ledger.py" and m.group(2) in ("charged", "value"):
                continue
            found.append(f"{rel}:{number}: {line.strip()}")
    assert found == []
