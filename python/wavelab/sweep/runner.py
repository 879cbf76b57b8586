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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from wavelab import _native
from wavelab.analysis.metrics import VERSION as METRICS_VERSION
from wavelab.analysis.metrics import baseline_scenario
from wavelab.analysis.seeds import aggregate
from wavelab.errors import WavelabError
from wavelab.sweep.backends import Backend
from wavelab.sweep.grid import Sweep, SweepError
from wavelab.sweep.ownership import claim_sweep_dir
from wavelab.sweep.plan import Log, Plan, plan_sweep
from wavelab.sweep.progress import Progress
from wavelab.sweep.runs_table import (
    SEEDS,
    SEEDS_CSV,
    TABLE,
    TABLE_CSV,
    build_table,
    typed_params,
    write_table,
)
from wavelab.sweep.store import INDEX, Store, StoreWriteError, code_version
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
            files = [out / META, out / SOURCE, *write_table(store, table, (TABLE, TABLE_CSV))]
            if "seed" in sweep.param_names:
                by_point = aggregate(
                    table, [*sweep.param_names, *typed_params(table, sweep.param_names)]
                )
                files += write_table(store, by_point, (SEEDS, SEEDS_CSV))
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
