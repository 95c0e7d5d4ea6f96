"""The modules of ``alarms/`` (the audit included) import one way only: the graph of their imports, read from the
source with ``ast``, has no cycle, counting imports inside functions too (they run at call time). Imports inside
functions are for optional dependencies only: outside the CLI layer (``commands.py``) none names an alarms
module."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "alarms"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module or module.name, inside a function) for every import of ``path`` outside
    ``if TYPE_CHECKING:`` blocks."""
    out: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child, in_function)
            return
        if isinstance(node, ast.Import):
            out.extend((a.name, in_function) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}: relative import"
            out.append((node.module, in_function))
            out.extend((f"{node.module}.{a.name}", in_function) for a in node.names)
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return out


def _graph() -> tuple[dict[str, set[str]], dict[str, list[str]]]:
    files = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    late: dict[str, list[str]] = {}
    for name, path in files.items():
        found = _imports(path)
        graph[name] = {m for m, _ in found if m in files and m != name}
        late[name] = sorted({m for m, inside in found if inside and m in files})
    return graph, late


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_alarms_has_no_import_cycle():
    graph, _ = _graph()
    assert len(graph) > 30  # every module was read
    assert _cycles(graph) == []


def test_imports_inside_functions_name_no_alarms_module_outside_the_cli_layer():
    _, late = _graph()
    offenders = {m: names for m, names in late.items() if names and not m.endswith(".commands")}
    assert offenders == {}


def test_no_module_imports_a_private_name_of_another():
    private = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("alarms"):
                private += [f"{_module_name(path)}: {node.module}.{a.name}" for a in node.names
                            if a.name.startswith("_")]
    assert private == []
