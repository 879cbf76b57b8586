"""Speed benchmarks that print figures (``wavelab bench``).

Each case runs in a fresh Python process that imports only the native module,
so its peak resident memory is the simulator's plus the interpreter's (the
interpreter's own footprint is reported separately as ``base RSS``).

Cases:

* ``dcnet-l2``: one NewReno flow through the DCNET 2016 L2 bottleneck
  (8 Mbit/s, 240 ms, 100-packet buffer, 1000-byte packets) for 330 simulated s;
* ``many-flows``: 100 NewReno flows sharing a 1 Gbit/s, 10 ms bottleneck with a
  BDP-sized buffer for 10 simulated s.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

ACCESS = {"rate": "10Gbit/s", "delay": "1ms", "queue": "100000pkt"}


def _dcnet_l2() -> dict[str, Any]:
    # The shipped scenario, without its time series' extras (none are on).
    import tomllib

    from wavelab.scenario import builtin_toml

    data: dict[str, Any] = tomllib.loads(builtin_toml("dcnet-l2"))
    return data


def _many_flows() -> dict[str, Any]:
    # RTT = 2 x (1 + 10 + 1) ms = 24 ms; BDP = 1 Gbit/s x 24 ms = 3 MB = 2000 packets.
    return {
        "name": "bench-many-flows",
        "duration": "10s",
        "output": {"interval": "100ms"},
        "links": [
            {"between": ["senders", "r1"], **ACCESS},
            {"between": ["r1", "r2"], "rate": "1Gbit/s", "delay": "10ms", "queue": "2000pkt"},
            {"between": ["r2", "receivers"], **ACCESS},
        ],
        "flows": [{"from": "senders", "to": "receivers", "cc": "newreno", "count": 100}],
    }


CASES = {
    "dcnet-l2": ("1 NewReno flow, 8 Mbit/s / 240 ms / 100 pkt, 330 s", _dcnet_l2),
    "many-flows": ("100 NewReno flows, 1 Gbit/s / 10 ms / BDP buffer, 10 s", _many_flows),
}


@dataclass
class Figures:
    """What one benchmark run measured."""

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


def run_case_here(case: str) -> Figures:
    """Runs one case in this process (the engine alone, no result conversion)."""
    from wavelab import _native

    base = _rss_mb()
    sc = CASES[case][1]()
    t0 = time.perf_counter()
    sim = _native.Simulation(json.dumps(sc))
    sim.run_until(sim.end)
    wall = time.perf_counter() - t0
    st = sim.run_stats()
    return Figures(
        case,
        float(st["simulated"]),
        wall,
        int(st["events"]),
        int(st["packet_hops"]),
        base,
        _rss_mb(),
    )


def run_case(case: str) -> Figures:
    """Runs one case in a fresh process, for a clean peak-memory figure."""
    out = subprocess.run(
        [sys.executable, "-m", "wavelab.bench", case],
        check=True,
        capture_output=True,
        text=True,
    )
    return Figures(**json.loads(out.stdout))


def format_table(rows: list[Figures]) -> str:
    """The figures as an aligned text table."""
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
            f"{r.wall_s:.3f}",
            f"{r.events:,}",
            f"{r.packet_hops:,}",
            f"{r.hops_per_s / 1e6:.2f} M",
            f"{r.events_per_s / 1e6:.2f} M",
            f"{r.peak_rss_mb:.1f}",
            f"{r.base_rss_mb:.1f}",
        ]
        for r in rows
    ]
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    lines = [
        "  ".join(h.rjust(w) for h, w in zip(row, widths, strict=True)) for row in [head, *body]
    ]
    return "\n".join(lines)


def main() -> None:
    """Child-process entry point: ``python -m wavelab.bench CASE`` prints JSON."""
    f = run_case_here(sys.argv[1])
    print(json.dumps(f.__dict__))


if __name__ == "__main__":
    main()
