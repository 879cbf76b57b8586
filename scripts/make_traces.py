"""Writes the synthetic traces under scenarios/traces/ (no downloads).

``cellular.down``: a Mahimahi delivery-opportunity trace (one line per
1500-byte opportunity, a millisecond timestamp each) of a cellular-like
downlink over 20 s: the rate takes a bounded random walk between 2.4 and
24 Mbit/s (0.2 to 2 packets per millisecond, a step every 100 ms), with a
300 ms fade to nothing about every 5 s. Seeded: running the script again
writes the same file.

    python scripts/make_traces.py
"""

from __future__ import annotations

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


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    stamps = cellular()
    path = OUT / "cellular.down"
    path.write_text("".join(f"{t}\n" for t in stamps), encoding="ascii")
    mbps = len(stamps) * 1500 * 8 / (stamps[-1] / 1000) / 1e6
    print(f"wrote {path}: {len(stamps)} opportunities over {stamps[-1]} ms ({mbps:.1f} Mbit/s)")


if __name__ == "__main__":
    main()
