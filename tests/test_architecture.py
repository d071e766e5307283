"""The layering of docs/architecture.md, read from the source: which package may import which, and no import
cycles between modules."""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("dnb_env", "baselines", "agents", "registry", "dnb_web")

#: What each package may import of the project, besides itself (docs/architecture.md's table).
ALLOWED = {
    "dnb_env": set(),
    "baselines": {"dnb_env"},
    "agents": {"dnb_env", "baselines"},
    "registry": {"dnb_env", "baselines", "agents"},
    "dnb_web": {"dnb_env", "baselines", "agents", "registry"},
}
#: The one module of a lower floor allowed to import a higher one: the command line starts the web app.
EXCEPTIONS = {("registry.cli", "dnb_web")}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _imports(name: str, path: pathlib.Path, top_level_only: bool) -> set[str]:
    """The project modules ``name`` imports (absolute or relative; only at module level if asked)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[:len(here) - node.level + 1]
                base = ".".join(here + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m.split(".")[0] in PACKAGES}


def _owner(module: str, modules: dict) -> str | None:
    """The project module that ``module`` (maybe ``package.name`` of a non-module name) is, or None."""
    while module and module not in modules:
        module = module.rpartition(".")[0]
    return module or None


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_points_up_the_layers(package):
    modules = _modules()
    wrong = []
    for name, path in modules.items():
        if name.split(".")[0] != package:
            continue
        for target in _imports(name, path, top_level_only=False):
            top = target.split(".")[0]
            if top != package and top not in ALLOWED[package] and (name, top) not in EXCEPTIONS:
                wrong.append(f"{name} imports {target}")
    assert not wrong, "imports against the layering:\n" + "\n".join(sorted(wrong))


def test_no_import_cycles_between_modules():
    """Imports form no cycle between modules, those inside functions included (a late import is still a
    dependency)."""
    modules = _modules()
    graph = {name: {_owner(t, modules) for t in _imports(name, path, top_level_only=False)} - {None, name}
             for name, path in modules.items()}
    # a package's __init__ importing its own submodules is how packages re-export: not a cycle of note
    for name in graph:
        graph[name] = {t for t in graph[name] if not t.startswith(name + ".")}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components, recursive (the graph is a few hundred nodes)
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
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
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_the_checks_see_a_wrong_import(tmp_path):
    """The layering check reads imports the way the rules mean them: relative, from-imports and late ones."""
    pkg = tmp_path / "dnb_env"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\ndef f():\n    from agents.base import Agent\n")
    (pkg / "b.py").write_text("import numpy\n")
    found = _imports("dnb_env.a", pkg / "a.py", top_level_only=False)
    assert {"dnb_env", "dnb_env.b", "agents.base", "agents.base.Agent"} <= found
    assert _imports("dnb_env.a", pkg / "a.py", top_level_only=True) == {"dnb_env", "dnb_env.b"}
    assert _imports("dnb_env.b", pkg / "b.py", top_level_only=True) == set()


def test_nothing_imports_the_command_line():
    """``registry.cli`` is the top floor: no module of the five packages imports it."""
    modules = _modules()
    wrong = [f"{name} imports {target}" for name, path in modules.items() if name != "registry.cli"
             for target in _imports(name, path, top_level_only=False) if _owner(target, modules) == "registry.cli"]
    assert not wrong, "\n".join(sorted(wrong))
