"""Writes the synthetic traces under scenarios/traces/ (no downloads).

``cellular.down``: a Mahimahi delivery-opportunity trace (one line per
1500-byte opportunity, a millisecond timestamp each) of a cellular-like
downlink over 20 s: the rate takes a bounded random walk between 2.4 and
24 Mbit/s (0.2 to 2 packets per millisecond, a step every 100 ms), with a
300 ms fade to nothing about every 5 s.

``leo.delay``: a CSV delay trace (``time_s,delay_ms``, one point every
100 ms) of a LEO-satellite-like one-way delay over 120 s. A new satellite
(and ground-station path) is chosen every 15 s; between two changes the
delay follows the geometry of the chosen satellite, at 550 km, moving at
7.6 km/s past the user (user-satellite slant range) and past the ground
station (satellite-gateway slant range), plus a terrestrial leg of 4 to
20 ms drawn per change. At a change two points share the time: the delay
jumps (up or down by up to about 15 ms), which is where a first-in
first-out pipe holds packets back and a reordering one lets them pass.

``cellular.trains``: a CellReplay packet-train trace to replay with
``cellular.down`` as its heavy trace (a line every 100 ms over 20 s: the
time, a base one-way delay that walks between 20 and 60 ms, and the
delivery offsets of an 8-packet train at about a third of the heavy
trace's rate at that instant, never closer than 1 ms): what a light load
would have seen on the same link.

All are synthetic (no measurement, no download). Seeded: running the script
again writes the same files.

    python scripts/make_traces.py
"""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "python" / "wavelab" / "scenarios" / "traces"


def cellular(seconds: int = 20, seed: int = 24) -> list[int]:
    """The opportunities' timestamps (ms) of the cellular-like trace."""
    rng = random.Random(seed)
    rate = 1.0  # packets per millisecond
    fade_until = -1
    acc = 0.0
    stamps: list[int] = []
    for ms in range(1, seconds * 1000 + 1):
        if ms % 100 == 0:
            rate = min(2.0, max(0.2, rate + rng.uniform(-0.3, 0.3)))
        if ms > fade_until and rng.random() < 1 / 5000:
            fade_until = ms + 300
        if ms <= fade_until:
            continue
        acc += rate
        n = int(acc)
        acc -= n
        stamps += [ms] * n
    return stamps


C_KM_PER_MS = 299.792458
ALTITUDE_KM = 550.0
SPEED_KM_PER_S = 7.6


def slant_ms(along_km: float, across_km: float) -> float:
    """One-way propagation (ms) between a ground point and a satellite at
    ``ALTITUDE_KM`` whose ground track is ``along_km`` ahead of it and
    ``across_km`` beside it (a flat-earth approximation: the distances here
    are small beside the earth's radius)."""
    return math.sqrt(along_km**2 + across_km**2 + ALTITUDE_KM**2) / C_KM_PER_MS


def leo(seconds: int = 120, seed: int = 24, slot_s: int = 15) -> list[tuple[float, float]]:
    """The points (s, ms) of the LEO-like delay trace."""
    rng = random.Random(seed)
    points: list[tuple[float, float]] = []
    for slot in range(seconds // slot_s):
        # where the satellite is when chosen (ahead of the user, and of the
        # gateway), beside the user and the gateway, and the terrestrial leg
        user = (rng.uniform(-500, 300), rng.uniform(0, 600))
        gateway = (rng.uniform(-500, 300), rng.uniform(0, 600))
        ground = rng.uniform(4.0, 20.0)
        for k in range(slot_s * 10 + 1):
            t = slot * slot_s + k / 10
            moved = SPEED_KM_PER_S * k / 10
            d = (
                slant_ms(user[0] - moved, user[1])
                + slant_ms(gateway[0] - moved, gateway[1])
                + ground
            )
            points.append((round(t, 3), round(d, 3)))
    return points


def trains(stamps: list[int], seconds: int = 20, seed: int = 24) -> list[str]:
    """The lines of the packet-train trace that goes with ``stamps`` (the
    heavy opportunities)."""
    rng = random.Random(seed)
    delay = 35.0
    lines = []
    for k in range(seconds * 10 + 1):
        at = k * 100
        delay = min(60.0, max(20.0, delay + rng.uniform(-4, 4)))
        # the heavy opportunities in the 100 ms from here: their rate
        heavy = sum(1 for s in stamps if at <= s < at + 100) / 100.0
        gap = max(1.0, 3.0 / heavy) if heavy > 0 else 30.0
        offsets = [round(i * gap * rng.uniform(0.8, 1.2)) for i in range(8)]
        offsets = list(itertools.accumulate(offsets, max))
        lines.append(f"{at} {delay:.1f} " + " ".join(str(o) for o in offsets))
    return lines


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    stamps = cellular()
    path = OUT / "cellular.down"
    path.write_text("".join(f"{t}\n" for t in stamps), encoding="ascii")
    mbps = len(stamps) * 1500 * 8 / (stamps[-1] / 1000) / 1e6
    print(f"wrote {path}: {len(stamps)} opportunities over {stamps[-1]} ms ({mbps:.1f} Mbit/s)")
    path = OUT / "cellular.trains"
    train_lines = trains(stamps)
    path.write_text("\n".join(train_lines) + "\n", encoding="ascii")
    print(f"wrote {path}: {len(train_lines)} trains over {(len(train_lines) - 1) / 10:.0f} s")
    points = leo()
    path = OUT / "leo.delay"
    lines = ["time_s,delay"] + [f"{t},{d}ms" for t, d in points]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    delays = [d for _, d in points]
    print(
        f"wrote {path}: {len(points)} points over {points[-1][0]:.0f} s, one-way delay "
        f"{min(delays):.1f} to {max(delays):.1f} ms"
    )


if __name__ == "__main__":
    main()
