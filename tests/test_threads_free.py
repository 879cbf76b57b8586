"""A simulation's state is freed whichever thread drops it.

A Dask worker's profiler samples the frames of the threads running tasks, so
the last reference to a task's simulation can go on the worker's event-loop
thread. The native class once refused to be dropped there (PyO3 printed
``RuntimeError: ... is unsendable, but is being dropped on another thread``
and skipped the destructor): every such run leaked its state, about 6 MB for
the demo scenario. These tests fail on that warning, on a simulation left
allocated, or on a process that grows across runs."""

from __future__ import annotations

import gc
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import SMALL
from wavelab import _native
from wavelab.scenario import demo_scenario, from_toml

GROWTH_MB = 15.0
"""What the process may grow by across the runs after the first ones
(allocator noise); a leak of the demo's state is 6 MB a run."""


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


@pytest.fixture
def unraisable(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the interpreter reported as unraisable (a destructor refused)."""
    caught: list[str] = []

    def hook(u: Any) -> None:
        caught.append(f"{u.exc_type.__name__}: {u.exc_value}")

    monkeypatch.setattr(sys, "unraisablehook", hook)
    return caught


def test_a_simulation_dropped_on_another_thread_is_freed(unraisable: list[str]) -> None:
    gc.collect()
    live = _native.live_simulations()
    text = demo_scenario().to_json()
    sizes = []
    for _ in range(12):
        sim = _native.Simulation(text)
        sim.run_until(sim.end)
        held = [sim, sim.fork()]
        del sim
        # the last references go on another thread
        t = threading.Thread(target=held.clear)
        t.start()
        t.join()
        gc.collect()
        assert _native.live_simulations() == live
        sizes.append(rss_mb())
    assert unraisable == []
    assert sizes[-1] - sizes[2] < GROWTH_MB, sizes


def test_runs_on_a_dask_worker_with_its_profiler_on_leaks_nothing(
    tmp_path: Path, unraisable: list[str]
) -> None:
    import dask
    from distributed import LocalCluster

    from wavelab.sweep.backends import DaskCluster
    from wavelab.sweep.worker import Job

    text = from_toml(SMALL).to_json()
    gc.collect()
    live = _native.live_simulations()
    sizes = []
    # the worker in this process (its drops are seen here), its profiler
    # sampling every millisecond instead of every 10, so that runs end while
    # it holds their frames
    with (
        dask.config.set({"distributed.worker.profile.interval": "1ms"}),
        LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=False,
            protocol="tcp",
            dashboard_address=None,
        ) as cluster,
    ):
        backend = DaskCluster(cluster.scheduler_address)
        try:
            for k in range(4):
                jobs = [Job(f"run{k}-{i}", text, tables=False) for i in range(8)]
                outs = list(backend.run(jobs))
                assert len(outs) == 8 and all(o.error is None for o in outs), outs
                gc.collect()
                sizes.append(rss_mb())
        finally:
            backend.close()
    gc.collect()
    assert unraisable == []
    assert _native.live_simulations() == live
    assert sizes[-1] - sizes[0] < GROWTH_MB, sizes
