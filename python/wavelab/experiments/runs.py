"""How a reproduction runs its runs: on the local cores (``--jobs``) or a
Dask cluster (``--cluster ADDRESS``), through the study runner
(:func:`wavelab.sweep.study.run_study`) into its store, ``OUT/store``, with
a progress bar; killed and started again, it runs only what the store does
not have.

An emulated study (:func:`emulate_runs`) keeps its emulations in a store of
their own, ``OUT/store-emulated``, and runs them in this process: each
emulation is a set of network namespaces, TUN devices and a real-time wire
thread that belong to the process that made them and need the machine's
kernel and root, so neither a process pool nor a cluster can run them, and
the native module already runs each in threads of its own. What a killed
emulated study had finished is in its store, and is not emulated again."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from wavelab._util.progress_bars import status
from wavelab.results.frames import Results
from wavelab.scenario.loading import Scenario
from wavelab.sweep.backends import DEFAULT_CLUSTER_TIMEOUT, Backend, DaskCluster, LocalPool
from wavelab.sweep.ownership import claim_study_dir
from wavelab.sweep.store import Store, scenario_key
from wavelab.sweep.study import (
    StudyOutcome,
    StudyRun,
    run_study,
    summary_line,
    write_study_file,
)

STORE = "store"
"""A reproduction's store, under its output directory."""
EMULATED_STORE = "store-emulated"
"""An emulated reproduction's store of emulations, under its output directory."""


def backend_for(jobs: int | None, cluster: str | None, timeout: float | None) -> Backend:
    """A local pool of ``jobs`` processes, or the Dask cluster at ``cluster``."""
    if cluster:
        return DaskCluster(cluster, timeout or DEFAULT_CLUSTER_TIMEOUT)
    return LocalPool(jobs)


def run_runs(
    name: str,
    runs: Mapping[str, StudyRun],
    out: Path,
    jobs: int | None,
    cluster: str | None = None,
    cluster_timeout: float | None = None,
) -> StudyOutcome:
    """Runs study ``name``'s ``runs`` into ``out/store`` (see the module)."""
    backend = backend_for(jobs, cluster, cluster_timeout)
    try:
        outcome = run_study(name, runs, out / STORE, backend)
    finally:
        backend.close()
    print(summary_line(outcome), file=sys.stderr)
    status(f"{name}: measuring the runs and drawing the figures ...")
    return outcome


def emulate_runs(
    name: str, scenarios: Mapping[str, Scenario], out: Path, jobs: int
) -> dict[str, Results]:
    """Emulates the ``scenarios`` (emulation scenarios, by name) that
    ``out/store-emulated`` does not have, ``jobs`` at a time in this process
    (see the module), each stored as it finishes; returns every one's
    results, read back from the store."""
    from wavelab.emulator.runs import emulate_many

    where = out / EMULATED_STORE
    claim_study_dir(where, name)
    keys = {k: scenario_key(sc) for k, sc in scenarios.items()}
    with Store(where) as store:
        write_study_file(store, name, keys)
        todo = {k: sc for k, sc in scenarios.items() if not store.done(keys[k])}
        print(
            f"{name}: {len(scenarios)} emulations, {len(scenarios) - len(todo)} already in "
            f"{where}, {len(todo)} to run, {jobs} at a time",
            file=sys.stderr,
        )

        def keep(k: str, res: Results) -> None:
            store.write_run(keys[k], res.to_files(), res.run, {}, name=name)

        emulate_many(todo, jobs, on_done=keep)
    return {k: Results.read_parquet(where / "runs" / keys[k]) for k in scenarios}
