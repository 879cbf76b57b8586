"""Running several scenarios at once on the local cores, with a progress bar.

:func:`run_each` is the memory-frugal form: every run is reduced where it
ran (written to disk, or measured) as soon as it finishes, so only what the
reduction returns crosses to this process and stays there. :func:`run_all`
keeps every run's tables and is for a handful of runs.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, TypeVar

from wavelab._util.arrow_memory import use_system_allocator
from wavelab.results.frames import Results
from wavelab.runner.simulate import run
from wavelab.scenario.loading import Scenario, from_dict

T = TypeVar("T")

Reduce = Callable[[Results], T]
"""What becomes of a finished run, computed in the process that ran it;
must be picklable (a module-level function or a ``functools.partial`` of one)."""


def _run_and_reduce(data: dict[str, Any], reduce: Reduce[T]) -> T:
    use_system_allocator()
    return reduce(run(from_dict(data)))


def run_each(
    tasks: Mapping[str, tuple[Scenario, Reduce[T]]],
    jobs: int | None = None,
    progress: bool = True,
) -> dict[str, T]:
    """Runs every scenario of ``tasks`` (``{key: (scenario, reduce)}``),
    ``jobs`` at a time (default: all cores), hands each run's results to its
    ``reduce`` in the worker that ran it as soon as it finishes, and returns
    what the reductions returned, by key, in the order of ``tasks``.

    No process ever holds more than one run's tables at a time (plus what the
    reductions keep): a reproduction of a hundred runs peaks at the memory of
    its largest run, not the sum of them. Runs are deterministic, so the
    order they finish in does not matter."""
    jobs = jobs or os.cpu_count() or 1
    use_system_allocator()
    out: dict[str, T] = {}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), unit="run", desc="runs", disable=None)
    try:
        if jobs == 1:
            for key, (sc, reduce) in tasks.items():
                res = run(sc)
                res.scenario = sc
                out[key] = reduce(res)
                del res
                if bar is not None:
                    bar.update(1)
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = {
                    pool.submit(_run_and_reduce, sc.normalized, reduce): k
                    for k, (sc, reduce) in tasks.items()
                }
                for fut in as_completed(futures):
                    out[futures.pop(fut)] = fut.result()
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    print(f"ran {len(out)} scenarios", file=sys.stderr)
    return {k: out[k] for k in tasks}


def _keep(res: Results) -> Results:
    return res


def _write(directory: Path, res: Results) -> None:
    res.to_parquet(directory)


def write_to(directory: Path) -> Reduce[None]:
    """A reduction that writes a run's results to ``directory``
    (:meth:`Results.to_parquet`) and keeps nothing in memory; read them back
    with :meth:`Results.read_parquet`."""
    return functools.partial(_write, directory)


class StoredRuns(Mapping[str, Results]):
    """Runs by key: those kept in memory as they are, the others read back
    from ``root / key`` each time one is asked for (nothing is cached, so
    going through them one by one holds one at a time)."""

    def __init__(self, root: Path, kept: Mapping[str, Results], keys: list[str]) -> None:
        self.root = root
        self.kept = dict(kept)
        self.keys_ = keys

    def __getitem__(self, key: str) -> Results:
        if key in self.kept:
            return self.kept[key]
        if key not in self.keys_:
            raise KeyError(key)
        return Results.read_parquet(self.root / key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys_)

    def __len__(self) -> int:
        return len(self.keys_)


def run_to_disk(
    scenarios: Mapping[str, Scenario],
    root: Path,
    jobs: int | None = None,
    keep: Callable[[str], bool] = lambda key: False,
    progress: bool = True,
) -> StoredRuns:
    """Runs every scenario as :func:`run_each` does; writes each run's
    results to ``root / key`` as soon as it finishes, except those whose key
    ``keep`` accepts, which stay in memory (and are not written). The
    returned mapping reads the written ones back when they are asked for."""
    tasks: dict[str, tuple[Scenario, Reduce[Results | None]]] = {
        k: (sc, _keep if keep(k) else write_to(root / k)) for k, sc in scenarios.items()
    }
    done = run_each(tasks, jobs, progress)
    kept = {k: r for k, r in done.items() if r is not None}
    for key, res in kept.items():
        res.scenario = scenarios[key]
    return StoredRuns(root, kept, list(scenarios))


def run_all(
    scenarios: Mapping[str, Scenario], jobs: int | None = None, progress: bool = True
) -> dict[str, Results]:
    """Runs every scenario, ``jobs`` at a time (default: all cores), and returns
    the results by key, every run's tables in memory (for many runs, use
    :func:`run_each`). Runs are deterministic, so the order they finish in
    does not matter."""
    kept = run_each({k: (sc, _keep) for k, sc in scenarios.items()}, jobs, progress)
    for key, sc in scenarios.items():
        kept[key].scenario = sc
    return kept
