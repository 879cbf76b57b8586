"""Running a sweep: plan its runs, skip the ones the store has, execute the
rest on a backend, store each as it finishes, and write the per-run table.

Output directory (also the results store, see :mod:`wavelab.sweep.store`)::

    sweep.toml         the sweep file as given
    sweep.json         the axes and every point: its parameters, run key and
                       baseline key (what `wavelab report` reads)
    runs.parquet       the table: one row per point, parameters and metrics
    runs.csv           the same, as CSV
    seeds.parquet      when the sweep varies the seed: per parameter point and
    seeds.csv          metric, the mean and 95 % confidence interval over its
                       seeds (:mod:`wavelab.analysis.seeds`)
    index.jsonl, runs/ the store

The table is written at the end, and also when the sweep stops early (an
interruption, a full disk, a dead worker): points not run yet have status
``pending``; their runs are missing, every finished one is kept.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from wavelab import _native
from wavelab._util.folder_lock import folder_lock
from wavelab._util.progress_bars import status
from wavelab.analysis.metrics import baseline_scenario
from wavelab.analysis.seeds import aggregate
from wavelab.errors import check_path
from wavelab.sweep.backends import Backend, LocalPool
from wavelab.sweep.execution import kept_note, reusable, run_into_store, say_store_state
from wavelab.sweep.grid import Sweep, SweepError, load_sweep
from wavelab.sweep.ownership import claim_sweep_dir
from wavelab.sweep.plan import Log, Plan, plan_sweep
from wavelab.sweep.runs_table import (
    SEEDS,
    SEEDS_CSV,
    TABLE,
    TABLE_CSV,
    build_table,
    typed_params,
    write_table,
)
from wavelab.sweep.store import Store, StoreWriteError, code_version
from wavelab.sweep.worker import Job

META = "sweep.json"
SOURCE = "sweep.toml"


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


def _meta(sweep: Sweep, plan: Plan, captures: tuple[str, ...]) -> dict[str, Any]:
    return {
        "name": sweep.name,
        "source": str(sweep.source) if sweep.source else None,
        # where the sweep file's relative trace paths are read from
        "folder": str(sweep.base.folder.absolute()) if sweep.base.folder else None,
        "code": code_version(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "captures": list(captures),
        "names": dict(sweep.names),
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
    sim = _native.Simulation(sweep.point(0).scenario.to_json())
    for target in captures:
        try:
            sim.add_capture(target, os.devnull)
        except ValueError as e:
            raise SweepError(f"{sweep.name}: {e}") from None


@contextmanager
def _claimed_store(out: Path, base: dict[str, Any], force: bool) -> Iterator[Store]:
    """The store at ``out``, claimed for a sweep of ``base`` (see
    :func:`claim_sweep_dir`) under the folder's lock, taken first: no other
    writer can start between the claim, which ``force`` lets clear the
    folder, and the store."""
    with folder_lock(out):
        claim_sweep_dir(out, base, force)
        with Store(out) as store:
            yield store


def run_sweep(
    sweep: Sweep | str | Path,
    out: str | Path,
    backend: Backend | None = None,
    captures: Sequence[str] = (),
    progress: bool = True,
    log: Log | None = None,
    force: bool = False,
    tables: bool = True,
) -> SweepOutcome:
    """Runs every point of ``sweep`` (a :class:`Sweep`, or a sweep file or
    shipped sweep's name for :func:`~wavelab.sweep.grid.load_sweep`) not
    already in the store at ``out``, on ``backend`` (by default a
    :class:`~wavelab.sweep.backends.LocalPool` of every core, closed at the
    end). :func:`wavelab.load_results` reads what it stored.

    ``out`` must be empty, or the store of a sweep of the same base scenario
    (the axes may differ: the runs it has are reused); anything else is
    refused (:class:`~wavelab.results.ownership.MixedResultsError`) unless
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
    if not isinstance(sweep, Sweep):
        sweep = load_sweep(sweep)
    out = check_path("run_sweep(out)", out)
    if backend is None:
        pool = LocalPool()
        try:
            return run_sweep(sweep, out, pool, captures, progress, log, force, tables)
        finally:
            pool.close()
    say: Log = log or (lambda m: print(m, file=sys.stderr))
    caps = tuple(dict.fromkeys(captures))
    started = time.monotonic()
    plan = plan_sweep(sweep, say)
    check_captures(sweep, caps)
    with _claimed_store(out, sweep.base.normalized, force) as store:
        store.write_file(SOURCE, sweep.text.encode())
        store.write_file(META, (json.dumps(_meta(sweep, plan, caps), indent=1) + "\n").encode())
        todo = [
            k
            for k, (_, is_base) in plan.runs.items()
            if not reusable(store, k, () if is_base else caps, tables=tables or is_base)
        ]
        reused = len(plan.runs) - len(todo)
        extra = f" and {plan.baselines} baselines" if plan.baselines else ""
        say(
            f"{sweep.name}: {len(plan.points)} points{extra}: {len(plan.runs)} runs, "
            f"{reused} already in {out}, {len(todo)} to run on {backend.description}"
        )
        say_store_state(store, plan.runs, say)
        done = run_into_store(
            store,
            _jobs(sweep, plan, todo, caps, tables),
            len(plan.runs),
            reused,
            backend,
            sweep.name,
            say,
            progress,
            what="sweep",
        )
        failed, stopped, interrupted, ran = done.failed, done.stopped, done.interrupted, done.ran
        files: list[Path] = []
        if interrupted:
            store.refresh()
        lost = store.lost(plan.runs)
        if lost:
            key, why = next(iter(lost.items()))
            stopped = (
                f"{stopped + '; ' if stopped else ''}{out}: {len(lost)} finished runs are no "
                f"longer in the store (run {key}: {why}; was the folder changed while the "
                "sweep wrote it?)"
            )
        if progress:
            status(f"{sweep.name}: reading {len(plan.runs)} runs into {out / TABLE} ...")
        table = build_table(sweep, plan, store, failed)
        try:
            files = [out / META, out / SOURCE, *write_table(store, table, (TABLE, TABLE_CSV))]
            if "seed" in sweep.param_names:
                by_point = aggregate(
                    table, [*sweep.param_names, *typed_params(table, sweep.param_names)]
                )
                files += write_table(store, by_point, (SEEDS, SEEDS_CSV))
        except StoreWriteError as e:
            stopped = f"{stopped + '; ' if stopped else ''}{e}"
        if stopped:
            stopped += kept_note(store, plan.runs, out)
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
