"""Runs that differ only in a handoff's instant, sharing their common past.

A study of handoff instants (MobiWac 2009: 200 instants per cell) runs the
same scenario many times with ``handoffs[0].at`` alone changed; every run
re-simulates the time before its handoff, which is the same for all of
them. :func:`execute_forked` runs such a group once up to each instant in
turn, forks the simulation there (:meth:`wavelab._native.Simulation.fork`),
moves the fork's handoff to the instant and runs the fork to its end: each
output is the one :func:`~wavelab.sweep.worker.execute` gives for the job
(the same tables, byte for byte; the simulator checks that a fork with a
moved handoff is a fresh run).
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterable, Sequence

from wavelab import _native
from wavelab.sweep.worker import Job, RunOutput, _output, execute


def _nanos(text: str) -> int | None:
    """Nanoseconds of a duration as the normalised scenario writes it."""
    q = _native.quantity(text)
    if q is None or q[1] != "s":
        return None
    return round(q[0] * 1e9)


def prefix_key(job: Job) -> tuple[str, int] | None:
    """The key jobs that differ only in ``handoffs[0].at`` share, and that
    instant in nanoseconds; None for a job that cannot fork (no handoff,
    captures, which write as the run goes)."""
    if job.captures:
        return None
    sc = json.loads(job.scenario_json)
    handoffs = sc.get("handoffs") or []
    if not handoffs or not isinstance(handoffs[0].get("at"), str):
        return None
    at = _nanos(handoffs[0]["at"])
    if at is None:
        return None
    handoffs[0]["at"] = None
    rest = (job.tables, job.traces, job.drop, job.reduce)
    return json.dumps([sc, rest], sort_keys=True), at


def group_by_prefix(jobs: Iterable[Job]) -> list[list[Job]]:
    """The jobs in groups that share a prefix (in the order each group's
    first job came), a job that cannot fork alone in its group."""
    groups: dict[str, list[Job]] = {}
    for n, job in enumerate(jobs):
        k = prefix_key(job)
        groups.setdefault(k[0] if k else f"alone {n}", []).append(job)
    return list(groups.values())


def execute_forked(jobs: Sequence[Job]) -> list[RunOutput]:
    """Runs jobs that share a prefix (:func:`prefix_key`), in the order
    given: one simulation, built with the latest of their handoff instants,
    runs up to each instant in turn and is forked there. A job whose
    algorithm cannot be copied (a Python one) runs on its own. Each run's
    CPU and wall seconds count from the end of the one before (the shared
    prefix is charged to the run that first needed it)."""
    if len(jobs) < 2:
        return [execute(j) for j in jobs]
    keyed = [(prefix_key(j), j) for j in jobs]
    if any(k is None for k, _ in keyed):
        return [execute(j) for j in jobs]
    order = sorted(range(len(jobs)), key=lambda i: keyed[i][0][1])  # type: ignore[index]
    latest = jobs[order[-1]]
    worker = f"{socket.gethostname()}:{os.getpid()}"
    outputs: dict[int, RunOutput] = {}
    try:
        base = _native.Simulation(latest.scenario_json, forkable=True)
    except BaseException:  # a scenario error: each job says it
        return [execute(j) for j in jobs]
    wall = time.perf_counter()
    cpu = time.process_time()
    for i in order:
        job = jobs[i]
        at = keyed[i][0][1]  # type: ignore[index]
        try:
            engine = time.process_time()
            base.run_before(at)
            sim = base.fork()
            sim.set_handoff_at(0, at)
            sim.run_until(sim.end)
            engine = time.process_time() - engine
        except ValueError:  # an algorithm that cannot be copied
            outputs[i] = execute(job)
            continue
        try:
            if sim.stopped is not None:
                outputs[i] = RunOutput(job.key, error=sim.stopped, worker=worker)
            else:
                outputs[i] = _output(job, sim, {}, worker, wall, cpu, engine)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:
            outputs[i] = RunOutput(job.key, error=f"{type(e).__name__}: {e}", worker=worker)
        wall = time.perf_counter()
        cpu = time.process_time()
    return [outputs[i] for i in range(len(jobs))]
