"""Benchmarks of the layer above the engine (``wavelab bench``):

* ``python-overhead``: ``dcnet-newreno`` and ``cubic-100-1g`` through
  ``wavelab.run`` (stepped run, results converted to DataFrames) against the
  engine alone, same process;
* ``sweep``: 1,000 short handover runs (20 s of the DCNET scenario, the
  handover instant and the algorithm varied) through the sweep backend (a
  local pool, each run's metrics computed as a store keeps a run without its
  tables) on all cores: runs per second, and the share of the wall time
  spent outside the engine;
* ``custom-cc``: the congestion-control example of docs/custom-cc.md, TCP
  Vegas, in Rust (``vegas``) and as a Python class (``py-vegas``, the same
  rules, bit-identical results) on the same 60 s dumbbell run: wall time of
  each and the extra cost per ACK;
* ``reproduce-memory``: ``wavelab reproduce dcnet2016`` (92 runs on all
  cores) in a child process, into a temporary directory: its wall time and
  the peak resident memory of its largest process (what ``/usr/bin/time -v``
  reports as "Maximum resident set size").
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from wavelab.bench.engine import CASES, run_engine, text_table

PYTHON_CASES = {
    "python-overhead": "dcnet-newreno through wavelab.run vs the engine alone",
    "sweep": "1,000 short handover runs through the sweep backend, all cores",
    "custom-cc": "TCP Vegas in Rust vs the same algorithm as a Python class",
    "reproduce-memory": "wavelab reproduce dcnet2016 in a child: wall time, peak memory",
    "fork": "MobiWac 2009 cells (200 handoff instants) fresh vs forked from one shared past",
}
"""Cases that measure the Python layer."""


@dataclass
class LayerFigures:
    """What a Python-layer case measured."""

    case: str
    runs: int
    wall_s: float
    engine_s: float
    note: str

    @property
    def overhead(self) -> float:
        """Share of the wall time spent outside the engine."""
        return 1.0 - self.engine_s / self.wall_s if self.wall_s > 0 else 0.0


OVERHEAD_CASES = ("dcnet-newreno", "cubic-100-1g")
"""The runs ``python-overhead`` measures: a short one and a longer one."""


def python_overhead(repeat: int = 3) -> list[LayerFigures]:
    """Each of :data:`OVERHEAD_CASES` through ``wavelab.run`` against the
    engine alone, in this (warm) process, in ``repeat`` interleaved rounds
    (engine, then ``wavelab.run``, in turn): the medians of both, and the
    median and range of the per-round share spent outside the engine."""
    from wavelab.results.tables import TABLES
    from wavelab.runner.simulate import run
    from wavelab.scenario.loading import Scenario, from_dict

    def run_and_read(sc: Scenario) -> None:
        res = run(sc)
        for name in TABLES:  # every frame built, as a user reading them all
            getattr(res, name)

    out = []
    for case in OVERHEAD_CASES:
        sc = from_dict(CASES[case][1]())
        run_and_read(sc)  # warm: imports, first-call costs
        engines, totals = [], []
        for _ in range(repeat):
            engines.append(run_engine(sc.to_json())[0])
            t0 = time.perf_counter()
            run_and_read(sc)
            totals.append(time.perf_counter() - t0)
        share = Rounds([1.0 - e / w for e, w in zip(engines, totals, strict=True)])
        out.append(
            LayerFigures(
                "python-overhead",
                1,
                statistics.median(totals),
                statistics.median(engines),
                f"{case}: wavelab.run (100 steps, every DataFrame read) vs engine; "
                f"outside per round {share.text(percent=True)}",
            )
        )
    return out


def sweep_scenarios(n: int = 1000) -> dict[str, Any]:
    """``n`` short handover runs: 20 s of the DCNET scenario, the handover
    instant from 5 to 15 s, the algorithm alternating NewReno / Wave."""
    from wavelab.scenario.builtin import builtin_scenario
    from wavelab.scenario.loading import Scenario

    base = builtin_scenario("dcnet2016-handover")
    out: dict[str, Scenario] = {}
    for k in range(n):
        at = 5.0 + 10.0 * k / n
        out[f"run{k}"] = base.with_changes(
            {
                "duration": "20s",
                "flows[0].cc": "wave" if k % 2 else "newreno",
                "links[1].handovers[0].at": f"{at:.4f}s",
            }
        )
    return out


def sweep(n: int = 1000, jobs: int | None = None) -> LayerFigures:
    """Runs :func:`sweep_scenarios` through the sweep backend (a local pool;
    each run's metrics computed, as a store keeps a run without its tables),
    and the same runs through the engine alone in this process to compare."""
    from wavelab.sweep.backends import LocalPool
    from wavelab.sweep.worker import Job

    scenarios = sweep_scenarios(n)
    jobs = jobs or os.cpu_count() or 1
    backend = LocalPool(jobs)
    t0 = time.perf_counter()
    todo = (Job(k, sc.to_json(), tables=False) for k, sc in scenarios.items())
    failed = [o.error for o in backend.run(todo)]
    wall = time.perf_counter() - t0
    if any(failed):
        raise RuntimeError(f"sweep: a run failed: {next(e for e in failed if e)}")
    engine = sum(run_engine(sc.to_json())[0] for sc in scenarios.values()) / jobs
    return LayerFigures(
        "sweep", n, wall, engine, f"{jobs} workers; engine time = serial engine time / workers"
    )


@dataclass
class Rounds:
    """One figure measured in each of several interleaved rounds."""

    values: list[float]

    def text(self, percent: bool = False) -> str:
        """``median M (range A-B, N rounds)``."""
        k, unit = (100.0, " %") if percent else (1.0, "")
        lo, mid, hi = min(self.values), statistics.median(self.values), max(self.values)
        n = len(self.values)
        return f"median {k * mid:.2f}{unit} (range {k * lo:.2f}-{k * hi:.2f}{unit}, {n} rounds)"


@dataclass
class CustomCcFigures:
    """What ``custom-cc`` measured: each version's wall time per round, the
    two run in turn in every round."""

    rust_s: list[float]
    python_s: list[float]
    calls: int
    simulated_s: float

    def lines(self) -> str:
        """The figures as text: the medians, and the per-round ratio."""
        rust = statistics.median(self.rust_s)
        python = statistics.median(self.python_s)
        ratio = Rounds([p / r for p, r in zip(self.python_s, self.rust_s, strict=True)])
        extra = Rounds(
            [(p - r) / self.calls * 1e6 for p, r in zip(self.python_s, self.rust_s, strict=True)]
        )
        return "\n".join(
            [
                f"custom-cc: TCP Vegas, one flow, {self.simulated_s:g} simulated s, "
                f"{self.calls:,} ACKs and congestion events (at most one call each)",
                f"  Rust   (vegas):    {rust:.3f} s wall (median)",
                f"  Python (py-vegas): {python:.3f} s wall (median)",
                f"  Python / Rust per round: {ratio.text()}",
                f"  extra us per ACK per round: {extra.text()}",
            ]
        )


def custom_cc(repeat: int = 3) -> CustomCcFigures:
    """Runs the dumbbell (``newreno`` built-in, 60 s, no packet log) with the
    Rust Vegas and with the Python one in ``repeat`` rounds, in this process
    (a Python algorithm lives in the process that registered it): each round
    runs both, the one that goes first alternating from round to round."""
    import wavelab.examples.vegas  # noqa: F401 - registers "py-vegas"
    from wavelab.runner.simulate import run
    from wavelab.scenario.builtin import builtin_scenario

    base = builtin_scenario("newreno").with_changes({"flows[0].log_packets": False})
    walls: dict[str, list[float]] = {"vegas": [], "py-vegas": []}
    calls = 0
    simulated = 0.0
    for k in range(repeat):
        for cc in ("vegas", "py-vegas") if k % 2 == 0 else ("py-vegas", "vegas"):
            res = run(base.with_changes({"flows[0].cc": cc}))
            if not res.complete:
                raise RuntimeError(f"{cc}: {res.run.get('stopped')}")
            walls[cc].append(float(res.run["wall_seconds"]))
            f = res.flows.iloc[0]
            calls = int(f["acks_received"]) + int(f["fast_retransmits"]) + int(f["rto_expiries"])
            simulated = float(res.run["simulated"])
    return CustomCcFigures(walls["vegas"], walls["py-vegas"], calls, simulated)


@dataclass
class MemoryFigures:
    """What ``reproduce-memory`` measured."""

    experiment: str
    wall_s: float
    peak_rss_mb: float
    exact: bool

    def line(self) -> str:
        """The figures as one line of text."""
        bound = "" if self.exact else " (an upper bound: an earlier child peaked higher)"
        return (
            f"reproduce {self.experiment}: {self.wall_s:.1f} s wall, peak RSS "
            f"{self.peak_rss_mb:.0f} MB (its largest process){bound}"
        )


def reproduce_memory(experiment: str = "dcnet2016") -> MemoryFigures:
    """Runs ``wavelab reproduce EXPERIMENT`` in a child process into a
    temporary directory: its wall time and the peak resident memory of its
    largest process, ``ru_maxrss`` of the waited-for children (Linux reports
    the largest among the child and the workers it waited for), the figure
    ``/usr/bin/time -v`` prints as "Maximum resident set size"."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="wavelab-bench-") as tmp:
        code = "import sys; from wavelab.cli import main; sys.exit(main())"
        cmd = [sys.executable, "-c", code, "reproduce", experiment, "--out", tmp]
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode != 0:
        raise RuntimeError(f"wavelab reproduce {experiment} failed: {done.stderr.strip()[-500:]}")
    return MemoryFigures(experiment, wall, peak / 1024.0, peak > before)


def format_layer_table(rows: list[LayerFigures]) -> str:
    """The Python-layer figures as an aligned text table."""
    head = ["case", "runs", "wall s", "runs/s", "engine s", "outside engine", "what"]
    body = [
        [
            r.case,
            f"{r.runs:,}",
            f"{r.wall_s:.3f}",
            f"{r.runs / r.wall_s:.1f}",
            f"{r.engine_s:.3f}",
            f"{100 * r.overhead:.1f} %",
            r.note,
        ]
        for r in rows
    ]
    return text_table(head, body)
