"""How the engine's wall time grows (``wavelab bench --scaling DIR``).

Three series, each point run in a fresh process (so its peak memory is its
own), the engine alone (no result conversion):

* ``flows``: 1 to 10,000 CUBIC flows sharing a 1 Gbit/s, 10 ms bottleneck
  (BDP-sized buffer) for 2 simulated seconds: the work per packet as the
  number of flows (timers, state, heap size) grows;
* ``rate``: 10 CUBIC flows on a bottleneck of 1 Mbit/s to 10 Gbit/s, 2
  simulated seconds: packets per second of simulated time grow with the rate;
* ``time``: the DCNET NewReno case (``dcnet-newreno``) for 45 to 720
  simulated seconds, the handover at 5/6 of the run (300 s of 360).

It writes ``scaling.csv`` (one row per point) and ``scaling.png``.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from wavelab.bench.engine import Figures, cubic_dumbbell, dcnet, run_in_child

FLOWS = [1, 10, 100, 1_000, 10_000]
RATES_MBPS = [1, 10, 100, 1_000, 10_000]
DURATIONS_S = [45, 90, 180, 360, 720]
QUICK = {"flows": [1, 10, 100], "rate": [1, 10, 100], "time": [45, 90]}
"""Smaller grids, for tests."""


@dataclass
class Point:
    """One measured point of a scaling series."""

    series: str
    x: float
    figures: Figures


def points(quick: bool = False) -> list[tuple[str, float, dict[str, Any]]]:
    """The scenarios of the three series: (series, x, scenario)."""
    flows = QUICK["flows"] if quick else FLOWS
    rates = QUICK["rate"] if quick else RATES_MBPS
    durations = QUICK["time"] if quick else DURATIONS_S
    out: list[tuple[str, float, dict[str, Any]]] = []
    for n in flows:
        out.append(("flows", n, cubic_dumbbell(n, 1_000, "2s")))
    for mbps in rates:
        out.append(("rate", mbps, cubic_dumbbell(10, mbps, "2s")))
    for s in durations:
        sc = dcnet("newreno")
        sc["duration"] = f"{s}s"
        # the handover at the same share of the run as in the 360 s case
        sc["links"][1]["handovers"][0]["at"] = f"{s * 300 / 360:g}s"
        out.append(("time", s, sc))
    return out


def measure(quick: bool = False, repeat: int = 3, progress: bool = True) -> list[Point]:
    """Runs every point of the three series ``repeat`` times (each in a
    fresh process) and keeps the fastest run of each."""
    todo = points(quick)
    done: list[Point] = []
    for k, (series, x, sc) in enumerate(todo, 1):
        if progress:
            print(f"[{k}/{len(todo)}] {series} = {x:g} ...", file=sys.stderr, flush=True)
        runs = [run_in_child(f"{series}-{x:g}", sc) for _ in range(repeat)]
        done.append(Point(series, x, min(runs, key=lambda f: f.wall_s)))
    return done


UNITS = {"flows": "flows", "rate": "Mbit/s", "time": "simulated s"}


FILES = frozenset({"scaling.csv", "scaling.png"})
"""The files :func:`write` writes (what marks its folder as wavelab's)."""


def write(points_: list[Point], out_dir: Path) -> tuple[Path, Path]:
    """Writes ``scaling.csv`` and ``scaling.png`` into ``out_dir``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    from matplotlib.ticker import FuncFormatter, NullFormatter

    from wavelab.plot.style import OKABE_ITO

    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for p in points_:
        f = asdict(p.figures)
        f.pop("case")
        rows.append(
            {
                "series": p.series,
                "x": p.x,
                "unit": UNITS[p.series],
                **f,
                "hops_per_s": p.figures.hops_per_s,
                "events_per_s": p.figures.events_per_s,
            }
        )
    df = pd.DataFrame(rows)
    csv = out_dir / "scaling.csv"
    df.to_csv(csv, index=False)

    fig, axes = plt.subplots(2, 3, figsize=(13, 7), sharex="col")
    titles = {
        "flows": "CUBIC flows on 1 Gbit/s, 2 s",
        "rate": "10 CUBIC flows, 2 s",
        "time": "DCNET NewReno",
    }
    for col, series in enumerate(["flows", "rate", "time"]):
        d = df[df["series"] == series]
        top, bottom = axes[0][col], axes[1][col]
        top.loglog(d["x"], d["wall_s"], "o-", color=OKABE_ITO["blue"], label="wall time")
        top.set_title(titles[series])
        top.set_ylabel("wall time (s)")
        top.grid(True, which="both", alpha=0.3)
        rss = top.twinx()
        rss.semilogx(
            d["x"], d["peak_rss_mb"], "s--", color=OKABE_ITO["vermillion"], label="peak RSS"
        )
        rss.set_ylabel("peak RSS (MB)", color=OKABE_ITO["vermillion"])
        bottom.semilogx(d["x"], d["hops_per_s"] / 1e6, "o-", color=OKABE_ITO["bluish green"])
        bottom.set_ylabel("million packet-hops / wall-s")
        bottom.set_xlabel(UNITS[series])
        bottom.set_ylim(bottom=0)
        bottom.grid(True, which="both", alpha=0.3)
        bottom.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        bottom.xaxis.set_minor_formatter(NullFormatter())
    fig.tight_layout()
    png = out_dir / "scaling.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return csv, png
