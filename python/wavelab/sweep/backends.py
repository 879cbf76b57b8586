"""Where a sweep's runs execute: a local process pool, or a Dask cluster.

Both backends run the same function, :func:`execute`, on a :class:`Job` (a
normalised scenario as JSON and the captures to take) and return a
:class:`RunOutput`: the run's files as bytes (Parquet tables, summary,
``run.json``, pcap captures), its figures and metrics. The parent process
writes them into the store, so a cluster needs no shared file system, and a
run computes the same bytes of tables wherever it executes (the simulation
is deterministic).

At most ``2 x workers`` runs are queued at once: a sweep of 100 000 points
does not hold 100 000 pending scenarios in memory, and an interruption
abandons only what was in flight.
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import os
import re
import signal
import socket
import tempfile
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from wavelab import _native
from wavelab.errors import WavelabError
from wavelab.outputs import file_name

DEFAULT_CLUSTER_TIMEOUT = 10.0
"""Seconds to wait for a Dask scheduler (and its first worker) to answer."""


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


def capture_file_name(target: str) -> str:
    """The pcap file name of a capture target: ``flow:first`` -> ``flow-first.pcap``
    (a safe file name whatever the target says, see :func:`wavelab.outputs.file_name`)."""
    return f"{file_name(target, fallback='capture')}.pcap"


def execute(job: Job) -> RunOutput:
    """Runs one job to the end (in a worker process). Never raises for a
    failed run: the error is in :attr:`RunOutput.error`."""

    from wavelab.metrics import flow_metrics, handoff_metrics
    from wavelab.native_files import run_files
    from wavelab.results import table_columns
    from wavelab.scenario import Scenario

    worker = f"{socket.gethostname()}:{os.getpid()}"
    wall = time.perf_counter()
    cpu = time.process_time()
    try:
        normalized = json.loads(job.scenario_json)
        sc = Scenario(normalized, normalized, None, job.scenario_json, traces=dict(job.traces))
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
        }
        if job.tables:
            # (a run without them: the store keeps only its index line)
            tables, _ = run_files(sc, native, stats, True, metrics)
            files = {**tables, **files}
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
        )
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # a Rust panic arrives as a BaseException
        return RunOutput(job.key, error=f"{type(e).__name__}: {e}", worker=worker)


def worker_code_version() -> str:
    """The code version of the process this runs in (asked of cluster workers)."""
    from wavelab.store import code_version

    return code_version()


class Backend(Protocol):
    """Something that runs jobs and yields their outputs as they finish."""

    workers: int
    description: str

    def run(self, jobs: Iterable[Job]) -> Iterator[RunOutput]:
        """Runs ``jobs``; yields each output when it is done (in any order)."""
        ...

    def close(self) -> None:
        """Releases the workers."""
        ...


def _ignore_sigint() -> None:
    # Ctrl-C is the parent's to handle: it stops the sweep and ends the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _abandon(pool: ProcessPoolExecutor) -> None:
    """Ends the runs in flight of an interrupted pool at once.

    A worker terminated while it sends its result leaves half a message in
    the result pipe, and the executor's manager thread then waits for the
    rest forever; the interpreter joins that thread at exit, so Ctrl-C on a
    sweep could hang there. Once the workers are gone, closing this process's
    copy of the pipe's write end (no other is left) makes that read end with
    EOF, which the manager thread takes as a broken pool, and it ends.
    """
    workers = list(getattr(pool, "_processes", {}).values())
    for p in workers:
        with contextlib.suppress(Exception):
            p.terminate()
    for p in workers:
        with contextlib.suppress(Exception):
            p.join(timeout=5)
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    if writer is not None:
        with contextlib.suppress(Exception):
            writer.close()


class LocalPool:
    """Runs jobs in ``workers`` local processes (default: every core); one
    worker runs them in this process."""

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and workers < 1:
            raise WavelabError(f"--jobs {workers}: give 1 or more parallel runs")
        self.workers = workers or os.cpu_count() or 1
        self.description = (
            "this process" if self.workers == 1 else f"{self.workers} local processes"
        )

    def run(self, jobs: Iterable[Job]) -> Iterator[RunOutput]:
        if self.workers == 1:
            for job in jobs:
                yield execute(job)
            return
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("forkserver"),
            initializer=_ignore_sigint,
        )
        pending: dict[Future[RunOutput], Job] = {}
        it = iter(jobs)
        finished = False
        try:
            while True:
                while len(pending) < 2 * self.workers:
                    nxt = next(it, None)
                    if nxt is None:
                        break
                    pending[pool.submit(execute, nxt)] = nxt
                if not pending:
                    break
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    job = pending.pop(fut)
                    try:
                        out = fut.result()
                    except BrokenProcessPool:
                        raise WavelabError(
                            "a worker process died (out of memory, or killed); the runs "
                            "finished before are kept; run the same command again to resume"
                        ) from None
                    yield out
            finished = True
        finally:
            if not finished:
                _abandon(pool)
            pool.shutdown(wait=finished, cancel_futures=True)

    def close(self) -> None:
        pass


class DaskCluster:
    """Runs jobs on the workers of a Dask distributed scheduler."""

    def __init__(self, address: str, timeout: float = DEFAULT_CLUSTER_TIMEOUT) -> None:
        try:
            import distributed
        except ImportError:
            raise WavelabError(
                "--cluster needs Dask distributed: pip install 'wavelab[cluster]'"
            ) from None
        self.address = address if "://" in address else f"tcp://{address}"
        where = f"--cluster {address}"
        if not re.fullmatch(r"(tcp|tls|ucx|inproc)://[^\s/:]+:\d{1,5}", self.address):
            raise WavelabError(
                f"{where}: not a scheduler address; write HOST:PORT or tcp://HOST:PORT "
                "(e.g. tcp://10.0.0.5:8786)"
            )
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        try:
            dist: Any = distributed  # its functions are not annotated
            self.client: Any = dist.Client(self.address, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            raise WavelabError(
                f"{where}: no Dask scheduler answered within {timeout:g} s "
                f"({type(e).__name__}: {e})"
            ) from None
        try:
            try:
                self.client.wait_for_workers(1, timeout=timeout)
            except (OSError, TimeoutError) as e:
                raise WavelabError(
                    f"{where}: the scheduler has no workers (none joined within {timeout:g} s)"
                ) from e
            self._check_versions(where)
            info = self.client.scheduler_info()["workers"]
            self.workers = sum(int(w.get("nthreads", 1)) for w in info.values()) or 1
            self.description = f"Dask at {self.address} ({len(info)} workers)"
        except BaseException:
            self.client.close()
            raise

    def _check_versions(self, where: str) -> None:
        from wavelab.store import code_version

        mine = code_version()
        try:
            versions: dict[str, str] = self.client.run(worker_code_version)
        except Exception as e:
            raise WavelabError(
                f"{where}: the workers cannot run wavelab ({type(e).__name__}: {e}); "
                "install the same wavelab build on every worker"
            ) from None
        other = {w: v for w, v in versions.items() if v != mine}
        if other:
            shown = ", ".join(f"{w} has {v}" for w, v in sorted(other.items()))
            raise WavelabError(
                f"{where}: workers run another wavelab build ({shown}; this one is {mine}); "
                "results would not match their store keys"
            )

    def run(self, jobs: Iterable[Job]) -> Iterator[RunOutput]:
        import distributed

        dist: Any = distributed
        it = iter(jobs)
        ac: Any = dist.as_completed(loop=self.client.loop)
        in_flight = 0
        futures: dict[Any, Job] = {}

        def submit() -> bool:
            job = next(it, None)
            if job is None:
                return False
            fut = self.client.submit(execute, job, key=f"wavelab-{job.key}", pure=False)
            futures[fut.key] = job
            ac.add(fut)
            return True

        try:
            while in_flight < 2 * self.workers and submit():
                in_flight += 1
            for fut in ac:
                in_flight -= 1
                job = futures.pop(fut.key)
                try:
                    out: RunOutput = fut.result()
                except Exception as e:  # the worker died more often than Dask retries
                    out = RunOutput(job.key, error=f"{type(e).__name__}: {e}")
                fut.release()
                yield out
                if submit():
                    in_flight += 1
        finally:
            for f in list(getattr(ac, "futures", ())):
                with contextlib.suppress(Exception):
                    f.cancel()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
