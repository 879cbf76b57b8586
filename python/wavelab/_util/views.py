"""Pieces of the short views of wavelab's objects in a notebook and a
terminal (``_repr_html_`` and ``__repr__``): counted words, lists cut short,
small HTML tables with every cell escaped."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

ROWS = 10
"""Rows of a table a view shows before it says how many more there are."""
VALUES = 5
"""Values of a list a view shows before it says how many more there are."""


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``1 flow``, ``4 flows``."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def listed(values: Sequence[Any], limit: int = VALUES) -> str:
    """``a, b, c`` or ``a, b, c, ... (12 in all)``."""
    shown = ", ".join(str(v) for v in values[:limit])
    return shown if len(values) <= limit else f"{shown}, ... ({len(values)} in all)"


def html_table(header: Sequence[str], rows: Sequence[Sequence[Any]], limit: int = ROWS) -> str:
    """An HTML table of ``rows`` under ``header`` (every cell escaped), its
    first ``limit`` rows and a line saying how many more there are."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>"
        for row in rows[:limit]
    )
    more = len(rows) - limit
    tail = f"<p>... and {more} more</p>" if more > 0 else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{tail}"


def html_title(kind: str, name: str, what: str) -> str:
    """``<p><b>kind name</b>: what</p>``, escaped."""
    return f"<p><b>{html.escape(kind)} {html.escape(name)}</b>: {html.escape(what)}</p>"
