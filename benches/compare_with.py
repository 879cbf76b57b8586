"""Prints the side-by-side figures of another simulator's run of the speed
benchmark's case (a) and wavelab's: used by compare_ns2.sh and compare_ns3.sh.

    python3 benches/compare_with.py NAME REPEATS "LINE" [TARGET]

LINE is the other simulator's fastest run, as its script prints it:
``<label> wall_s S data_sent N acks_received M ...``. TARGET, if given, is
the ratio of packets per wall-second the issue asks for.
"""

from __future__ import annotations

import sys

from wavelab.bench import CASES, run_here
from wavelab.runner import run
from wavelab.scenario import from_dict


def main(argv: list[str]) -> None:
    name, repeats, line = argv[0], int(argv[1]), argv[2].split()
    target = float(argv[3]) if len(argv) > 3 else None
    other = dict(zip(line[1::2], line[2::2], strict=True))
    other_wall = float(other["wall_s"])
    other_packets = int(other["data_sent"]) + int(other["acks_received"])

    case = CASES["dcnet-newreno"][1]()
    # The other script writes no trace and samples nothing: neither does the
    # "wavelab" row (its flow is sampled at 0 s and at the end only, no
    # queue). "wavelab-series" is the benchmark case as it stands, every flow
    # and queue sampled every 50 ms. Sampling changes no packet (checked
    # below).
    quiet = {**case, "output": {"interval": case["duration"], "queues": False}}
    walls = {
        label: min(run_here("dcnet-newreno", sc).wall_s for _ in range(repeats))
        for label, sc in (("wavelab", quiet), ("wavelab-series", case))
    }
    res = run(from_dict(case))
    flow = res.flows.iloc[0]
    quiet_flow = run(from_dict(quiet)).flows.iloc[0]
    sent = ("segments_sent", "acks_received")
    if any(int(flow[k]) != int(quiet_flow[k]) for k in sent):
        raise SystemExit("sampling changed the packets sent: a bug, please report it")
    packets = int(flow["segments_sent"]) + int(flow["acks_received"])
    links = res.links
    bottleneck = int(links.loc[links["link"] == "bottleneck", "sent_packets"].sum())

    head = ("", "wall s", "data sent", "ACKs rcvd", "packets", "packets/wall-s")
    rows = [
        head,
        (
            name,
            f"{other_wall:.4f}",
            other["data_sent"],
            other["acks_received"],
            f"{other_packets:,}",
            f"{other_packets / other_wall / 1e6:.3f} M",
        ),
    ]
    for label, wall in walls.items():
        rows.append(
            (
                label,
                f"{wall:.4f}",
                str(int(flow["segments_sent"])),
                str(int(flow["acks_received"])),
                f"{packets:,}",
                f"{packets / wall / 1e6:.3f} M",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))
    print(f"wavelab bottleneck transmissions (both directions): {bottleneck:,}")
    goal = f" (target >= {target:g}x)" if target is not None else ""
    for label, wall in walls.items():
        ratio = (packets / wall) / (other_packets / other_wall)
        print(f"packets per wall-second, {label} / {name}: {ratio:.1f}x{goal}")
        print(f"wall time, {name} / {label}: {other_wall / wall:.1f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
