"""Sphinx configuration of wavelab's API reference, generated from the
docstrings (``sphinx-build -W -n docs/api OUT``; tests/test_api_docs.py
builds it so that a broken reference fails)."""

from __future__ import annotations

import importlib
import types
from typing import Any

project = "wavelab"
author = "the wavelab authors"
extensions = ["sphinx.ext.autodoc"]
# the docstrings' signatures carry the types; the descriptions, the words
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}
add_module_names = False
html_theme = "alabaster"
html_title = "wavelab API reference"
exclude_patterns = ["_build"]

# every reference to wavelab's own objects must resolve (``-n``); those to
# other packages' types (no network for intersphinx) are not checked
nitpick_ignore_regex = [
    ("py:.*", r"(pd|pandas|np|numpy|pa|pyarrow|matplotlib|plotly|distributed)\..*"),
    ("py:.*", r"(Axes|Figure|DataFrame|Series|Path|TextIO|Iterator|Iterable|Callable)"),
    ("py:.*", r"(collections\.abc|typing|pathlib|concurrent|argparse|datetime|io|os)\..*"),
    ("py:.*", r"(Any|Mapping|Sequence|Collection|NDArray|Literal|TypeVar|dict\[str)"),
    ("py:.*", r"wavelab\.custom_cc\.C"),  # a type variable
    # the private modules (wavelab._native, wavelab._util) and names are
    # no API
    ("py:.*", r"(.*\.)?_[A-Za-z].*"),
]


# A package documents the names its ``__all__`` re-exports from its
# modules; each module's page then leaves them out (one description per
# object; references to the module's name resolve to the package's through
# autodoc's canonical names).
_documenting: list[str] = [""]


def _module_docstring(app: object, what: str, name: str, *rest: object) -> None:
    if what == "module":
        _documenting[0] = name


def _skip_reexported(
    app: object, what: str, name: str, obj: object, skip: bool, options: object
) -> bool | None:
    import importlib

    module = _documenting[0]
    parent = module.rpartition(".")[0]
    if what != "module" or not parent or parent == "wavelab":
        return None
    package = importlib.import_module(parent)
    documented_there = isinstance(obj, type | types.FunctionType)  # (a constant: here)
    if (
        documented_there
        and name in getattr(package, "__all__", ())
        and getattr(package, name, None) is obj
    ):
        return True
    return None


def _load(name: str) -> Any:
    """The object a dotted name names (a module, then attributes), or None."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except (ImportError, ValueError):
            continue
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
        except AttributeError:
            return None
        return obj
    return None


_documented: dict[int, list[str]] = {}


def _documented_as(env: Any, obj: Any, last: str) -> str | None:
    """The name ``obj`` is documented under (the shortest, a package's
    rather than its module's), whose last part is ``last``."""
    if not _documented:
        for name in env.get_domain("py").objects:
            found = _load(name)
            if found is not None:
                _documented.setdefault(id(found), []).append(name)
    names = [n for n in _documented.get(id(obj), []) if n.rpartition(".")[2] == last]
    return min(names, key=len) if names else None


def _in_module_scope(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """Resolves a reference written as the docstring's module sees the name
    (``WavelabError`` where the module imported it, ``Results.summary``,
    ``wavelab.results.tables.table_columns`` documented as
    ``wavelab.results.table_columns``): the object it names there, under
    the name it is documented by. The module is the one the docstring's
    object was defined in (a package's page holds its modules' objects)."""
    if node.get("refdomain") != "py":
        return None
    target = str(node["reftarget"]).lstrip("~.")
    scopes = [node.get("py:module") or ""]
    source = node.source or ""
    if "docstring of " in source:
        # the object's name, then each prefix: its class, its module
        parts = source.rpartition("docstring of ")[2].split(":")[0].split(".")
        scopes[:0] = [".".join(parts[:i]) for i in range(len(parts), 1, -1)]

    def resolve(name: str) -> Any:
        return env.get_domain("py").resolve_xref(
            env, node["refdoc"], app.builder, node["reftype"], name, node, contnode
        )

    for scope in [*scopes, ""]:
        obj = _load(f"{scope}.{target}" if scope else target)
        if obj is None:
            continue
        name = _documented_as(env, obj, target.rpartition(".")[2])
        if name is not None:
            return resolve(name)
    # a name the module imports only for its type annotations: the one
    # documented object whose name ends so
    ends = [n for n in env.get_domain("py").objects if n.endswith("." + target)]
    if len(ends) == 1:
        return resolve(ends[0])
    return None


def setup(app: object) -> None:
    app.connect("missing-reference", _in_module_scope)  # type: ignore[attr-defined]
    app.connect("autodoc-process-docstring", _module_docstring)  # type: ignore[attr-defined]
    app.connect("autodoc-skip-member", _skip_reexported)  # type: ignore[attr-defined]
