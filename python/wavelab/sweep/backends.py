"""Where a sweep's runs execute: a local process pool, or a Dask cluster.

Both backends run the same function, :func:`wavelab.sweep.worker.execute`,
on a :class:`~wavelab.sweep.worker.Job` and yield its
:class:`~wavelab.sweep.worker.RunOutput` (:mod:`wavelab.sweep.worker`).

At most ``2 x workers`` runs are queued at once: a sweep of 100 000 points
does not hold 100 000 pending scenarios in memory, and an interruption
abandons only what was in flight.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import re
import select
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

from wavelab._util.arrow_memory import use_system_allocator
from wavelab.errors import WavelabError
from wavelab.sweep.forking import execute_forked, group_by_prefix
from wavelab.sweep.store import code_version
from wavelab.sweep.worker import Job, RunOutput, execute, worker_code_version

DEFAULT_CLUSTER_TIMEOUT = 10.0
"""Seconds to wait for a Dask scheduler (and its first worker) to answer."""


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


def _worker_start(parent: int) -> None:
    """Starts a worker process: Ctrl-C, SIGTERM and SIGHUP are the parent's
    to handle (sent to the whole process group, they stop the sweep, which
    then ends the workers), and the worker ends when the parent ``parent``
    does."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    end_with(parent)
    # a worker encodes one run's Parquet files after another: with pyarrow's
    # default pool it would keep the peak of every run it handled
    use_system_allocator()


def end_with(parent: int) -> None:
    """Ends this process as soon as process ``parent`` ends, however it ends
    (``kill -9`` too), so that a sweep's workers never run on for nobody.

    A worker's parent in the operating system's sense is the pool's fork
    server, not the sweep, so ``prctl(PR_SET_PDEATHSIG)`` would watch the
    wrong process; a thread waits on a pidfd of the sweep's process instead
    (Linux 5.3), or checks every second that it exists (elsewhere)."""
    try:
        fd: int | None = os.pidfd_open(parent)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):
        fd = None

    def watch() -> None:
        if fd is not None:
            select.select([fd], [], [])
        else:
            while True:
                time.sleep(1.0)
                try:
                    os.kill(parent, 0)
                except ProcessLookupError:
                    break
                except OSError:
                    pass
        os._exit(1)

    threading.Thread(target=watch, name="wavelab-end-with-parent", daemon=True).start()


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
            p.kill()  # (they ignore SIGTERM)
    for p in workers:
        with contextlib.suppress(Exception):
            p.join(timeout=5)
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    if writer is not None:
        with contextlib.suppress(Exception):
            writer.close()


def _start_helpers_deaf_to_hangup() -> None:
    """Starts multiprocessing's resource tracker and fork server with SIGHUP
    ignored (a disposition that survives ``exec``).

    Both ignore SIGINT and SIGTERM but not SIGHUP, so a closed terminal
    (SIGHUP to the whole process group) used to kill them while the sweep
    kept its finished runs: the sweep's clean-up then met a new tracker that
    had never seen its semaphores and printed ``KeyError: '/mp-...'`` as the
    command's last line. Only the main thread can change a signal's
    handler; elsewhere the helpers start as multiprocessing starts them.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    from multiprocessing import forkserver, resource_tracker

    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        resource_tracker.ensure_running()
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGHUP, old)


class LocalPool:
    """Runs jobs in ``workers`` local processes (default: every core); one
    worker runs them in this process."""

    def __init__(self, workers: int | None = None, fork: bool = False) -> None:
        if workers is not None and workers < 1:
            raise WavelabError(f"--jobs {workers}: give 1 or more parallel runs")
        self.workers = workers or os.cpu_count() or 1
        self.fork = fork
        """Run jobs that differ only in a handoff's instant as one task that
        shares their past (:func:`wavelab.sweep.forking.execute_forked`;
        the same tables). The jobs are then all read before the first runs."""
        self.description = (
            "this process" if self.workers == 1 else f"{self.workers} local processes"
        )

    def run(self, jobs: Iterable[Job]) -> Iterator[RunOutput]:
        # (without forking, each job is a group of one, read as it comes)
        groups = group_by_prefix(jobs) if self.fork else ([j] for j in jobs)
        yield from self._run_groups(groups)

    def _run_groups(self, groups: Iterable[list[Job]]) -> Iterator[RunOutput]:
        """Runs each group of jobs sharing a prefix as one task."""
        if self.workers == 1:
            for g in groups:
                yield from execute_forked(g)
            return
        _start_helpers_deaf_to_hangup()
        pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("forkserver"),
            initializer=_worker_start,
            initargs=(os.getpid(),),
        )
        pending: set[Future[list[RunOutput]]] = set()
        it = iter(groups)
        finished = False
        try:
            while True:
                while len(pending) < 2 * self.workers:
                    nxt = next(it, None)
                    if nxt is None:
                        break
                    pending.add(pool.submit(execute_forked, nxt))
                if not pending:
                    break
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    pending.discard(fut)
                    try:
                        outs = fut.result()
                    except BrokenProcessPool:
                        raise WavelabError(
                            "a worker process died (out of memory, or killed); the runs "
                            "finished before are kept; run the same command again to resume"
                        ) from None
                    yield from outs
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
