"""Speed benchmarks that print figures (``wavelab bench``).

Engine cases run each in a fresh Python process that imports only the native
module, so its peak resident memory is the simulator's plus the interpreter's
(the interpreter's own footprint is reported separately as ``base RSS``):

* ``dcnet-newreno``, ``dcnet-wave``: one flow through the DCNET 2016
  bottleneck L2 (8 Mbit/s, 240 ms, 100 packets, 1000-byte packets) handing
  over to L1 (2 Mbit/s, 30 ms) after a 2 s outage at 300 s; 360 simulated s;
* ``cubic-<flows>-<rate>``: 100 or 1,000 CUBIC flows sharing a 1 or
  10 Gbit/s, 10 ms bottleneck with a BDP-sized buffer; 10 simulated s.

Python cases measure the layer above the engine:

* ``python-overhead``: ``dcnet-newreno`` and ``cubic-100-1g`` through
  ``wavelab.run`` (stepped run, results converted to DataFrames) against the
  engine alone, same process;
* ``sweep``: 1,000 short handover runs (20 s of the DCNET scenario, the
  handover instant and the algorithm varied) through the parallel runner on
  all cores: runs per second, and the share of the wall time spent outside
  the engine;
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

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ACCESS = {"rate": "100Gbit/s", "delay": "1ms", "queue": "100000pkt"}


def dcnet(cc: str) -> dict[str, Any]:
    """The speed issue's case (a): L2 for 300 s, a 2 s outage, then L1."""
    import tomllib

    from wavelab.scenario import builtin_toml

    data: dict[str, Any] = tomllib.loads(builtin_toml("dcnet2016-handover"))
    data["duration"] = "360s"
    bottleneck = data["links"][1]
    bottleneck.update({"rate": "8Mbit/s", "delay": "240ms"})
    bottleneck["handovers"] = [{"at": "300s", "outage": "2s", "rate": "2Mbit/s", "delay": "30ms"}]
    data["flows"][0]["cc"] = cc
    return data


def cubic_dumbbell(flows: int, mbps: int, duration: str = "10s") -> dict[str, Any]:
    """``flows`` CUBIC flows sharing a ``mbps`` Mbit/s, 10 ms bottleneck with
    a BDP-sized buffer (at least 10 packets), fast access links."""
    # RTT = 2 x (1 + 10 + 1) ms = 24 ms; BDP = rate x 24 ms in 1500-byte packets.
    bdp = max(10, mbps * 10**6 * 24 // 1000 // 8 // 1500)
    return {
        "name": f"bench-cubic-{flows}-{mbps}mbit",
        "duration": duration,
        "output": {"interval": "100ms"},
        "links": [
            {"between": ["senders", "r1"], **ACCESS},
            {
                "between": ["r1", "r2"],
                "rate": f"{mbps}Mbit/s",
                "delay": "10ms",
                "queue": f"{bdp}pkt",
            },
            {"between": ["r2", "receivers"], **ACCESS},
        ],
        "flows": [{"from": "senders", "to": "receivers", "cc": "cubic", "count": flows}],
    }


CASES: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
    "dcnet-newreno": (
        "1 NewReno flow, 8 Mbit/s / 240 ms -> 2 Mbit/s / 30 ms at 300 s, 360 s",
        lambda: dcnet("newreno"),
    ),
    "dcnet-wave": (
        "1 TCP Wave flow, 8 Mbit/s / 240 ms -> 2 Mbit/s / 30 ms at 300 s, 360 s",
        lambda: dcnet("wave"),
    ),
    "cubic-100-1g": (
        "100 CUBIC flows, 1 Gbit/s / 10 ms / BDP buffer, 10 s",
        lambda: cubic_dumbbell(100, 1_000),
    ),
    "cubic-1000-1g": (
        "1,000 CUBIC flows, 1 Gbit/s / 10 ms / BDP buffer, 10 s",
        lambda: cubic_dumbbell(1000, 1_000),
    ),
    "cubic-100-10g": (
        "100 CUBIC flows, 10 Gbit/s / 10 ms / BDP buffer, 10 s",
        lambda: cubic_dumbbell(100, 10_000),
    ),
    "cubic-1000-10g": (
        "1,000 CUBIC flows, 10 Gbit/s / 10 ms / BDP buffer, 10 s",
        lambda: cubic_dumbbell(1000, 10_000),
    ),
}
"""Engine cases: name -> (description, scenario)."""

PYTHON_CASES = {
    "python-overhead": "dcnet-newreno through wavelab.run vs the engine alone",
    "sweep": "1,000 short handover runs through the parallel runner, all cores",
    "custom-cc": "TCP Vegas in Rust vs the same algorithm as a Python class",
    "reproduce-memory": "wavelab reproduce dcnet2016 in a child: wall time, peak memory",
}
"""Cases that measure the Python layer."""


@dataclass
class Figures:
    """What one engine benchmark run measured."""

    case: str
    simulated_s: float
    wall_s: float
    events: int
    packet_hops: int
    base_rss_mb: float
    peak_rss_mb: float

    @property
    def hops_per_s(self) -> float:
        """Packet transmissions on links per wall-clock second."""
        return self.packet_hops / self.wall_s

    @property
    def events_per_s(self) -> float:
        """Events processed per wall-clock second."""
        return self.events / self.wall_s


def _rss_mb() -> float:
    """Peak resident memory of this process in MB.

    Linux's ``VmHWM`` belongs to the current address space; ``ru_maxrss`` is
    not used there because Linux carries it across ``exec`` from the parent.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _engine(scenario_json: str) -> tuple[float, Any]:
    """Builds and runs a scenario in the engine alone (no result conversion):
    the wall seconds it took, and the finished simulation."""
    from wavelab import _native

    t0 = time.perf_counter()
    sim = _native.Simulation(scenario_json)
    sim.run_until(sim.end)
    return time.perf_counter() - t0, sim


def run_here(name: str, scenario: dict[str, Any]) -> Figures:
    """Runs ``scenario`` in this process (the engine alone, no result conversion)."""
    base = _rss_mb()
    wall, sim = _engine(json.dumps(scenario))
    st = sim.run_stats()
    return Figures(
        name,
        float(st["simulated"]),
        wall,
        int(st["events"]),
        int(st["packet_hops"]),
        base,
        _rss_mb(),
    )


def run_in_child(name: str, scenario: dict[str, Any]) -> Figures:
    """Runs ``scenario`` in a fresh process (``python -m wavelab.bench -``),
    for a clean peak-memory figure; a failure names the run and quotes the
    end of the child's error output."""
    out = subprocess.run(
        [sys.executable, "-m", "wavelab.bench", "-"],
        input=json.dumps({"name": name, "scenario": scenario}),
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        from wavelab.errors import WavelabError

        tail = "\n".join(out.stderr.strip().splitlines()[-5:])
        raise WavelabError(f"benchmark {name} failed:\n{tail}")
    return Figures(**json.loads(out.stdout))


def run_case(case: str) -> Figures:
    """Runs one engine case in a fresh process."""
    return run_in_child(case, CASES[case][1]())


def _table(head: list[str], body: list[list[str]]) -> str:
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    return "\n".join(
        "  ".join(h.rjust(w) for h, w in zip(row, widths, strict=True)) for row in [head, *body]
    )


def format_table(rows: list[Figures]) -> str:
    """The engine figures as an aligned text table."""
    head = [
        "case",
        "sim s",
        "wall s",
        "events",
        "packet hops",
        "hops/s",
        "events/s",
        "peak RSS MB",
        "base RSS MB",
    ]
    body = [
        [
            r.case,
            f"{r.simulated_s:g}",
            f"{r.wall_s:.4f}",
            f"{r.events:,}",
            f"{r.packet_hops:,}",
            f"{r.hops_per_s / 1e6:.2f} M",
            f"{r.events_per_s / 1e6:.2f} M",
            f"{r.peak_rss_mb:.1f}",
            f"{r.base_rss_mb:.1f}",
        ]
        for r in rows
    ]
    return _table(head, body)


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
    engine alone, in this (warm) process; the fastest of ``repeat`` each."""
    from wavelab.results import TABLES
    from wavelab.runner import run
    from wavelab.scenario import Scenario, from_dict

    def run_and_read(sc: Scenario) -> None:
        res = run(sc)
        for name in TABLES:  # every frame built, as a user reading them all
            getattr(res, name)

    out = []
    for case in OVERHEAD_CASES:
        sc = from_dict(CASES[case][1]())
        run_and_read(sc)  # warm: imports, first-call costs
        engine = float("inf")
        total = float("inf")
        for _ in range(repeat):
            engine = min(engine, _engine(sc.to_json())[0])
            t0 = time.perf_counter()
            run_and_read(sc)
            total = min(total, time.perf_counter() - t0)
        out.append(
            LayerFigures(
                "python-overhead",
                1,
                total,
                engine,
                f"{case}: wavelab.run (100 steps, every DataFrame read) vs engine",
            )
        )
    return out


def sweep_scenarios(n: int = 1000) -> dict[str, Any]:
    """``n`` short handover runs: 20 s of the DCNET scenario, the handover
    instant from 5 to 15 s, the algorithm alternating NewReno / Wave."""
    from wavelab.scenario import Scenario, builtin_scenario

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
    """Runs :func:`sweep_scenarios` through the parallel runner, and the same
    runs through the engine alone in this process to compare."""
    from wavelab.experiments.parallel import run_all

    scenarios = sweep_scenarios(n)
    jobs = jobs or os.cpu_count() or 1
    t0 = time.perf_counter()
    run_all(scenarios, jobs, progress=False)
    wall = time.perf_counter() - t0
    engine = sum(_engine(sc.to_json())[0] for sc in scenarios.values()) / jobs
    return LayerFigures(
        "sweep", n, wall, engine, f"{jobs} workers; engine time = serial engine time / workers"
    )


@dataclass
class CustomCcFigures:
    """What ``custom-cc`` measured: the fastest wall time of each version."""

    rust_s: float
    python_s: float
    calls: int
    simulated_s: float

    def lines(self) -> str:
        """The figures as text."""
        extra = self.python_s - self.rust_s
        return "\n".join(
            [
                f"custom-cc: TCP Vegas, one flow, {self.simulated_s:g} simulated s, "
                f"{self.calls:,} ACKs and congestion events (at most one call each)",
                f"  Rust   (vegas):    {self.rust_s:.3f} s wall",
                f"  Python (py-vegas): {self.python_s:.3f} s wall, "
                f"{self.python_s / self.rust_s:.1f}x; "
                f"{extra / self.calls * 1e6:.2f} us more per ACK",
            ]
        )


def custom_cc(repeat: int = 3) -> CustomCcFigures:
    """Runs the dumbbell (``newreno`` built-in, 60 s, no packet log) with the
    Rust Vegas and with the Python one, ``repeat`` times each, in this
    process; the fastest of each."""
    import wavelab.examples.vegas  # noqa: F401 - registers "py-vegas"
    from wavelab.runner import run
    from wavelab.scenario import builtin_scenario

    base = builtin_scenario("newreno").with_changes({"flows[0].log_packets": False})
    best: dict[str, float] = {}
    calls = 0
    for cc in ("vegas", "py-vegas"):
        sc = base.with_changes({"flows[0].cc": cc})
        for _ in range(repeat):
            res = run(sc)
            if not res.complete:
                raise RuntimeError(f"{cc}: {res.run.get('stopped')}")
            best[cc] = min(best.get(cc, float("inf")), res.run["wall_seconds"])
        f = res.flows.iloc[0]
        calls = int(f["acks_received"]) + int(f["fast_retransmits"]) + int(f["rto_expiries"])
    return CustomCcFigures(best["vegas"], best["py-vegas"], calls, float(res.run["simulated"]))


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
    return _table(head, body)


def main() -> None:
    """Child-process entry point: ``python -m wavelab.bench -`` reads
    ``{"name": ..., "scenario": ...}`` from standard input and prints the
    engine figures as JSON."""
    job = json.load(sys.stdin)
    print(json.dumps(run_here(job["name"], job["scenario"]).__dict__))


if __name__ == "__main__":
    main()
