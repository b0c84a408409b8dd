"""No import circle inside claude_print, and each package imports only the ones below it.

Every `import claude_print.x` / `from claude_print import x` / `from . import x` in a
module counts as an edge, wherever it sits: a lazy import inside a function still ties
the two modules together (it only moves the failure to the call). Only imports under
`if TYPE_CHECKING:` are left out: they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set

PACKAGE = "claude_print"
ROOT = Path(__file__).resolve().parents[2] / PACKAGE


def _modules(root: Path) -> Dict[str, Path]:
    """Every module and package of the package tree, by dotted name."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join((PACKAGE, *parts))] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return name == "TYPE_CHECKING"


def _targets(node: ast.AST, known: Set[str]) -> Set[str]:
    """The package's modules one import statement names."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    if not isinstance(node, ast.ImportFrom):
        return set()
    if node.level == 1:  # `from . import x`, `from .x import y`
        base = f"{PACKAGE}.{node.module}" if node.module else PACKAGE
    elif node.level == 0 and node.module and node.module.split(".")[0] == PACKAGE:
        base = node.module
    else:
        return set()
    # `from claude_print import runner` names a module; `from claude_print.command.cli import main`
    # names the module before the last dot.
    found = {f"{base}.{alias.name}" for alias in node.names} & known
    return found or ({base} & known)


def imports_of(source: str, known: Set[str]) -> Set[str]:
    """Every module of the package that `source` imports, at any depth but TYPE_CHECKING."""
    out: Set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for branch in node.orelse:
                visit(branch)
            return
        out.update(_targets(node, known))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return out


def import_graph(root: Path = ROOT) -> Dict[str, Set[str]]:
    modules = _modules(root)
    known = set(modules) | {PACKAGE}
    graph = {}
    for name, path in modules.items():
        graph[name] = imports_of(path.read_text(encoding="utf-8"), known) - {name, PACKAGE}
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One cycle as [a, b, ..., a], or None (depth-first search, colouring nodes)."""
    done: Set[str] = set()
    path: List[str] = []
    on_path: Set[str] = set()

    def visit(node: str) -> Optional[List[str]]:
        path.append(node)
        on_path.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt in on_path:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in done:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        on_path.discard(node)
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def test_the_package_has_no_import_circle() -> None:
    graph = import_graph()
    # cli imports run.entry inside a function only: the graph must still hold that edge.
    assert f"{PACKAGE}.run.entry" in graph[f"{PACKAGE}.command.cli"], "lazy imports not read"
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_every_kind_of_import_is_an_edge() -> None:
    known = {PACKAGE, f"{PACKAGE}.a", f"{PACKAGE}.b", f"{PACKAGE}.c", f"{PACKAGE}.d"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "import claude_print.a\n"
        "from . import b\n"
        "def f():\n"
        "    from claude_print.c import thing\n"
        "if TYPE_CHECKING:\n"
        "    from claude_print import d\n"
        "import json\n"
    )
    assert imports_of(source, known) == {f"{PACKAGE}.a", f"{PACKAGE}.b", f"{PACKAGE}.c"}


def test_a_cycle_is_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


# --- the packages: each imports only what its __init__ says ------------------------------

GROUND = "ground"  # the modules beside claude_print/__init__.py


def _home(module: str) -> str:
    """`claude_print.tui.keys` -> "tui"; a module beside __init__.py -> GROUND."""
    parts = module.split(".")
    if len(parts) == 1:
        return GROUND  # claude_print itself: its __init__ holds __version__ alone
    return parts[1] if len(parts) > 2 or (ROOT / parts[1]).is_dir() else GROUND


def allowed_imports() -> Dict[str, Set[str]]:
    """Each package's "May import:" line: the packages (and GROUND) it may use."""
    allowed = {GROUND: {GROUND}}
    for init in sorted(ROOT.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        said = [line for line in doc.splitlines() if line.startswith("May import:")]
        assert len(said) == 1, f"{init}: no 'May import:' line"
        names = said[0][len("May import:") :].strip().rstrip(".")
        listed = set() if names == "nothing of claude_print" else set(names.split(", "))
        allowed[init.parent.name] = listed | {init.parent.name}
    return allowed


def test_each_package_imports_only_what_its_init_allows() -> None:
    """The layers of the package map (docs/how-a-run-works.md): an import across packages
    goes down, never up nor sideways, so the map can be read from the top."""
    allowed = allowed_imports()
    wrong = []
    for module, imports in sorted(import_graph().items()):
        home = _home(module)
        if module.endswith("__main__"):
            continue  # `python -m`'s entry: it calls whichever package's main
        for target in sorted(imports):
            if _home(target) not in allowed[home]:
                wrong.append(f"{module} -> {target} ({home} may import {sorted(allowed[home])})")
    assert wrong == []


def test_the_allowed_imports_have_no_circle() -> None:
    allowed = allowed_imports()
    graph = {package: names - {package} for package, names in allowed.items()}
    assert set(graph) >= {n for names in graph.values() for n in names}, "unknown package"
    assert find_cycle(graph) is None


# --- the run's face ------------------------------------------------------------------------


def faces() -> Dict[str, Set[str]]:
    """Each package's "Face:" line, where it has one: the only modules of it that the
    packages above may import."""
    found = {}
    for init in sorted(ROOT.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        for line in doc.splitlines():
            if line.startswith("Face:"):
                names = line[len("Face:") :].strip().rstrip(".").split(", ")
                found[init.parent.name] = {f"{PACKAGE}.{init.parent.name}.{n}" for n in names}
    return found


def test_warm_start_holds_a_run_only_through_its_face() -> None:
    """A keeper boots and runs a session through `run.held_run`, never the Session's
    insides (issue 44); the command line starts one through `run.entry`: nothing above
    `run` imports more of it than that and its signals."""
    face = faces()
    assert face["run"] == {f"{PACKAGE}.run.{m}" for m in ("entry", "held_run", "signals")}
    wrong = []
    for module, imports in sorted(import_graph().items()):
        for target in sorted(imports):
            owner = _home(target)
            if owner in face and _home(module) != owner and target not in face[owner]:
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_modules_loaded_by_name_are_declared() -> None:
    """`importlib` loads what the graph above cannot see: only the held run's preload
    of the whole package does, and it names what it leaves out."""
    users = sorted(
        name
        for name, path in _modules(ROOT).items()
        if "importlib" in path.read_text(encoding="utf-8")
    )
    assert users == [f"{PACKAGE}.run.held_run"]
    from claude_print.run import held_run

    assert f"{PACKAGE}.__main__" in held_run.NOT_PRELOADED
