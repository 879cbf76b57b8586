"""Running a sweep: plan its runs, skip the ones the store has, execute the
rest on a backend, store each as it finishes, and write the per-run table.

Output directory (also the results store, see :mod:`wavelab.store`)::

    sweep.toml         the sweep file as given
    sweep.json         the axes and every point: its parameters, run key and
                       baseline key (what `wavelab report` reads)
    runs.parquet       the table: one row per point, parameters and metrics
    runs.csv           the same, as CSV
    seeds.parquet      when the sweep varies the seed: per parameter point and
    seeds.csv          metric, the mean and 95 % confidence interval over its
                       seeds (:mod:`wavelab.aggregate`)
    index.jsonl, runs/ the store

The table is written at the end, and also when the sweep stops early (an
interruption, a full disk, a dead worker): points not run yet have status
``pending``; their runs are missing, every finished one is kept.
"""

from __future__ import annotations

import io
import json
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from wavelab.aggregate import aggregate
from wavelab.backends import Backend, Job
from wavelab.errors import WavelabError
from wavelab.metrics import VERSION as METRICS_VERSION
from wavelab.metrics import (
    baseline_scenario,
    flow_metrics,
    handoff_metrics,
    recovery_metrics,
    unit,
)
from wavelab.ownership import claim_sweep_dir
from wavelab.progress import Progress
from wavelab.store import INDEX, Store, StoreWriteError, code_version, scenario_key
from wavelab.sweep import Sweep

TABLE = "runs.parquet"
TABLE_CSV = "runs.csv"
SEEDS = "seeds.parquet"
SEEDS_CSV = "seeds.csv"
META = "sweep.json"
SOURCE = "sweep.toml"

Log = Callable[[str], None]


@dataclass(frozen=True)
class PlannedPoint:
    """A point of the sweep and the runs it needs."""

    index: int
    params: dict[str, Any]
    key: str
    baseline: str | None
    """Key of the baseline run that gives R_ss (handover scenarios only)."""


@dataclass
class Plan:
    """Every point, and the distinct runs they need (a baseline shared by
    many points, or two points that are the same scenario, run once)."""

    points: list[PlannedPoint]
    runs: dict[str, tuple[int, bool]] = field(default_factory=dict)
    """Run key -> (index of a point that needs it, True if it is that point's baseline)."""

    @property
    def baselines(self) -> int:
        return sum(1 for _, is_base in self.runs.values() if is_base)


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did."""

    table: pd.DataFrame
    total_runs: int
    reused: int
    ran: int
    failed: dict[str, str]
    """Run key -> error, for runs that raised."""
    seconds: float
    files: list[Path]
    stopped: str | None = None
    """Why the sweep stopped early (the message to show), or None."""
    interrupted: bool = False


def plan_sweep(sweep: Sweep, log: Log | None = None) -> Plan:
    """Validates every point and computes its run keys (nothing runs)."""
    started = time.monotonic()
    plan = Plan([])
    for i in range(sweep.size):
        point = sweep.point(i)
        key = scenario_key(point.scenario)
        if key not in plan.runs or plan.runs[key][1]:
            # a point that is also another point's baseline runs as a point
            # (with the captures asked for)
            plan.runs[key] = (i, False)
        base = baseline_scenario(point.scenario)
        base_key = None
        if base is not None:
            base_key = scenario_key(base)
            plan.runs.setdefault(base_key, (i, True))
        plan.points.append(PlannedPoint(i, point.params, key, base_key))
        if log and i and i % 5000 == 0:
            log(f"planned {i:,} of {sweep.size:,} points ({time.monotonic() - started:.0f} s)")
    return plan


def _jobs(
    sweep: Sweep,
    plan: Plan,
    todo: Sequence[str],
    captures: tuple[str, ...],
    tables: bool = True,
) -> Iterator[Job]:
    """The jobs of the runs in ``todo``, built when the backend asks for them.
    Baselines always keep their tables (their time series gives R_ss)."""
    for key in todo:
        index, is_base = plan.runs[key]
        sc = sweep.point(index).scenario
        if is_base:
            base = baseline_scenario(sc)
            assert base is not None
            yield Job(key, base.to_json(), traces=tuple(base.traces.items()))
        else:
            yield Job(key, sc.to_json(), captures, tables, tuple(sc.traces.items()))


def _param_column(values: list[Any]) -> list[Any]:
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
    from wavelab import _native

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
    d = store.run_dir(key)
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
    return {**metrics, **handoff_metrics(handoffs)}


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
            table[name] = _param_column(list(table[name]))
    table = _with_typed_params(table, sweep.param_names)
    for col in ("error", "baseline_run"):
        if col in table:
            table[col] = table[col].astype("string")
    return table


FIRST = ("point",)
AFTER_PARAMS = ("run", "status", "error", "baseline_run", "flows")
TOTALS = (
    "goodput_mbps",
    "retransmissions",
    "fast_retransmits",
    "rto_expiries",
    "spurious_retransmissions",
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
    "retransmissions",
    "fast_retransmits",
    "rto_expiries",
    "spurious_retransmissions",
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
    in the field metadata, from :func:`wavelab.metrics.unit`), for Parquet."""
    import pyarrow as pa

    from wavelab.results import with_units

    return with_units(pa.Table.from_pandas(table, preserve_index=False), unit)


def _write_table(store: Store, table: pd.DataFrame, names: tuple[str, str]) -> list[Path]:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table_with_units(table), buf)
    return [
        store.write_file(names[0], buf.getvalue()),
        store.write_file(names[1], table.to_csv(index=False).encode()),
    ]


def _meta(sweep: Sweep, plan: Plan, captures: tuple[str, ...]) -> dict[str, Any]:
    return {
        "name": sweep.name,
        "source": str(sweep.source) if sweep.source else None,
        # where the sweep file's relative trace paths are read from
        "folder": str(sweep.base.folder.absolute()) if sweep.base.folder else None,
        "code": code_version(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "captures": list(captures),
        "axes": [
            {"key": a.key, "paths": list(a.paths), "values": [list(v) for v in a.values]}
            for a in sweep.axes
        ],
        "points": [
            {"index": p.index, "params": p.params, "run": p.key, "baseline": p.baseline}
            for p in plan.points
        ],
    }


def check_captures(sweep: Sweep, captures: Sequence[str]) -> None:
    """Refuses capture targets that name nothing in the sweep's first point
    (before anything runs; a target valid there but not in another point makes
    that point's run fail)."""
    if not captures:
        return
    import os

    from wavelab import _native
    from wavelab.sweep import SweepError

    sim = _native.Simulation(sweep.point(0).scenario.to_json())
    for target in captures:
        try:
            sim.add_capture(target, os.devnull)
        except ValueError as e:
            raise SweepError(f"{sweep.name}: {e}") from None


def run_sweep(
    sweep: Sweep,
    out: Path,
    backend: Backend,
    captures: Sequence[str] = (),
    progress: bool = True,
    log: Log | None = None,
    force: bool = False,
    tables: bool = True,
) -> SweepOutcome:
    """Runs every point of ``sweep`` not already in the store at ``out``.

    ``out`` must be empty, or the store of a sweep of the same base scenario
    (the axes may differ: the runs it has are reused); anything else is
    refused (:class:`~wavelab.ownership.MixedResultsError`) unless
    ``force``, which removes wavelab's files from it first.

    ``tables=False`` stores only each run's metrics (the runs table's
    columns) in the store's index, no per-run files: for studies of many
    short runs whose tables nobody reads (the encoding and writing of the
    tables would cost more than the simulation). A run stored that way is
    reused only by sweeps that do not ask for tables, and only while its
    metrics are of the current version.

    Errors in the sweep file are raised (as :class:`WavelabError`) before
    anything runs. A full disk, a dead worker or Ctrl-C stop the sweep: the
    runs finished before are kept, the table is written with the others
    ``pending``, and :attr:`SweepOutcome.stopped` says what happened."""
    say: Log = log or (lambda m: print(m, file=sys.stderr))
    caps = tuple(dict.fromkeys(captures))
    started = time.monotonic()
    plan = plan_sweep(sweep, say)
    check_captures(sweep, caps)
    claim_sweep_dir(out, sweep.base.normalized, force)
    with Store(out) as store:
        store.write_file(SOURCE, sweep.text.encode())
        store.write_file(META, (json.dumps(_meta(sweep, plan, caps), indent=1) + "\n").encode())
        needs = {k: (caps if not is_base else ()) for k, (_, is_base) in plan.runs.items()}
        damaged = {
            k: why
            for k in plan.runs
            if k in store.entries and (why := store.problem(k)) is not None
        }

        def reusable(k: str, is_base: bool) -> bool:
            if not store.done(k, needs[k], tables=tables or is_base):
                return False
            e = store.entries[k]
            return e.tables or e.metrics.get("metrics_version") == METRICS_VERSION

        todo = [k for k, (_, is_base) in plan.runs.items() if not reusable(k, is_base)]
        reused = len(plan.runs) - len(todo)
        extra = f" and {plan.baselines} baselines" if plan.baselines else ""
        say(
            f"{sweep.name}: {len(plan.points)} points{extra}: {len(plan.runs)} runs, "
            f"{reused} already in {out}, {len(todo)} to run on {backend.description}"
        )
        for k, why in list(damaged.items())[:5]:
            say(f"run {k} in the store is damaged ({why}); running it again")
        if len(damaged) > 5:
            say(f"... and {len(damaged) - 5} more damaged runs")
        if store.torn_lines:
            say(f"ignored {store.torn_lines} incomplete line(s) of the index (a killed write)")
        for number, why in store.bad_lines[:5]:
            say(f"ignored line {number} of {out / INDEX}: {why}; its run is run again")
        if len(store.bad_lines) > 5:
            say(f"... and {len(store.bad_lines) - 5} more untrusted lines of the index")
        failed: dict[str, str] = {}
        stopped: str | None = None
        interrupted = False
        ran = 0
        bar = Progress(len(plan.runs), reused, desc=sweep.name, enabled=progress)
        outputs = backend.run(_jobs(sweep, plan, todo, caps, tables))
        try:
            for output in outputs:
                if output.error is not None:
                    failed[output.key] = output.error
                    say(f"run {output.key} failed: {output.error}")
                else:
                    store.write_run(
                        output.key,
                        output.files,
                        output.run,
                        output.metrics,
                        output.captures,
                        name=sweep.name,
                        tables=not output.lean,
                    )
                    ran += 1
                bar.update()
        except StoreWriteError as e:
            stopped = f"{e}; stopped the sweep"
        except KeyboardInterrupt:
            stopped = "interrupted"
            interrupted = True
        except WavelabError as e:
            stopped = str(e)
        finally:
            close = getattr(outputs, "close", None)
            if close is not None:
                close()
            bar.close()
        files: list[Path] = []
        if interrupted:
            store.refresh()
        table = build_table(sweep, plan, store, failed)
        try:
            files = [out / META, out / SOURCE, *_write_table(store, table, (TABLE, TABLE_CSV))]
            if "seed" in sweep.param_names:
                by_point = aggregate(
                    table, [*sweep.param_names, *typed_params(table, sweep.param_names)]
                )
                files += _write_table(store, by_point, (SEEDS, SEEDS_CSV))
        except StoreWriteError as e:
            stopped = f"{stopped + '; ' if stopped else ''}{e}"
        if stopped:
            kept = sum(1 for k in plan.runs if k in store.entries and store.problem(k) is None)
            stopped += (
                f"; {kept} of {len(plan.runs)} runs are finished and kept in {out}; "
                "run the same command again to resume"
            )
    return SweepOutcome(
        table,
        len(plan.runs),
        reused,
        ran,
        failed,
        time.monotonic() - started,
        files,
        stopped,
        interrupted,
    )


def summary_line(o: SweepOutcome) -> str:
    """``12 runs ran, 3 reused from the store, 0 failed, in 4.2 s (2.86 runs/s)``."""
    rate = f" ({o.ran / o.seconds:.2f} runs/s)" if o.ran and o.seconds > 0 else ""
    return (
        f"{o.ran} runs ran, {o.reused} reused from the store, {len(o.failed)} failed, "
        f"in {o.seconds:.1f} s{rate}"
    )
