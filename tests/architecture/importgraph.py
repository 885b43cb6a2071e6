"""Read the package's module-level imports and count its circles and floors.

A *circle* is a strongly connected set of two or more modules (or one importing itself); a
*floor* is one step of the longest chain of imports once every circle is folded into one node.
Only imports that run when a module loads count: those at module level, outside
``if TYPE_CHECKING:``; an import inside a function is the deliberate way to defer one and
draws no edge. ``python tests/architecture/importgraph.py`` prints both figures and every circle, for imports
that run on load, for all imports (as grimp and import-linter read them), for all imports
with the packages they load on the way, and for the graph of subpackages.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "gpunode"

Graph = dict[str, set[str]]


def modules(src: Path = SRC, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package is its __init__)."""
    found: dict[str, Path] = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module, deferred: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements: those that run on load, and with ``deferred`` those in functions."""
    if deferred:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield node
        return
    yield from _top_level(tree.body)


def _top_level(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _top_level(block)


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    keep = len(parts) - node.level + (1 if is_package else 0)
    base = ".".join(parts[:keep])
    return f"{base}.{node.module}" if node.module else base


def _resolve(name: str, known: dict[str, Path]) -> str:
    """The package's module an imported name lives in ('' when outside the package)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name


def _loaded(name: str, module: str, parents: bool) -> Iterator[str]:
    """``name`` and, with ``parents``, the packages above it that loading it runs, never
    ``module`` itself or its own ancestors (already loaded before it)."""
    while name and name != module and not module.startswith(f"{name}."):
        yield name
        name = name.rpartition(".")[0] if parents else ""


Statements = tuple[ast.Import | ast.ImportFrom, ...]


@cache
def _statements(source: str) -> tuple[Statements, Statements]:
    """A module's import statements: those that run on load, and every one. Parsed once per
    source text in a process, since several tests read the same package's graph in its forms."""
    tree = ast.parse(source)
    return tuple(_imports(tree, deferred=False)), tuple(_imports(tree, deferred=True))


def _targets(module: str, path: Path, known: dict[str, Path], deferred: bool, parents: bool) -> set[str]:
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in _statements(path.read_text(encoding="utf-8"))[deferred]:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = _base(module, is_package, node)
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for name in names:
            out.update(_loaded(_resolve(name, known), module, parents))
    return out


def graph(*, deferred: bool = True, parents: bool = True, src: Path = SRC, package: str = PACKAGE) -> Graph:
    """Module -> the package's modules it imports.

    ``deferred`` counts imports inside functions too (as grimp and import-linter do);
    ``parents`` adds the packages an import loads on the way (``a.b.c`` runs ``a/b/__init__``),
    but never a module's own ancestors, which are loaded before it in any case.
    """
    known = modules(src, package)
    return {name: _targets(name, path, known, deferred, parents) for name, path in known.items()}


def circles(g: Graph) -> list[list[str]]:
    """Strongly connected sets of more than one module (Tarjan's algorithm, iterative)."""
    state = _Tarjan(g)
    for root in sorted(g):
        if root not in state.index:
            state.visit(root)
    return sorted(group for group in state.found if len(group) > 1)


class _Tarjan:
    def __init__(self, g: Graph) -> None:
        self.g = g
        self.index: dict[str, int] = {}
        self.low: dict[str, int] = {}
        self.stack: list[str] = []
        self.on_stack: set[str] = set()
        self.found: list[list[str]] = []

    def _enter(self, node: str) -> Iterator[str]:
        self.index[node] = self.low[node] = len(self.index)
        self.stack.append(node)
        self.on_stack.add(node)
        return iter(sorted(self.g[node]))

    def visit(self, root: str) -> None:
        work = [(root, self._enter(root))]
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    self.low[parent] = min(self.low[parent], self.low[node])
                self._close(node)
            elif nxt not in self.index:
                work.append((nxt, self._enter(nxt)))
            elif nxt in self.on_stack:
                self.low[node] = min(self.low[node], self.index[nxt])

    def _close(self, node: str) -> None:
        if self.low[node] != self.index[node]:
            return
        group: list[str] = []
        while not group or group[-1] != node:
            member = self.stack.pop()
            self.on_stack.discard(member)
            group.append(member)
        self.found.append(sorted(group))


def floors(g: Graph) -> int:
    """Length in modules of the longest import chain, each circle counted as one module."""
    return len(longest_chain(g))


def longest_chain(g: Graph) -> list[str]:
    """The longest import chain, top first, each circle standing as its first module."""
    owner = {m: m for m in g}
    for group in circles(g):
        for member in group:
            owner[member] = group[0]
    folded: Graph = {}
    for module, targets in g.items():
        folded.setdefault(owner[module], set()).update(owner[t] for t in targets if owner[t] != owner[module])
    depth: dict[str, int] = {}

    def height(node: str) -> int:
        if node not in depth:
            depth[node] = 1 + max((height(t) for t in folded[node]), default=0)
        return depth[node]

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    chain = [max(sorted(folded), key=height)]
    while folded[chain[-1]]:
        chain.append(max(sorted(folded[chain[-1]]), key=height))
    return chain


def by_package(g: Graph, package: str = PACKAGE) -> Graph:
    """The graph of the package's own units: each subpackage and top-level module is one."""

    def unit(module: str) -> str:
        return ".".join(module.split(".")[:2])

    out: Graph = {}
    for module, targets in g.items():
        out.setdefault(unit(module), set()).update(unit(t) for t in targets if unit(t) != unit(module))
    return out


def main() -> None:
    for deferred, parents in ((False, False), (True, False), (True, True)):
        g = graph(deferred=deferred, parents=parents)
        found = circles(g)
        what = "load-time" if not deferred else "all" + (" + packages loaded" if parents else "")
        print(f"{what} imports: modules {len(g)}  circles {len(found)}  floors {floors(g)}")
        for group in found:
            print(f"  circle of {len(group)}: {', '.join(group)}")
        print(f"  longest: {' -> '.join(longest_chain(g))}")
    units = by_package(graph())
    print(f"subpackages and top-level modules: {len(units)}  circles {len(circles(units))}  "
          f"floors {floors(units)} (each circle folded into one floor)")
    for group in circles(units):
        print(f"  circle of {len(group)}: {', '.join(group)}")


if __name__ == "__main__":
    main()
