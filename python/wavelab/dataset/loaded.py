""":class:`LoadedResults`: the runs of a results folder as one dataset,
their tables in long form with the parameters attached, read when asked
for."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from wavelab.analysis.seeds import aggregate
from wavelab.dataset.columns import param_columns, runs_frame
from wavelab.dataset.reading import read_runs_table
from wavelab.dataset.sources import Source, open_source
from wavelab.errors import WavelabError
from wavelab.results.frames import Results
from wavelab.results.tables import TABLES

SELECTORS = ("point", "run", "name")
"""Columns a selection may name besides the parameters."""
SHOWN = 10
"""Rows of the runs table the HTML view shows."""


def _shown(values: Sequence[Any]) -> str:
    return ", ".join(repr(v) for v in values)


def _wanted(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


class LoadedResults:
    """The runs of a run folder, a sweep's store or a study's store
    (:func:`load_results`).

    * :attr:`runs`: one row per run (a sweep's: per point), its parameters
      as typed columns in the sweep's order, under their short names;
    * :attr:`seeds`: per point without its seed, the mean and 95 %
      confidence interval of each metric over the seeds;
    * :meth:`series`, :meth:`flows`, :meth:`rtt`, :meth:`table`: a table of
      every run in long form, the parameters attached, read from the
      Parquet files when called;
    * :meth:`run`: one run's :class:`~wavelab.results.Results`.
    """

    def __init__(self, source: Source) -> None:
        self._src = source
        self.runs: pd.DataFrame = runs_frame(source)
        """One row per run: ``point`` (a sweep's), the parameters, ``run``
        (the store key; a single run's folder name), ``status``, metrics."""
        self.params: list[str] = [p.column for p in source.params if p.column in self.runs]
        """The parameters' column names, in order."""

    @property
    def kind(self) -> str:
        """``run``, ``sweep`` or ``study``."""
        return self._src.kind

    @property
    def path(self) -> Path:
        """The folder the runs were loaded from."""
        return self._src.root

    @property
    def name(self) -> str:
        """The sweep's or study's name (a run's: its scenario's)."""
        return self._src.name

    # ----- choosing runs ---------------------------------------------------------------

    def _column(self, key: str) -> str:
        for p in self._src.params:
            if key in (p.column, p.path):
                return p.column
        if key in self.runs and (key in SELECTORS or key in param_columns(self._src, self.runs)):
            return key
        can = [*self.params, *(c for c in SELECTORS if c in self.runs and c not in self.params)]
        raise WavelabError(
            f"{self.path}: {key!r} is not a parameter of these runs; choose from " + ", ".join(can)
        )

    def select(self, **params: Any) -> pd.DataFrame:
        """The rows of :attr:`runs` whose columns have the given values (a
        list or tuple: any of them); a name may be a parameter's short name,
        its path, ``run``, ``point`` or ``name`` (a single run's)."""
        rows = self.runs
        for key, value in params.items():
            col = rows[self._column(key)]
            options = list(value) if isinstance(value, list | tuple) else [value]
            if isinstance(col.dtype, pd.CategoricalDtype):
                col = col.astype(str)
                options = [str(v) for v in options]
            rows = rows[col.isin(options)]
        return rows

    def run(self, **params: Any) -> Results:
        """The one run whose parameters have these values, read from its
        folder; :class:`WavelabError` when none or several match, naming
        the values there are."""
        rows = self.select(**params)
        keys = list(dict.fromkeys(rows["run"]))
        if not keys:
            parts = []
            for key in params:
                col = self.runs[self._column(key)]
                values = list(col.cat.categories) if hasattr(col, "cat") else sorted(set(col))
                parts.append(f"{self._column(key)} is one of {_shown(values)}")
            raise WavelabError(f"{self.path}: no run has {_wanted(params)}; " + "; ".join(parts))
        if len(keys) > 1:
            differ = [
                f"{c} ({_shown(list(dict.fromkeys(rows[c])))})"
                for c in self.params
                if rows[c].nunique(dropna=False) > 1
            ]
            raise WavelabError(
                f"{self.path}: {len(keys)} runs have {_wanted(params) or 'no condition'}; "
                f"they differ in {', '.join(differ) or 'run'}: name one value of each"
            )
        key = keys[0]
        d = self._src.dirs.get(key)
        if d is None:
            status = rows["status"].iloc[0] if "status" in rows else "not stored"
            raise WavelabError(
                f"{self.path}: run {key} ({_wanted(params)}) has no tables (status: {status})"
            )
        return Results.read_parquet(d)

    # ----- tables of every run ------------------------------------------------------

    def results(self, rows: pd.DataFrame | None = None) -> list[Results]:
        """The runs of ``rows`` (a selection of :attr:`runs`, by default
        all of them) that were stored with their tables, each read from
        its folder, in the rows' order; runs without tables are left out."""
        rows = self.runs if rows is None else rows
        keys = list(dict.fromkeys(rows["run"]))
        return [Results.read_parquet(self._src.dirs[k]) for k in keys if k in self._src.dirs]

    def table(self, name: str, columns: Sequence[str] | None = None, **params: Any) -> pd.DataFrame:
        """Table ``name`` (``series``, ``flows``, ``links``, ``queues``,
        ``rtt_distribution``, ...) of every run (or those ``params`` select)
        stored with its tables, in one call: ``point`` (a sweep's), the
        parameters and ``run`` first, then the table's ``columns`` (all if
        None; one with a parameter's name gets ``_`` and the table's name
        appended). Runs pending, failed or stored without tables are left out
        (:attr:`runs` has their status)."""
        if name not in TABLES:
            raise WavelabError(f"a run has no table {name!r}; its tables are {', '.join(TABLES)}")
        if isinstance(columns, str):
            columns = [columns]
        rows = self.select(**params)
        have = {k: self._src.dirs[k] for k in dict.fromkeys(rows["run"]) if k in self._src.dirs}
        if not have and len(rows):
            raise WavelabError(
                f"{self.path}: none of the {len(rows)} runs has its tables stored "
                "(they are pending, failed, or ran without tables)"
            )
        frame = read_runs_table(have, name, columns)
        attached = [c for c in ("point", *param_columns(self._src, rows)) if c in rows]
        if frame is None:
            return pd.DataFrame(columns=[*attached, "run", *(columns or [])])
        # a table's column of a parameter's name (a name the sweep chose)
        # is suffixed with the table's name
        return rows[[*attached, "run"]].merge(frame, on="run", suffixes=("", f"_{name}"))

    def series(self, columns: Sequence[str] | None = None, **params: Any) -> pd.DataFrame:
        """Every run's per-flow time series (:attr:`Results.series`), long."""
        return self.table("series", columns, **params)

    def flows(self, columns: Sequence[str] | None = None, **params: Any) -> pd.DataFrame:
        """Every run's per-flow counters (:attr:`Results.flows`), long."""
        return self.table("flows", columns, **params)

    def rtt(self, columns: Sequence[str] | None = None, **params: Any) -> pd.DataFrame:
        """Every run's RTT samples as histogram buckets
        (:attr:`Results.rtt_distribution`: ``flow``, ``rtt_low``,
        ``rtt_high`` in s, ``count``), long."""
        return self.table("rtt_distribution", columns, **params)

    @property
    def seeds(self) -> pd.DataFrame:
        """Per point without its seed and metric: ``n``, ``mean``, ``std``
        and the 95 % confidence interval over the seeds
        (:func:`wavelab.analysis.seeds.aggregate`)."""
        seed = next((p.column for p in self._src.params if p.path == "seed"), None)
        if seed is None:
            raise WavelabError(
                f"{self.path}: the runs vary no seed; .seeds needs a sweep with seeds = N"
            )
        others = [c for c in param_columns(self._src, self.runs) if c != seed]
        return aggregate(self.runs.drop(columns=[seed]), others)

    # ----- views --------------------------------------------------------------------

    def _counts(self) -> str:
        n = len(self.runs)
        ok = int((self.runs["status"] == "ok").sum()) if "status" in self.runs else n
        return f"{n} run{'s' if n != 1 else ''}" + (f" ({ok} ok)" if ok != n else "")

    def __repr__(self) -> str:
        params = f", parameters {', '.join(self.params)}" if self.params else ""
        return f"LoadedResults({self.kind} {self.name!r}, {self._counts()}{params}, {self.path})"

    def _repr_html_(self) -> str:
        shown = [c for c in ("point", *self.params, "run", "status") if c in self.runs]
        table = self.runs[shown].head(SHOWN).to_html(index=False, border=0)
        more = len(self.runs) - SHOWN
        tail = f"<p>... and {more} more</p>" if more > 0 else ""
        return (
            f"<p><b>{html.escape(self.kind)} {html.escape(self.name)}</b>: "
            f"{html.escape(self._counts())} in <code>{html.escape(str(self.path))}</code></p>"
            f"{table}{tail}"
        )


def load_results(path: str | Path) -> LoadedResults:
    """The runs of the results folder ``path``: a run (``wavelab run
    --out``), a sweep's store, a study's store, or a reproduction's output
    folder holding one (see :class:`LoadedResults`). Nothing is read but the
    runs table until a table is asked for."""
    return LoadedResults(open_source(path))
