"""Runs other simulators and wavelab on the speed benchmark's case (a) in
interleaved rounds and prints the per-round ratios: used by compare_ns2.sh
and compare_ns3.sh.

    python3 benches/compare_with.py [--rounds N] [--target X] \\
        --peer NAME BUILD COMMAND [--peer NAME BUILD COMMAND ...]

Each round runs every peer's COMMAND once, then wavelab twice, every run a
fresh process: A B A B ..., so that each round's runs see the same moment of
the machine's load. A peer's COMMAND (split like a shell word list, run in an
empty temporary directory) prints one line of figures,
``<label> wall_s S sim_s T data_sent N acks_received M ...``, whose wall time
is that of its event loop (start-up excluded). wavelab runs in a child that
imports only the native module, and its wall time is that of the engine
(the scenario built and run, results not converted): once with tracing off
(``wavelab``: the flow sampled at the start and the end, no queue, as the
peers run) and once with the benchmark case's 50 ms flow and queue series
(``wavelab-series``).

Per round, wavelab's packets per wall-second are divided by each peer's, and
its simulated seconds per wall-second likewise; the median and the range of
those ratios over the rounds are printed, with every round's ratio, the
machine's load average at the start and the end, and what each peer is (its
BUILD text). The fastest run of each side is never used: on a shared machine
the two fastest runs come from different moments of load.

Both sides count packets the same way, from the sender's counters: data
segments sent plus ACKs received (each crossed the bottleneck once, bar the
few the outage destroyed); wavelab also prints its exact bottleneck count.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from wavelab.bench import CASES, run_in_child
from wavelab.runner import run
from wavelab.scenario import from_dict

WAVELAB_ROWS = ("wavelab", "wavelab-series")


@dataclass
class Run:
    """One run of one simulator: its event loop's wall time, the simulated
    time and the packets counted at the sender."""

    wall_s: float
    sim_s: float
    packets: int
    data_sent: int
    acks_received: int

    @property
    def packets_per_s(self) -> float:
        """Packets per wall-second."""
        return self.packets / self.wall_s

    @property
    def sim_per_s(self) -> float:
        """Simulated seconds per wall-second."""
        return self.sim_s / self.wall_s


def parse_peer_line(out: str) -> Run:
    """The figures of a peer's output: its last line that has ``wall_s``."""
    lines = [ln.split() for ln in out.splitlines() if "wall_s" in ln.split()]
    if not lines:
        raise SystemExit(f"the peer printed no line of figures:\n{out}")
    words = lines[-1]
    fig = dict(zip(words[1::2], words[2::2], strict=False))
    try:
        data, acks = int(fig["data_sent"]), int(fig["acks_received"])
        return Run(float(fig["wall_s"]), float(fig["sim_s"]), data + acks, data, acks)
    except (KeyError, ValueError) as e:
        raise SystemExit(f"the peer's line lacks {e}: {' '.join(words)}") from e


def run_peer(command: str) -> Run:
    """Runs a peer once, in a fresh process and an empty directory."""
    with tempfile.TemporaryDirectory() as tmp:
        res = subprocess.run(shlex.split(command), cwd=tmp, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{command} failed ({res.returncode}):\n{res.stderr[-2000:]}")
    return parse_peer_line(res.stdout)


def load_average() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def ratio_line(what: str, ratios: list[float], goal: str) -> str:
    """``what: median Mx, range A-Bx over N rounds``."""
    med = statistics.median(ratios)
    return (
        f"  {what}: median {med:.1f}x, range {min(ratios):.1f}-{max(ratios):.1f}x"
        f" over {len(ratios)} rounds{goal}"
    )


def table(rows: Sequence[tuple[str, ...]]) -> str:
    """Right-aligned columns."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    ap.add_argument("--target", type=float, help="the packets-per-wall-second ratio aimed at")
    ap.add_argument(
        "--peer",
        nargs=3,
        action="append",
        required=True,
        metavar=("NAME", "BUILD", "COMMAND"),
        help="a simulator to compare with: its name, what build it is, the command that runs it",
    )
    args = ap.parse_args(argv)
    if args.rounds < 1:
        raise SystemExit(f"--rounds {args.rounds}: at least 1")

    case = CASES["dcnet-newreno"][1]()
    quiet = {**case, "output": {"interval": case["duration"], "queues": False}}
    scenarios = {"wavelab": quiet, "wavelab-series": case}
    # Packets are the same in every run (the engine is deterministic), and
    # sampling changes none: checked here once.
    res = run(from_dict(case))
    flow = res.flows.iloc[0]
    quiet_flow = run(from_dict(quiet)).flows.iloc[0]
    sent = ("segments_sent", "acks_received")
    if any(int(flow[k]) != int(quiet_flow[k]) for k in sent):
        raise SystemExit("sampling changed the packets sent: a bug, please report it")
    data, acks = int(flow["segments_sent"]), int(flow["acks_received"])
    links = res.links
    bottleneck = int(links.loc[links["link"] == "bottleneck", "sent_packets"].sum())

    peers = [(name, build, command) for name, build, command in args.peer]
    names = [p[0] for p in peers] + list(WAVELAB_ROWS)
    runs: dict[str, list[Run]] = {n: [] for n in names}
    load_start = load_average()
    loads = []
    print(f"{args.rounds} rounds, in turn: {', '.join(names)}", file=sys.stderr)
    for k in range(args.rounds):
        for name, _, command in peers:
            runs[name].append(run_peer(command))
        for label, sc in scenarios.items():
            fig = run_in_child(label, sc)
            runs[label].append(Run(fig.wall_s, fig.simulated_s, data + acks, data, acks))
        loads.append(os.getloadavg()[0])
        print(f"  round {k + 1}/{args.rounds} done", file=sys.stderr)
    load_end = load_average()

    print(
        f"load average (1, 5, 15 min): {load_start} at the start, {load_end} at the end"
        f" (1 min: {min(loads):.2f}-{max(loads):.2f} over the rounds)"
    )
    for name, build, _ in peers:
        print(f"{name}: {build}")
    print(
        f"{args.rounds} interleaved rounds ({', '.join(names)}), each run a fresh process;"
        " wall time of the event loop"
    )
    print()
    rows = [("", "wall s median", "wall s range", "data sent", "ACKs rcvd", "packets/wall-s")]
    for name in names:
        rs = runs[name]
        walls = [r.wall_s for r in rs]
        rows.append(
            (
                name,
                f"{statistics.median(walls):.4f}",
                f"{min(walls):.4f}-{max(walls):.4f}",
                str(rs[0].data_sent),
                str(rs[0].acks_received),
                f"{statistics.median(r.packets_per_s for r in rs) / 1e6:.3f} M",
            )
        )
    print(table(rows))
    print(f"wavelab bottleneck transmissions (both directions): {bottleneck:,}")
    goal = f" (target >= {args.target:g}x)" if args.target is not None else ""
    for name, _, _ in peers:
        for label in WAVELAB_ROWS:
            pairs = list(zip(runs[label], runs[name], strict=True))
            per_packet = [a.packets_per_s / b.packets_per_s for a, b in pairs]
            per_sim_s = [a.sim_per_s / b.sim_per_s for a, b in pairs]
            print(f"{label} / {name}, per round:")
            print(ratio_line("packets per wall-second", per_packet, goal))
            print(ratio_line("simulated seconds per wall-second", per_sim_s, ""))
            print("  rounds (packets): " + " ".join(f"{x:.1f}" for x in per_packet))


if __name__ == "__main__":
    main(sys.argv[1:])
