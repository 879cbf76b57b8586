"""The ``fork`` benchmark: MobiWac 2009 cells (one handoff, one TCP, one
flow count, 200 handoff instants) run fresh, one simulation per instant, and
forked from one shared past (:func:`wavelab.sweep.forking.execute_forked`),
in this process; CPU and wall seconds of each, and the load average."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from wavelab.sweep.worker import Job


@dataclass
class ForkFigures:
    """What ``fork`` measured on one cell."""

    cell: str
    runs: int
    fresh_cpu_s: float
    fresh_wall_s: float
    forked_cpu_s: float
    forked_wall_s: float
    load: tuple[float, float, float]

    def line(self) -> str:
        """The figures as text."""
        return (
            f"{self.cell}: {self.runs} runs; fresh {self.fresh_cpu_s:.2f} cpu_s "
            f"({self.fresh_wall_s:.2f} s wall), forked {self.forked_cpu_s:.2f} cpu_s "
            f"({self.forked_wall_s:.2f} s wall): {self.fresh_cpu_s / self.forked_cpu_s:.1f}x "
            f"(load {self.load[0]:.2f} {self.load[1]:.2f} {self.load[2]:.2f})"
        )


CELLS = ((6, "regular", 2), (9, "regular", 2), (13, "ETCPv1", 4), (17, "CUBIC", 1))
"""One handoff of each kind and direction (``--quick``'s figures)."""


def cell_jobs(figure: int, tcp: str, flows: int) -> list[Job]:
    """The 200 runs of one cell of the study's grid, as its sweep makes them
    (metrics only, no tables)."""
    from wavelab.experiments import mobiwac2009 as m
    from wavelab.scenario.loading import from_toml

    h = next(x for x in m.handoffs() if x.figure == figure)
    grid = m.full_grid()
    return [
        Job(
            f"{figure}-{tcp}-{flows}-{t}",
            from_toml(m.scenario_text(h, t, flows, tcp)).to_json(),
            tables=False,
        )
        for t in grid.instants
    ]


def fork_speedup() -> list[ForkFigures]:
    """Each of :data:`CELLS` fresh, then forked; the outputs are checked
    equal (metrics) so that the speed-up is of the same work."""
    from wavelab.sweep.forking import execute_forked
    from wavelab.sweep.worker import execute

    out = []
    for figure, tcp, flows in CELLS:
        jobs = cell_jobs(figure, tcp, flows)
        load = os.getloadavg()
        w, c = time.perf_counter(), time.process_time()
        fresh = [execute(j) for j in jobs]
        fresh_wall, fresh_cpu = time.perf_counter() - w, time.process_time() - c
        w, c = time.perf_counter(), time.process_time()
        forked = execute_forked(jobs)
        forked_wall, forked_cpu = time.perf_counter() - w, time.process_time() - c
        for a, b in zip(fresh, forked, strict=True):
            if a.error or b.error or repr(a.metrics) != repr(b.metrics):
                raise RuntimeError(f"fork: run {a.key} differs forked ({a.error or b.error})")
        out.append(
            ForkFigures(
                f"Fig. {figure} {tcp} x{flows}",
                len(jobs),
                fresh_cpu,
                fresh_wall,
                forked_cpu,
                forked_wall,
                load,
            )
        )
    return out
