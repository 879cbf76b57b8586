"""Runs executed into a store: what a sweep and a study share once they
know their runs.

Which stored runs can be reused (:func:`reusable`), what the store says of
itself before the runs start (damaged runs, torn or untrusted index lines),
and the loop (:func:`run_into_store`) that feeds the runs still to do to a
backend, stores each output as it arrives, counts it on a progress bar and
stops cleanly on a full disk, a dead worker or Ctrl-C: every run finished
before is kept, so the same command started again resumes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from wavelab.analysis.metrics import VERSION as METRICS_VERSION
from wavelab.errors import WavelabError
from wavelab.sweep.backends import Backend
from wavelab.sweep.progress import Progress
from wavelab.sweep.store import INDEX, Store, StoreWriteError
from wavelab.sweep.worker import Job

Log = Callable[[str], None]


def reusable(
    store: Store,
    key: str,
    captures: Iterable[str] = (),
    tables: bool = True,
    drop: Iterable[str] = (),
    reduce: str = "",
) -> bool:
    """True if the store's run ``key`` serves a job that asks for these
    captures, tables (all but ``drop``) and reduction: it verifies, has them,
    and if it kept no tables its metrics are of this version (they cannot be
    computed again from files it does not have)."""
    if not store.done(key, captures, tables=tables, drop=drop, reducer=reduce):
        return False
    e = store.entries[key]
    return e.tables or e.metrics.get("metrics_version") == METRICS_VERSION


def say_store_state(store: Store, keys: Iterable[str], say: Log) -> None:
    """Tells what of the store is not trusted and will be run again."""
    damaged = {k: why for k in keys if k in store.entries and (why := store.problem(k)) is not None}
    for k, why in list(damaged.items())[:5]:
        say(f"run {k} in the store is damaged ({why}); running it again")
    if len(damaged) > 5:
        say(f"... and {len(damaged) - 5} more damaged runs")
    if store.torn_lines:
        say(f"ignored {store.torn_lines} incomplete line(s) of the index (a killed write)")
    for number, why in store.bad_lines[:5]:
        say(f"ignored line {number} of {store.root / INDEX}: {why}; its run is run again")
    if len(store.bad_lines) > 5:
        say(f"... and {len(store.bad_lines) - 5} more untrusted lines of the index")


@dataclass
class Execution:
    """What :func:`run_into_store` did."""

    ran: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    """Run key -> error, for runs that raised."""
    stopped: str | None = None
    """Why the runs stopped early (the message to show), or None."""
    interrupted: bool = False


def run_into_store(
    store: Store,
    jobs: Iterable[Job],
    total: int,
    reused: int,
    backend: Backend,
    name: str,
    say: Log,
    progress: bool = True,
    what: str = "runs",
) -> Execution:
    """Runs ``jobs`` on ``backend`` and writes each output into ``store`` as
    it arrives (``total`` runs in all, ``reused`` of them already stored, for
    the progress bar). A failed run is recorded, not stored; a full disk,
    a dead worker or Ctrl-C stop the loop with :attr:`Execution.stopped`
    set (``... stopped the WHAT``), every run stored before kept."""
    done = Execution()
    bar = Progress(total, reused, desc=name, enabled=progress)
    outputs = backend.run(jobs)
    try:
        for output in outputs:
            if output.error is not None:
                done.failed[output.key] = output.error
                say(f"run {output.key} failed: {output.error}")
            else:
                store.write_run(
                    output.key,
                    output.files,
                    output.run,
                    output.metrics,
                    output.captures,
                    name=name,
                    tables=not output.lean,
                    dropped=output.dropped,
                    reducer=output.reducer,
                    reduced=output.reduced,
                )
                done.ran += 1
            bar.update()
    except StoreWriteError as e:
        done.stopped = f"{e}; stopped the {what}"
    except KeyboardInterrupt:
        done.stopped = "interrupted"
        done.interrupted = True
    except WavelabError as e:
        done.stopped = str(e)
    finally:
        close = getattr(outputs, "close", None)
        if close is not None:
            close()
        bar.close()
    if done.interrupted:
        store.refresh()
    return done


def kept_note(store: Store, keys: Iterable[str], out: Path) -> str:
    """``; K of N runs are finished and kept in OUT; run the same command
    again to resume``: what to add to the message of runs that stopped."""
    every = list(keys)
    kept = sum(1 for k in every if k in store.entries and store.problem(k) is None)
    return (
        f"; {kept} of {len(every)} runs are finished and kept in {out}; "
        "run the same command again to resume"
    )
