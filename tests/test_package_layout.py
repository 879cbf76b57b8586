"""The package's layout: no import cycle between its modules or between its
subpackages (module-level and function-level imports alike), every public
name and every module path the documents show still imports, and
``python -m wavelab`` is the command."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import wavelab

PACKAGE = Path(wavelab.__file__).parent
ROOT = Path(__file__).resolve().parents[1]

Graph = dict[str, set[str]]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    """Every module of the package by name (``__main__`` files left out:
    nothing imports them). The native module has only its stub."""
    found = {_module_name(p): p for p in PACKAGE.rglob("*.py") if p.name != "__main__.py"}
    found["wavelab._native"] = PACKAGE / "_native.pyi"
    return found


def _resolve(target: str, known: Mapping[str, Path]) -> str | None:
    """The package's module that importing ``target`` names (its longest
    known prefix), or None for a module outside the package."""
    if target != "wavelab" and not target.startswith("wavelab."):
        return None
    parts = target.split(".")
    while parts and ".".join(parts) not in known:
        parts.pop()
    return ".".join(parts) if parts else None


def import_graph() -> Graph:
    """Module -> the package's modules it imports, anywhere in its file (at
    the top, in a function, under ``if TYPE_CHECKING``). ``from P import N``
    names the submodule ``P.N`` when there is one, else ``P``."""
    known = _modules()
    graph: Graph = {m: set() for m in known}
    for name, path in known.items():
        if path.suffix == ".pyi":
            continue
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = name.split(".") if is_package else name.split(".")[:-1]
                    anchor = here[: len(here) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    targets.append(full if full in known else base)
            for t in targets:
                resolved = _resolve(t, known)
                if resolved is not None and resolved != name:
                    graph[name].add(resolved)
    return graph


def unit_of(module: str) -> str:
    """The subpackage (or top-level module) a module belongs to:
    ``wavelab.sweep.store`` -> ``wavelab.sweep``; the package itself is its own."""
    return ".".join(module.split(".")[:2])


def unit_graph(graph: Graph) -> Graph:
    """The import graph between subpackages (and top-level modules)."""
    out: Graph = {}
    for a, targets in graph.items():
        out.setdefault(unit_of(a), set())
        for b in targets:
            if unit_of(a) != unit_of(b):
                out[unit_of(a)].add(unit_of(b))
    return out


def find_cycle(graph: Graph) -> list[str] | None:
    """A cycle of ``graph`` as the list of its nodes, the first repeated at
    the end, or None (depth-first search, iterative)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path = [start]
        stack: list[Iterable[str]] = [iter(sorted(graph.get(start, ())))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)  # type: ignore[call-overload]
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_the_cycle_finder_finds_cycles_and_only_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"x": set(), "a": {"b"}, "b": {"b2"}, "b2": {"b"}}) == ["b", "b2", "b"]


def test_the_graph_sees_imports_at_the_top_and_inside_functions():
    g = import_graph()
    # at the top of the file
    assert "wavelab.analysis.metrics" in g["wavelab.results.summary"]
    # inside a function (the command line imports its heavier parts lazily)
    assert "wavelab.plot.run_plots" in g["wavelab.cli.run_commands"]
    # `from wavelab import _native` names the native module, not the package
    assert "wavelab._native" in g["wavelab.runner.simulate"]
    assert sum(len(t) for t in g.values()) > 150


def test_no_import_cycle_between_modules():
    cycle = find_cycle(import_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_no_import_cycle_between_subpackages():
    units = unit_graph(import_graph())
    assert {"wavelab.scenario", "wavelab.results", "wavelab.analysis", "wavelab.sweep"} <= set(
        units
    )
    cycle = find_cycle(units)
    assert cycle is None, " -> ".join(cycle or [])


def test_data_flows_one_way_through_the_stages():
    """The lower stages never import the higher ones."""
    units = unit_graph(import_graph())
    order = [
        "wavelab.scenario",
        "wavelab.analysis",
        "wavelab.results",
        "wavelab.runner",
        "wavelab.sweep",
        "wavelab.experiments",
        "wavelab.cli",
    ]
    for i, low in enumerate(order):
        assert not units[low] & set(order[i + 1 :]), (low, units[low] & set(order[i + 1 :]))


def test_every_public_name_of_the_package_imports():
    for name in wavelab.__all__:
        assert getattr(wavelab, name) is not None, name
    from wavelab import PathError, Results, run
    from wavelab.results import Results as FromResults
    from wavelab.runner import run as r

    assert FromResults is Results and r is run and issubclass(PathError, LookupError)


def _documented_paths() -> set[str]:
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found: set[str] = set()
    for t in texts:
        found |= set(re.findall(r"\bwavelab(?:\.[A-Za-z_]\w*)+", t.read_text(encoding="utf-8")))
    return found


def test_every_module_path_the_documents_show_imports():
    paths = _documented_paths()
    # the ones the README and the docs are known to show
    assert {"wavelab.analysis.rtt_cdf", "wavelab.analysis.RATE_WINDOW", "wavelab.runner"} <= paths
    for path in sorted(paths):
        parts = path.split(".")
        obj = None
        for k in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:k]))
            except ImportError:
                continue
            for attr in parts[k:]:
                obj = getattr(obj, attr)
            break
        assert obj is not None, path


def test_python_dash_m_wavelab_is_the_command():
    out = subprocess.run(
        [sys.executable, "-m", "wavelab", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"wavelab {wavelab.__version__}"
    out = subprocess.run(
        [sys.executable, "-m", "wavelab.cli", "scenarios"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "demo" in out.stdout
