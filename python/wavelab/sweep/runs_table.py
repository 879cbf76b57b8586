"""A sweep's runs table: one row per point, its parameters (and, beside
each parameter with units, its values as numbers in the base unit), run key,
status and metrics; written as Parquet with each column's unit in its field
metadata, and as CSV."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from wavelab import _native
from wavelab.analysis.metrics import COUNTERS as METRIC_COUNTERS
from wavelab.analysis.metrics import VERSION as METRICS_VERSION
from wavelab.analysis.metrics import flow_metrics, handoff_metrics, recovery_metrics, unit
from wavelab.analysis.transfers import transfer_metrics
from wavelab.results.tables import with_units
from wavelab.sweep.grid import Sweep
from wavelab.sweep.plan import Plan
from wavelab.sweep.store import Store

TABLE = "runs.parquet"
TABLE_CSV = "runs.csv"
SEEDS = "seeds.parquet"
SEEDS_CSV = "seeds.csv"


def param_column(values: list[Any]) -> list[Any]:
    """Keeps numbers numeric; anything else (tables, mixed types) as text."""
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return values
    if all(isinstance(v, str) for v in values):
        return values
    return [v if isinstance(v, str) else json.dumps(v) for v in values]


TYPED = {"s": "_s", "bit/s": "_bps", "B": "_bytes", "pkt": "_pkt"}
"""The base unit of a parameter's values and the ending of its typed column."""


def _with_typed_params(table: pd.DataFrame, params: Sequence[str]) -> pd.DataFrame:
    """Beside each parameter whose values are all text with one kind of unit
    (``"20s"``, ``"2Mbit/s"``, ``"150KB"``, ``"100pkt"``), a column of the
    numbers in the base unit, named after it with the unit
    (``links[1].rate_bps``): the scenario loader's own parsers read them."""
    for name in params:
        if name not in table or not len(table):
            continue
        values = list(table[name])
        if not all(isinstance(v, str) for v in values):
            continue
        parsed = [_native.quantity(v) for v in values]
        units = {q[1] for q in parsed if q is not None}
        if any(q is None for q in parsed) or len(units) != 1:
            continue
        column = name + TYPED[units.pop()]
        if column in table:
            continue
        at = list(table.columns).index(name) + 1
        table.insert(at, column, [q[0] for q in parsed if q is not None])
    return table


def typed_params(table: pd.DataFrame, params: Sequence[str]) -> list[str]:
    """The typed columns :func:`build_table` added beside ``params``."""
    return [p + end for p in params for end in TYPED.values() if p + end in table.columns]


def _stored_metrics(store: Store, key: str) -> dict[str, Any]:
    e = store.entries[key]
    if e.metrics.get("metrics_version") == METRICS_VERSION or not e.tables:
        return e.metrics
    return run_dir_metrics(store.run_dir(key))


def run_dir_metrics(d: Path) -> dict[str, Any]:
    """The metrics of the run whose files are in ``d`` (a store's run or
    the output of `wavelab run --out`), computed from its tables."""
    hand = d / "handoffs.parquet"
    handoffs = pd.read_parquet(hand) if hand.exists() else None
    over = d / "handovers.parquet"
    handovers = pd.read_parquet(over) if over.exists() else None
    meta = json.loads((d / "run.json").read_text(encoding="utf-8"))
    metrics = flow_metrics(
        pd.read_parquet(d / "flows.parquet"),
        pd.read_parquet(d / "links.parquet"),
        meta.get("run", {}),
        meta["scenario"],
        handovers,
        handoffs,
    )
    moved = d / "transfers.parquet"
    transfers = pd.read_parquet(moved) if moved.exists() else None
    return {**metrics, **handoff_metrics(handoffs), **transfer_metrics(transfers)}


def _columns(path: Path, names: list[str]) -> dict[str, Any]:
    """Some columns of a Parquet file as numpy arrays (no DataFrame: fast)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=names)
    return {n: table.column(n).to_numpy() for n in names}


def _series(store: Store, key: str) -> dict[str, Any]:
    return _columns(store.run_dir(key) / "series.parquet", ["time", "flow", "bytes_delivered"])


def build_table(sweep: Sweep, plan: Plan, store: Store, failed: dict[str, str]) -> pd.DataFrame:
    """One row per point: its parameters, run key, status and metrics."""
    rows = []
    baseline_series: dict[str, dict[str, Any]] = {}
    for p in plan.points:
        row: dict[str, Any] = {"point": p.index, **p.params, "run": p.key}
        done = p.key in store.entries and store.problem(p.key) is None
        if p.key in failed:
            row["status"] = "failed"
            row["error"] = failed[p.key]
        elif not done:
            row["status"] = "pending"
        else:
            row["status"] = "ok"
            metrics = dict(_stored_metrics(store, p.key))
            metrics.pop("metrics_version", None)
            run = store.entries[p.key].run
            if p.baseline is not None:
                row["baseline_run"] = p.baseline
                if p.baseline in store.entries and store.problem(p.baseline) is None:
                    if p.baseline not in baseline_series:
                        baseline_series[p.baseline] = _series(store, p.baseline)
                    d = store.run_dir(p.key)
                    names = _columns(d / "flows.parquet", ["name"])["name"]
                    hand = d / "handovers.parquet"
                    metrics.update(
                        recovery_metrics(
                            _series(store, p.key),
                            _columns(hand, ["time", "outage"]) if hand.exists() else {},
                            baseline_series[p.baseline],
                            [str(n) for n in names],
                        )
                    )
                else:
                    row["status"] = "ok (baseline missing: no recovery time)"
            row.update(metrics)
            row["events"] = run.get("events")
            row["wall_s"] = run.get("wall_seconds")
            row["cpu_s"] = run.get("cpu_seconds", math.nan)
            row["engine_cpu_s"] = run.get("engine_cpu_seconds", math.nan)
        rows.append(row)
    table = _order_columns(pd.DataFrame(rows), sweep.param_names)
    for name in sweep.param_names:
        if name in table:
            table[name] = param_column(list(table[name]))
    table = _with_typed_params(table, sweep.param_names)
    for col in ("error", "baseline_run"):
        if col in table:
            table[col] = table[col].astype("string")
    return table


FIRST = ("point",)
AFTER_PARAMS = ("run", "status", "error", "baseline_run", "flows")
TOTALS = (
    "goodput_mbps",
    *METRIC_COUNTERS,
    "retransmission_rate",
    "jain",
    "rtt_mean_ms",
    "rtt_p50_ms",
    "rtt_p95_ms",
    "rtt_p99_ms",
    "bottleneck",
    "queue_delay_mean_ms",
    "queue_delay_p95_ms",
    "queue_delay_p99_ms",
    "loss_rate",
    "aqm_drops",
    "marks",
    "utilisation",
    "capacity_mb",
    "up_s",
    "handover_s",
    "recovery_s",
    "recovery_sustained_s",
    "recovery_horizon_s",
    "transfer_s",
    "transfer_packets",
    "events",
    "wall_s",
    "cpu_s",
    "engine_cpu_s",
)
TIMINGS = ("wall_s", "cpu_s", "engine_cpu_s")
"""The runs table's columns that time a run (they differ from run to run:
everything else in the table is deterministic)."""
PER_FLOW = (
    "goodput_mbps",
    "delivered_mb",
    *METRIC_COUNTERS,
    "retransmission_rate",
    "min_rtt_ms",
    "rtt_mean_ms",
    "rtt_p50_ms",
    "rtt_p95_ms",
    "rtt_p99_ms",
    "completion_s",
    "recovery_s",
    "recovery_sustained_s",
)


def _order_columns(table: pd.DataFrame, params: list[str]) -> pd.DataFrame:
    """Point, parameters, run and status, totals, then per-flow columns
    grouped by metric (flows in order of appearance), then anything else."""
    cols = list(table.columns)
    order = [c for c in (*FIRST, *params, *AFTER_PARAMS, *TOTALS) if c in cols]
    flows: list[str] = []
    for c in cols:
        if ":" in c and c.split(":", 1)[1] not in flows:
            flows.append(c.split(":", 1)[1])
    order += [f"{m}:{f}" for m in PER_FLOW for f in flows if f"{m}:{f}" in cols]
    order += [c for c in cols if c not in order]
    return table[order]


def table_with_units(table: pd.DataFrame) -> Any:
    """``table`` as an Arrow table whose fields carry their unit (``unit``
    in the field metadata, from :func:`wavelab.analysis.metrics.unit`), for Parquet."""
    import pyarrow as pa

    return with_units(pa.Table.from_pandas(table, preserve_index=False), unit)


def write_table(store: Store, table: pd.DataFrame, names: tuple[str, str]) -> list[Path]:
    """Writes ``table`` at the top of the store as Parquet (with units) and
    CSV, under ``names``; returns the two paths."""
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table_with_units(table), buf)
    return [
        store.write_file(names[0], buf.getvalue()),
        store.write_file(names[1], table.to_csv(index=False).encode()),
    ]
