"""Tables for the terminal: plain numbers (``1580``, not ``1.58e+03``; ``0``,
not ``1.76e-13``), and a word where a number is missing: ``not reached``
for a time that never came (a recovery, a transfer's end), ``bulk`` for the
completion time of a flow without a size (which has no end to reach), ``-``
for a figure that does not exist. pandas' own ``to_string`` prints ``NaN`` and
``inf`` and switches to exponents, which a reader has to decode; the units
are in the column names (``goodput_mbps``, ``rtt_p95_ms``)."""

from __future__ import annotations

import math
from collections.abc import Collection
from numbers import Real

import pandas as pd

NOT_REACHED = "not reached"
"""What a table shows for a time that was never reached (NaN or infinite)."""

BULK = "bulk"
"""What a table shows for the completion time of a bulk flow (one without a
``size``): it sends until the run ends, so it has no completion to reach."""

MISSING = "-"
"""What a table shows for a figure that does not exist (NaN)."""

_MAX_DECIMALS = 6
"""Below ``10 ** -6`` a figure prints as 0 (a rounding residue, not a measurement)."""


def plain(x: object, digits: int = 4, missing: str = MISSING) -> str:
    """``x`` with about ``digits`` significant digits and never an exponent:
    every digit of the integer part is kept (``158049``), a fraction gets
    the decimals its significant digits need, at most six, trailing zeros
    dropped (``0.00564``); NaN and infinities print as ``missing``. Not a
    number at all (a name): as it is."""
    if isinstance(x, bool) or not isinstance(x, Real):
        return str(x)
    v = float(x)
    if not math.isfinite(v):
        return missing
    if isinstance(x, int):
        return str(x)
    if v == 0:
        return "0"
    decimals = min(_MAX_DECIMALS, max(0, digits - 1 - math.floor(math.log10(abs(v)))))
    text = f"{v:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


REACHED_WORDS = ("completion", "recovery", "recover", "transfer", "reach")
"""A column whose name holds one of these is a time that may never come
(a flow's completion, a recovery after a handoff, a transfer's end)."""


def reach_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of ``frame`` that are times which may never be reached
    (see :data:`REACHED_WORDS`)."""
    return [c for c in frame.columns if any(w in str(c).lower() for w in REACHED_WORDS)]


def table_text(
    frame: pd.DataFrame,
    digits: int = 4,
    not_reached: Collection[str] | None = None,
) -> str:
    """``frame`` as a terminal table without its index: every number plain
    (:func:`plain`), a missing value in a column of ``not_reached`` (times
    that may never come; by default :func:`reach_columns`) as ``not
    reached``, elsewhere as ``-``."""
    if frame.empty:
        return frame.to_string(index=False)
    reach = set(reach_columns(frame) if not_reached is None else not_reached)
    # formatted here, not by pandas' ``formatters``: pandas prints a missing
    # value as NaN before any formatter sees it
    shown = pd.DataFrame(
        {
            i: [
                _cell(x, digits, NOT_REACHED if col in reach else MISSING) for x in frame.iloc[:, i]
            ]
            for i, col in enumerate(frame.columns)
        }
    )
    shown.columns = pd.Index([str(c) for c in frame.columns])
    return shown.to_string(index=False)


def _cell(x: object, digits: int, missing: str) -> str:
    if x is None or x is pd.NA or x is pd.NaT or (isinstance(x, float) and math.isnan(x)):
        return missing
    return plain(x, digits, missing)


__all__ = [
    "BULK",
    "MISSING",
    "NOT_REACHED",
    "REACHED_WORDS",
    "plain",
    "reach_columns",
    "table_text",
]
