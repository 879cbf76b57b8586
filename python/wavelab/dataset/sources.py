"""What a results folder holds, found from its files: one run (``wavelab
run --out``: ``run.json``), a sweep's store (``sweep.json``), a study's
store (``study.json``), or a reproduction's output folder, which holds one
of those stores in a subfolder (``store/``, ``sweep/``).

Each becomes a :class:`Source`: the runs as a raw table (one row per run or
sweep point, parameters under their paths, the run key in ``run``), the
parameters with their column names and the order of their values, and the
folder of each run stored with its tables. Nothing is locked or written:
a store can be read while a sweep still writes it (its index is read as
it is on disk, :func:`wavelab.sweep.store.read_index`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from wavelab.errors import WavelabError, check_path
from wavelab.sweep.names import column_names
from wavelab.sweep.ownership import STUDY
from wavelab.sweep.runner import META
from wavelab.sweep.runs_table import TABLE, param_column, run_dir_metrics
from wavelab.sweep.store import INDEX, RUNS, Entry, read_index

RUN_FILE = "run.json"
RUN_NAME = "run_name"
"""The parameter of a study's runs: each run's name in the study."""


@dataclass(frozen=True)
class Param:
    """A parameter of the runs: its path in the scenario (a study's: ``run_name``),
    its column, and its values in the order the sweep gives them."""

    path: str
    column: str
    order: tuple[Any, ...]


@dataclass(frozen=True)
class Source:
    """The runs of a results folder (see the module description)."""

    kind: str
    """``run``, ``sweep`` or ``study``."""
    root: Path
    name: str
    table: pd.DataFrame
    params: tuple[Param, ...]
    dirs: dict[str, Path]
    """Run key -> the folder of its tables (runs stored with tables only)."""


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise WavelabError(f"{path}: cannot be read as wavelab's record ({e})") from None
    if not isinstance(data, dict):
        raise WavelabError(f"{path}: is not wavelab's record (not a JSON object)")
    return data


def open_source(path: str | Path) -> Source:
    """The runs of the results folder ``path``; :class:`WavelabError` naming
    the folder when it holds none, or several stores to choose from."""
    d = check_path("load_results(path)", path)
    if not d.exists():
        raise WavelabError(f"{d}: no such folder")
    if not d.is_dir():
        raise WavelabError(f"{d}: is a file; give the folder that holds the results")
    if (d / RUN_FILE).is_file():
        return _run(d)
    if (d / META).is_file():
        return _sweep(d)
    if (d / STUDY).is_file():
        return _study(d)
    inner = sorted(
        s for s in d.iterdir() if s.is_dir() and ((s / META).is_file() or (s / STUDY).is_file())
    )
    if len(inner) == 1:
        return open_source(inner[0])
    if inner:
        raise WavelabError(
            f"{d}: holds {len(inner)} stores ("
            + ", ".join(s.name for s in inner)
            + f"); load one of them, e.g. load_results({str(inner[0])!r})"
        )
    raise WavelabError(
        f"{d}: no results here: expected a run ({RUN_FILE}), a sweep's store ({META}), "
        f"a study's store ({STUDY}), or a reproduction's folder with a store in it"
    )


def _run(d: Path) -> Source:
    meta = _json(d / RUN_FILE)
    scenario = meta.get("scenario")
    name = str(scenario.get("name", "")) if isinstance(scenario, dict) else ""
    row: dict[str, Any] = {"run": d.name, "name": name}
    row["status"] = "ok" if meta.get("complete", True) else "partial"
    try:
        row.update(run_dir_metrics(d))
    except (OSError, ValueError, KeyError) as e:
        raise WavelabError(f"{d}: the run's tables cannot be read ({e})") from None
    row.pop("metrics_version", None)
    return Source("run", d, name, pd.DataFrame([row]), (), {d.name: d})


def _stored_dirs(root: Path, entries: dict[str, Entry]) -> dict[str, Path]:
    return {k: root / RUNS / k for k, e in entries.items() if e.tables}


def _entries(root: Path) -> dict[str, Entry]:
    return read_index(root) if (root / INDEX).exists() else {}


def _sweep(d: Path) -> Source:
    meta = _json(d / META)
    try:
        axes = [(list(a["paths"]), [list(v) for v in a["values"]]) for a in meta["axes"]]
        points = [(int(p["index"]), dict(p["params"]), str(p["run"])) for p in meta["points"]]
    except (KeyError, TypeError, ValueError):
        raise WavelabError(f"{d / META}: has no axes and points (not wavelab's)") from None
    paths = [p for ps, _ in axes for p in ps]
    entries = _entries(d)
    if (d / TABLE).is_file():
        table = pd.read_parquet(d / TABLE)
    else:  # a sweep stopped before it wrote its table: its points, no metrics
        table = pd.DataFrame(
            [
                {
                    "point": i,
                    **{p: values.get(p) for p in paths},
                    "run": key,
                    "status": "ok" if key in entries else "pending",
                }
                for i, values, key in points
            ]
        )
        for p in paths:
            table[p] = param_column(list(table[p]))
    names = meta.get("names") or {}
    columns = column_names(paths, names if isinstance(names, dict) else {}, table.columns)
    params = tuple(
        Param(p, columns[p], tuple(dict.fromkeys(param_column([v[i] for v in values]))))
        for ps, values in axes
        for i, p in enumerate(ps)
    )
    return Source("sweep", d, str(meta.get("name", "")), table, params, _stored_dirs(d, entries))


def _study(d: Path) -> Source:
    meta = _json(d / STUDY)
    runs = meta.get("runs")
    if not isinstance(runs, dict):
        raise WavelabError(f"{d / STUDY}: has no runs (not wavelab's)")
    entries = _entries(d)
    rows = []
    for name, key in runs.items():
        e = entries.get(str(key))
        metrics = {k: v for k, v in (e.metrics if e else {}).items() if k != "metrics_version"}
        status = "pending" if e is None else "ok" if e.tables else "ok (no tables)"
        rows.append({RUN_NAME: str(name), "run": str(key), "status": status, **metrics})
    order = tuple(str(n) for n in runs)
    return Source(
        "study",
        d,
        str(meta.get("study", "")),
        pd.DataFrame(rows, columns=None if rows else [RUN_NAME, "run", "status"]),
        (Param(RUN_NAME, RUN_NAME, order),),
        _stored_dirs(d, entries),
    )
