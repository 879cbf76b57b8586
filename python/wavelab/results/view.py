"""A run's results in a few words (its ``__repr__``) and as the first
columns of its summary (its ``_repr_html_`` in a notebook).

The functions take a Results (typed ``Any``: wavelab.results.frames imports this
module, and the import graph has no cycles, not even for type checking)."""

from __future__ import annotations

import math
from typing import Any

from wavelab._util.views import counted, html_table, html_title

SHOWN = (
    "flow",
    "algorithm",
    "goodput_mbps",
    "delivered_mb",
    "retransmissions",
    "rtt_p50_ms",
    "rtt_p95_ms",
)
"""Columns of :meth:`Results.summary` the notebook view shows."""


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.4g}"
    return str(v)


def _what(res: Any) -> str:
    """``complete, 2 flows, 40 s simulated``."""
    state = "complete" if res.complete else "partial"
    seconds = res.run.get("simulated")
    mode = "emulated" if res.emulated else "simulated"
    took = f", {seconds:g} s {mode}" if isinstance(seconds, int | float) else ""
    return f"{state}, {counted(len(res.flows), 'flow')}{took}"


def results_text(res: Any) -> str:
    """``Results('demo', complete, 2 flows, 40 s simulated)``."""
    return f"Results({res.scenario.name!r}, {_what(res)})"


def results_html(res: Any) -> str:
    """The run's name and state, then one row per flow of its summary."""
    summary = res.summary()
    columns = [c for c in SHOWN if c in summary]
    rows = [[_cell(v) for v in row] for row in summary[columns].itertuples(index=False)]
    return html_title("Results", res.scenario.name, _what(res)) + html_table(columns, rows)
