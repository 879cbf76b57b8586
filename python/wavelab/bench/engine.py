"""Engine benchmarks (``wavelab bench``): each case runs in a fresh Python
process that imports only the native module, so its peak resident memory is
the simulator's plus the interpreter's (the interpreter's own footprint is
reported separately as ``base RSS``):

* ``dcnet-newreno``, ``dcnet-wave``: one flow through the DCNET 2016
  bottleneck L2 (8 Mbit/s, 240 ms, 100 packets, 1000-byte packets) handing
  over to L1 (2 Mbit/s, 30 ms) after a 2 s outage at 300 s; 360 simulated s;
* ``cubic-<flows>-<rate>``: 100 or 1,000 CUBIC flows sharing a 1 or
  10 Gbit/s, 10 ms bottleneck with a BDP-sized buffer; 10 simulated s;
* ``short-10k``: a workload of about 10,000 short CUBIC transfers of 10 kB
  (Poisson, 500 a second for 20 s) over a 1 Gbit/s, 10 ms bottleneck:
  the cost of a flow's start, its few packets and its end, printed per
  transfer below the table.

The child is ``python -m wavelab.bench -`` (:func:`child_main`).
"""

from __future__ import annotations

import json
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

    from wavelab.scenario.builtin import builtin_toml

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


def short_transfers(rate: float, size: str, duration: int = 20) -> dict[str, Any]:
    """A workload of short CUBIC transfers of ``size`` arriving as a Poisson
    process of ``rate`` a second for ``duration`` s over the dumbbell of
    :func:`cubic_dumbbell` at 1 Gbit/s (1 s more for the last to end)."""
    data = cubic_dumbbell(0, 1_000, f"{duration + 1}s")
    data["name"] = "bench-short-transfers"
    data["flows"] = []
    data["workloads"] = [
        {
            "name": "short",
            "from": "senders",
            "to": "receivers",
            "cc": "cubic",
            "stop": f"{duration}s",
            "arrivals": {"process": "poisson", "rate": rate},
            "sizes": {"distribution": "fixed", "size": size},
        }
    ]
    return data


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
    "short-10k": (
        "~10,000 CUBIC transfers of 10 kB (Poisson 500/s for 20 s), 1 Gbit/s / 10 ms",
        lambda: short_transfers(500, "10kB"),
    ),
}
"""Engine cases: name -> (description, scenario)."""


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
    transfers: int = 0
    """The workloads' transfers the run made (0: none)."""

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


def run_engine(scenario_json: str) -> tuple[float, Any]:
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
    wall, sim = run_engine(json.dumps(scenario))
    st = sim.run_stats()
    peak = _rss_mb()
    transfers = sim.results()["transfers"]
    return Figures(
        name,
        float(st["simulated"]),
        wall,
        int(st["events"]),
        int(st["packet_hops"]),
        base,
        peak,
        # the transfers table's first column (its workloads' names)
        len(transfers[0][2]) if transfers else 0,
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


def text_table(head: list[str], body: list[list[str]]) -> str:
    """Rows of text as an aligned table, right-aligned, the header first."""
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
    # the cost of a short transfer: its start, its packets and its end
    per_transfer = [
        f"{r.case}: {r.transfers:,} transfers, {r.wall_s / r.transfers * 1e6:.1f} us and "
        f"{r.events / r.transfers:.0f} events a transfer"
        for r in rows
        if r.transfers
    ]
    return "\n".join([text_table(head, body), *per_transfer])


def child_main() -> None:
    """Child-process entry point: ``python -m wavelab.bench -`` reads
    ``{"name": ..., "scenario": ...}`` from standard input and prints the
    engine figures as JSON."""
    job = json.load(sys.stdin)
    print(json.dumps(run_here(job["name"], job["scenario"]).__dict__))
