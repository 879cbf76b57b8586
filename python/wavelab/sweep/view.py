"""A sweep in a few words (its ``__repr__``) and as a table of its axes
under their short names (its ``_repr_html_`` in a notebook).

The functions take a Sweep and its Axis objects (typed ``Any``: wavelab.sweep.grid imports this
module, and the import graph has no cycles, not even for type checking)."""

from __future__ import annotations

from typing import Any

from wavelab._util.views import counted, html_table, html_title, listed
from wavelab.sweep.names import column_names


def _columns(sweep: Any) -> dict[str, str]:
    """Path -> the column name the loaded results give it."""
    return column_names(sweep.param_names, sweep.names)


def _axis_name(axis: Any, columns: dict[str, str]) -> str:
    return ", ".join(columns.get(p, p) for p in axis.paths)


def _values(axis: Any) -> list[str]:
    return [v[0] if len(v) == 1 else "(" + ", ".join(str(x) for x in v) + ")" for v in axis.values]


def sweep_text(sweep: Any) -> str:
    """``Sweep('tiny', 4 points: cc (2) x seed (2))``."""
    columns = _columns(sweep)
    axes = " x ".join(f"{_axis_name(a, columns)} ({len(a.values)})" for a in sweep.axes)
    where = f", from {sweep.source}" if sweep.source else ""
    return f"Sweep({sweep.name!r}, {counted(sweep.size, 'point')}: {axes}{where})"


def sweep_html(sweep: Any) -> str:
    """The sweep's name and size, then one row per axis: its short name,
    the paths it sets and its values."""
    columns = _columns(sweep)
    rows = [
        [_axis_name(a, columns), ", ".join(a.paths), len(a.values), listed(_values(a))]
        for a in sweep.axes
    ]
    what = counted(sweep.size, "point")
    if sweep.source:
        what += f", from {sweep.source}"
    return html_title("Sweep", sweep.name, what) + html_table(
        ["parameter", "path", "n", "values"], rows
    )
