"""The loaded runs table: parameters under their short names, typed and in
the sweep's order.

* a parameter whose values are all numbers stays numeric;
* any other is an ordered categorical whose categories are the values in
  the order the sweep gives them (``"50pkt"`` before ``"300pkt"`` when the
  sweep lists them so; sorting follows the sweep, not the text);
* beside a parameter of quantities of one unit, the sweep's runs table has
  the values as numbers in the base unit (``links[1].rate_bps``,
  :data:`wavelab.sweep.runs_table.TYPED`); they follow it, named after its
  column (``rate_bps``).

Columns: ``point`` (a sweep's), the parameters (each with its numeric
twin), ``run``, then every other column of the runs table as it was.
"""

from __future__ import annotations

import pandas as pd

from wavelab.dataset.sources import Param, Source
from wavelab.errors import WavelabError
from wavelab.sweep.runs_table import TYPED


def _typed(values: pd.Series, p: Param) -> pd.Series:
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values
    seen = [str(v) for v in values]
    order = [str(v) for v in p.order]
    categories = order + [v for v in dict.fromkeys(seen) if v not in order]
    return pd.Series(pd.Categorical(seen, categories=categories, ordered=True), index=values.index)


def runs_frame(src: Source) -> pd.DataFrame:
    """The runs table of ``src`` (see the module description)."""
    raw = src.table
    out: dict[str, pd.Series] = {}
    if "point" in raw:
        out["point"] = raw["point"]
    used = {"point"}
    for p in src.params:
        if p.path not in raw:
            continue
        if p.column in raw and p.column != p.path:
            raise WavelabError(
                f"{src.root}: the parameter {p.path} is named {p.column!r}, which is a "
                "column of the runs table already; choose another name in [sweep.names]"
            )
        out[p.column] = _typed(raw[p.path], p)
        used.add(p.path)
        for ending in TYPED.values():
            if p.path + ending in raw:
                out[p.column + ending] = raw[p.path + ending]
                used.add(p.path + ending)
    for c in raw.columns:
        if c not in used and c not in out:
            out[c] = raw[c]
    return pd.DataFrame(out, index=raw.index).reset_index(drop=True)


def param_columns(src: Source, runs: pd.DataFrame) -> list[str]:
    """The columns of ``runs`` that hold parameters (with their numeric twins)."""
    cols = []
    for p in src.params:
        cols += [c for c in (p.column, *(p.column + e for e in TYPED.values())) if c in runs]
    return cols
