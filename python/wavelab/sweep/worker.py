"""What runs in a sweep's worker: a :class:`Job` (a normalised scenario as
JSON and the captures to take) run to the end by :func:`execute`, which
returns a :class:`RunOutput`: the run's files as bytes (Parquet tables,
summary, ``run.json``, pcap captures), its figures and metrics. The parent
process writes them into the store, so a cluster needs no shared file
system, and a run computes the same bytes of tables wherever it executes
(the simulation is deterministic)."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wavelab import _native
from wavelab.analysis.metrics import flow_metrics, handoff_metrics
from wavelab.analysis.transfers import transfer_metrics
from wavelab.results.frames import Results
from wavelab.results.native_files import run_files
from wavelab.results.tables import table_columns
from wavelab.runner.captures import capture_file_name
from wavelab.scenario.loading import Scenario
from wavelab.sweep.store import code_version


@dataclass(frozen=True)
class Job:
    """One run to execute."""

    key: str
    scenario_json: str
    """The normalised scenario (what the simulator receives)."""
    captures: tuple[str, ...] = ()
    """Capture targets (``flow:NAME``, ``link:NAME``, ...), one pcap each."""
    tables: bool = True
    """Write the run's files (Parquet tables, ``summary.csv``, ``run.json``);
    False keeps only its metrics and figures, in the store's index line (a
    study that needs no per-run tables spares their encoding and writing)."""
    traces: tuple[tuple[str, str], ...] = ()
    """The SHA-256 of each trace file the scenario reads, by path (as
    :attr:`wavelab.scenario.Scenario.traces`; ``run.json`` records them)."""
    drop: tuple[str, ...] = ()
    """Optional tables not to keep (``packets``: a packet log that only the
    reduction reads)."""
    reduce: str = ""
    """A reduction to compute in the worker, ``module:function@version``:
    ``function(results)`` of the run's :class:`~wavelab.results.Results`
    returns JSON (numbers, strings, lists, dicts) that the store keeps in the
    run's index line. The version changes when what it computes changes, so
    that a store does not hand back an older reduction."""


@dataclass
class RunOutput:
    """What a run produced (or why it failed)."""

    key: str
    files: dict[str, bytes] = field(default_factory=dict)
    run: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    captures: list[str] = field(default_factory=list)
    error: str | None = None
    worker: str = ""
    lean: bool = False
    """Run without its files (:attr:`Job.tables` False)."""
    dropped: list[str] = field(default_factory=list)
    """The optional tables not kept (:attr:`Job.drop`)."""
    reducer: str = ""
    reduced: Any = None
    """What :attr:`Job.reduce` computed."""


def reduction(name: str) -> Callable[[Results], Any]:
    """The function of a reduction named ``module:function@version``."""
    where = name.split("@", 1)[0]
    module, _, function = where.partition(":")
    fn: Callable[[Results], Any] = getattr(importlib.import_module(module), function)
    return fn


def execute(job: Job) -> RunOutput:
    """Runs one job to the end (in a worker process). Never raises for a
    failed run: the error is in :attr:`RunOutput.error`."""

    worker = f"{socket.gethostname()}:{os.getpid()}"
    wall = time.perf_counter()
    cpu = time.process_time()
    try:
        sim = _native.Simulation(job.scenario_json)
        files: dict[str, bytes] = {}
        # a directory for the captures only when there are any: creating and
        # removing one takes about 3 ms of waiting on this machine's disk,
        # as long as a short run
        with (
            tempfile.TemporaryDirectory(prefix="wavelab-capture-")
            if job.captures
            else contextlib.nullcontext("")
        ) as tmp:
            paths = [Path(tmp) / capture_file_name(t) for t in job.captures]
            for target, path in zip(job.captures, paths, strict=True):
                sim.add_capture(target, str(path))
            engine = time.process_time()
            sim.run_until(sim.end)
            engine = time.process_time() - engine
            if sim.stopped is not None:
                return RunOutput(job.key, error=sim.stopped, worker=worker)
            for done, path in zip(sim.finish_captures(), paths, strict=True):
                if "error" in done:
                    raise OSError(done["errno"], f"capture {done['target']}: {done['error']}")
                files[path.name] = path.read_bytes()
        return _output(job, sim, files, worker, wall, cpu, engine)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # a Rust panic arrives as a BaseException
        return RunOutput(job.key, error=f"{type(e).__name__}: {e}", worker=worker)


def _output(
    job: Job,
    sim: _native.Simulation,
    files: dict[str, bytes],
    worker: str,
    wall: float,
    cpu: float,
    engine: float,
) -> RunOutput:
    """The output of ``job`` from its simulation run to the end: its
    figures, metrics, files and reduction (``wall`` and ``cpu``: the clocks
    when the run started; ``engine``: the engine's CPU seconds)."""
    normalized = json.loads(job.scenario_json)
    sc = Scenario(normalized, normalized, None, job.scenario_json, traces=dict(job.traces))
    stats: dict[str, Any] = dict(sim.run_stats())
    stats["wall_seconds"] = time.perf_counter() - wall
    stats["engine_cpu_seconds"] = engine
    stats["worker"] = worker
    # the files straight from the native columns (byte-identical to
    # Results.to_files, without building the DataFrames)
    native = sim.results()
    flows = table_columns(native["flows"])
    # the metrics from the native columns, no DataFrames (the same
    # figures; the links table is read here because a run without stored
    # tables has no links.parquet to read back)
    handoffs = table_columns(native["handoffs"]) if "handoffs" in native else None
    handovers = table_columns(native["handovers"]) if "handovers" in native else None
    links = table_columns(native["links"])
    metrics = {
        **flow_metrics(flows, links, stats, normalized, handovers, handoffs),
        **handoff_metrics(handoffs),
        **transfer_metrics(table_columns(native["transfers"]) if "transfers" in native else None),
    }
    if job.tables:
        # (a run without them: the store keeps only its index line)
        tables, _ = run_files(sc, native, stats, True, metrics)
        dropped = {f"{t}.parquet" for t in job.drop}
        files = {**{k: v for k, v in tables.items() if k not in dropped}, **files}
    reduced = None
    if job.reduce:
        reduced = reduction(job.reduce)(Results.from_native(sc, native, stats, True))
        json.dumps(reduced, allow_nan=True)  # refused here, not in the parent
    # the worker's CPU time for the whole run (scenario to metrics), for
    # the index line and the runs table (run.json, written above, has the
    # engine's)
    stats["cpu_seconds"] = time.process_time() - cpu
    return RunOutput(
        job.key,
        files,
        stats,
        metrics,
        list(job.captures),
        None,
        worker,
        not job.tables,
        list(job.drop) if job.tables else [],
        job.reduce,
        reduced,
    )


def worker_code_version() -> str:
    """The code version of the process this runs in (asked of cluster workers)."""
    return code_version()
