"""A study: named runs of any scenarios (not a grid of one), run like a
sweep's: on a backend (all local cores or a Dask cluster), into a results
store, with a progress bar, resumable.

A reproduction of a published experiment builds its runs
(:class:`StudyRun`: a scenario, which of its tables to keep, and a
reduction to compute where it ran), hands them to :func:`run_study`, and
reduces what comes back (:class:`StudyOutcome`): each run's tables read
back from the store one at a time, or what its reduction computed, from the
store's index. Runs are keyed by their scenario and the code
(:func:`wavelab.sweep.store.run_key`), so a study killed at any point and
started again runs only what the store does not have, and a run that two
forms of a study share (``--quick`` and the full one) is run once.

Layout of a study's store: the store's (:mod:`wavelab.sweep.store`), and
``study.json``, the study's name and its runs' names and keys.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wavelab.errors import WavelabError
from wavelab.results.frames import Results
from wavelab.results.tables import OPTIONAL_TABLES
from wavelab.scenario.loading import Scenario
from wavelab.sweep.backends import Backend
from wavelab.sweep.execution import Log, kept_note, reusable, run_into_store, say_store_state
from wavelab.sweep.ownership import STUDY, claim_study_dir
from wavelab.sweep.store import Store, code_version, scenario_key
from wavelab.sweep.worker import Job


@dataclass(frozen=True)
class StudyRun:
    """One run of a study."""

    scenario: Scenario
    tables: bool = True
    """Keep the run's tables in the store (False: only its index line, with
    its metrics and its reduction)."""
    drop: tuple[str, ...] = ()
    """Optional tables not to keep (``packets``)."""
    reduce: str = ""
    """A reduction computed where the run ran (``module:function@version``,
    :attr:`wavelab.sweep.worker.Job.reduce`)."""

    def __post_init__(self) -> None:
        bad = sorted(set(self.drop) - set(OPTIONAL_TABLES))
        if bad:
            raise WavelabError(
                f"a study's run may drop only optional tables ({', '.join(OPTIONAL_TABLES)}), "
                f"not {', '.join(bad)}"
            )

    def job(self, key: str) -> Job:
        """The job that runs it."""
        sc = self.scenario
        traces = tuple(sc.traces.items())
        return Job(key, sc.to_json(), (), self.tables, traces, self.drop, self.reduce)


class StoredResults(Mapping[str, Results]):
    """A study's runs by name, each read from the store when it is asked for
    (nothing is cached: going through them holds one run's tables at a time)."""

    def __init__(self, outcome: StudyOutcome) -> None:
        self._outcome = outcome

    def __getitem__(self, name: str) -> Results:
        return Results.read_parquet(self._outcome.run_dir(name))

    def __contains__(self, name: object) -> bool:
        return name in self._outcome.keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._outcome.keys)

    def __len__(self) -> int:
        return len(self._outcome.keys)


@dataclass
class StudyOutcome:
    """The runs of a study, all of them in its store."""

    name: str
    store: Path
    keys: dict[str, str]
    """Run name -> store key."""
    reductions: dict[str, Any]
    """Store key -> what its reduction computed (runs with a reduction), as
    the store's index keeps it: JSON, an object's keys sorted."""
    reused: int
    ran: int
    seconds: float

    @property
    def total(self) -> int:
        """Distinct runs (two names of one scenario are one run)."""
        return len(set(self.keys.values()))

    @property
    def results(self) -> StoredResults:
        """Each run's results by name, read from the store on demand."""
        return StoredResults(self)

    def run_dir(self, name: str) -> Path:
        """Where run ``name``'s tables are."""
        return self.store / "runs" / self.keys[name]

    def reduced(self, name: str) -> Any:
        """What run ``name``'s reduction computed."""
        return self.reductions[self.keys[name]]


def write_study_file(store: Store, name: str, keys: Mapping[str, str]) -> None:
    """``study.json``: the study's name, the code, and each run's key by name."""
    meta = {"study": name, "code": code_version(), "runs": dict(keys)}
    store.write_file(STUDY, (json.dumps(meta, indent=1) + "\n").encode())


def run_study(
    name: str,
    runs: Mapping[str, StudyRun],
    out: Path,
    backend: Backend,
    progress: bool = True,
    log: Log | None = None,
) -> StudyOutcome:
    """Runs every run of ``runs`` (by name) that the store at ``out`` does
    not have, on ``backend``; returns them all.

    ``out`` must be empty, or the store of the same study (by ``name``);
    anything else is refused (:class:`~wavelab.results.ownership.MixedResultsError`).
    A failed run, a full disk, a dead worker or Ctrl-C raise
    :class:`WavelabError` (Ctrl-C: ``KeyboardInterrupt``) after every run
    finished before is stored: the same call again resumes."""
    say: Log = log or (lambda m: print(m, file=sys.stderr))
    started = time.monotonic()
    keys = {n: scenario_key(r.scenario) for n, r in runs.items()}
    # one job per distinct run; the first name of a key describes it
    first: dict[str, StudyRun] = {}
    named: dict[str, str] = {}
    for n, r in runs.items():
        k = keys[n]
        if k in first and (first[k].tables, first[k].drop, first[k].reduce) != (
            r.tables,
            r.drop,
            r.reduce,
        ):
            raise WavelabError(
                f"{name}: runs {named[k]} and {n} are the same scenario but keep "
                "different tables or reductions; give them the same"
            )
        first.setdefault(k, r)
        named.setdefault(k, n)
    claim_study_dir(out, name)
    with Store(out) as store:
        write_study_file(store, name, keys)
        todo = [
            k
            for k, r in first.items()
            if not reusable(store, k, tables=r.tables, drop=r.drop, reduce=r.reduce)
        ]
        reused = len(first) - len(todo)
        say(
            f"{name}: {len(first)} runs, {reused} already in {out}, "
            f"{len(todo)} to run on {backend.description}"
        )
        say_store_state(store, first, say)
        done = run_into_store(
            store,
            (first[k].job(k) for k in todo),
            len(first),
            reused,
            backend,
            name,
            say,
            progress,
        )
        problem = done.stopped
        if done.failed:
            k, why = next(iter(done.failed.items()))
            which = next(n for n, key in keys.items() if key == k)
            more = f" (and {len(done.failed) - 1} more)" if len(done.failed) > 1 else ""
            problem = f"run {which} failed: {why}{more}" + (f"; {problem}" if problem else "")
        if problem:
            if done.interrupted:
                say(f"{name}: interrupted" + kept_note(store, first, out))
                raise KeyboardInterrupt
            raise WavelabError(problem + kept_note(store, first, out))
        # as the store's index keeps them (canonical JSON: an object's keys
        # sorted), whether the run ran now or before
        reductions = {
            k: json.loads(json.dumps(store.entries[k].reduced, sort_keys=True, allow_nan=True))
            for k, r in first.items()
            if r.reduce
        }
    return StudyOutcome(name, out, keys, reductions, reused, done.ran, time.monotonic() - started)


def summary_line(o: StudyOutcome) -> str:
    """``12 runs ran, 3 reused from the store, in 4.2 s``."""
    return f"{o.ran} runs ran, {o.reused} reused from the store, in {o.seconds:.1f} s"
