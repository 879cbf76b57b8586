"""How close the simulator's ``profile = "linux"`` comes to real Linux TCP on
the DCNET 2016 handover grid: a benchmark, not a test (it needs root and
emulates 24 runs of 80 s per pass: 32 min one at a time, 16 min with
``--jobs 2``).

    sudo python benches/linux_agreement.py [--repeat 3] [--jobs 1] [--out DIR]
    sudo python benches/linux_agreement.py --quick      # HT = 2 s, L1 -> L2 only
    sudo python benches/linux_agreement.py --cc bbr --direction L1L2 --ht 0.5 2 --repeat 3

For the kernel's ``reno``, ``cubic`` and ``bbr``, both directions of the
handover (L1 = 2 Mbit/s / 30 ms <-> L2 = 8 Mbit/s / 240 ms, 100-packet
buffer) and outages of 0.5, 2 and 10 s, it runs the study's scenario
(``scenarios/dcnet2016-handover.toml``) with ``tcp = { profile = "linux",
mss = 960 }`` through ``wavelab emulate`` (the kernel's TCP on real packets,
``--repeat`` times) and through the simulator (``--seeds`` times, seeds 1 to
N: the seed moves only the phase of the sender's timer wheel, as a host's
jiffies counter does), plus a run on the new link alone per algorithm for
the steady rate ``R_ss``. Per cell it prints the median and range of the
emulated repeats beside those of the simulated seeds, and the ratio of the
medians:

* recovery: seconds after the end of the outage until the receiver's
  goodput over a 1 s window first reaches 0.9 ``R_ss``
  (:func:`wavelab.analysis.recovery_time`);
* steady: the receiver's goodput (Mbit/s) over the last third of the run;
* timeouts: the flow's retransmission timeouts (the kernel's
  ``tcpi_total_rto``); the slow start on the old link ends without one in
  every cell, so they are the handover's;
* flagged: emulated runs (the cell's and its baseline's) whose release
  lateness exceeded the emulator's bound, so that their timings are not the
  scenario's (``docs/emulation.md``).

The handover is at ``--at`` s (20) and each run lasts ``--after`` s past it
(60): Linux recovers within seconds in every cell, and shorter runs let the
grid be repeated. docs/validation.md keeps the table and explains each cell
that differs by more than 15 %.

The runs go where a reproduction's go (:mod:`wavelab.experiments.runs`):
the emulations into ``OUT/store-emulated``, ``--jobs`` at a time in this
process, each stored as it finishes; the simulations through the study
runner into ``OUT/store``. Both are resumable: killed and started again, the
benchmark runs only what its stores lack (a store's runs are keyed by the
code that ran them, so a rebuilt wavelab runs them again).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wavelab import analysis
from wavelab.emulator import unavailable
from wavelab.emulator.compare import simulation_of
from wavelab.experiments import dcnet2016 as study
from wavelab.experiments.runs import emulate_runs, run_runs
from wavelab.results.frames import Results
from wavelab.scenario.builtin import builtin_scenario
from wavelab.scenario.loading import Scenario
from wavelab.sweep.study import StudyRun

NAME = "linux-agreement"
"""The study's name in its stores."""
CCS = ("reno", "cubic", "bbr")
TCP = {"profile": "linux", "mss": 960}
"""Linux's defaults but for the segment size (the study's 1000-byte packets)."""
WITHIN = 0.15
"""A cell agrees when simulated / emulated is within this of 1."""


@dataclass(frozen=True)
class Cell:
    cc: str
    direction: str
    ht: float

    @property
    def old(self) -> str:
        return "L1" if self.direction == "L1L2" else "L2"

    @property
    def new(self) -> str:
        return "L2" if self.direction == "L1L2" else "L1"

    @property
    def key(self) -> str:
        return f"{self.cc}-{self.direction}-ht{self.ht:g}"

    @property
    def baseline(self) -> str:
        return f"baseline-{self.cc}-{self.new}"


def _scenario(cc: str, name: str, link: str, handovers: list[Any], duration: float) -> Scenario:
    return builtin_scenario(
        "dcnet2016-handover",
        emulation=True,
        changes={
            "name": f"linux-agreement-{name}",
            "duration": f"{duration:g}s",
            "links[1].rate": study.LINKS[link]["rate"],
            "links[1].delay": study.LINKS[link]["delay"],
            "links[1].handovers": handovers,
            "flows[0].cc": cc,
            "flows[0].tcp": dict(TCP),
        },
    )


def scenarios(cells: list[Cell], at: float, after: float) -> dict[str, Scenario]:
    out: dict[str, Scenario] = {}
    duration = at + after
    for c in cells:
        handover = {"at": f"{at:g}s", "outage": f"{c.ht:g}s", **study.LINKS[c.new]}
        out[c.key] = _scenario(c.cc, c.key, c.old, [handover], duration)
        out.setdefault(c.baseline, _scenario(c.cc, c.baseline, c.new, [], duration))
    return out


def _goodput_mbps(res: Results, start: float, end: float) -> float:
    s = analysis.cumulative(res, "goodput")
    t = s.index.to_numpy(dtype=float)
    v = s.to_numpy(dtype=float)
    a, b = np.interp([start, end], t, v)
    return float((b - a) * 8 / (end - start) / 1e6)


def measure(res: Results, base: Results, at: float, ht: float, end: float) -> dict[str, float]:
    t0 = at + ht
    rec = analysis.recovery(res, base, t0, link_dir=study.BOTTLENECK_DIR)["goodput"]
    flows = res.flows
    rtos = float(flows["rto_expiries"].iloc[0]) if "rto_expiries" in flows else np.nan
    return {
        "recovery_s": np.nan if rec.seconds is None else float(rec.seconds),
        "horizon_s": float(rec.horizon),
        "steady_mbps": _goodput_mbps(res, end - (end - t0) / 3, end),
        "timeouts": rtos,
        "retransmissions": float(flows["retransmissions"].iloc[0]),
    }


def _ratio(sim: float, emu: float) -> float:
    if np.isnan(sim) or np.isnan(emu) or emu == 0:
        return np.nan
    return sim / emu


def table(
    cells: list[Cell],
    emulated: Mapping[str, list[Results]],
    simulated: Mapping[str, list[Results]],
    at: float,
    after: float,
) -> pd.DataFrame:
    """One row per cell: each metric's median and range over the emulated
    repeats (``emu_*``) and over the simulated seeds (``sim_*``)."""
    rows = []
    end = at + after
    for c in cells:
        row: dict[str, Any] = {"cc": c.cc, "direction": c.direction, "ht_s": c.ht}
        for side, runs in (("emu", emulated), ("sim", simulated)):
            measured = [
                measure(run, base, at, c.ht, end)
                for run, base in zip(runs[c.key], runs[c.baseline], strict=True)
            ]
            for m in ("recovery_s", "steady_mbps", "timeouts", "retransmissions"):
                values = np.array([e[m] for e in measured], dtype=float)
                some = np.isfinite(values).any()
                row[f"{side}_{m}"] = float(np.nanmedian(values)) if some else np.nan
                row[f"{side}_{m}_min"] = float(np.nanmin(values)) if some else np.nan
                row[f"{side}_{m}_max"] = float(np.nanmax(values)) if some else np.nan
            row["horizon_s"] = measured[0]["horizon_s"]
        row["flagged"] = sum(
            bool(r.run.get("emulation", {}).get("flagged", False))
            for r in [*emulated[c.key], *emulated[c.baseline]]
        )
        row["load"] = "/".join(_load(r) for r in emulated[c.key])
        row["recovery_ratio"] = _ratio(row["sim_recovery_s"], row["emu_recovery_s"])
        row["steady_ratio"] = _ratio(row["sim_steady_mbps"], row["emu_steady_mbps"])
        rows.append(row)
    return pd.DataFrame(rows)


def _load(res: Results) -> str:
    """The machine's 1-minute load average as the emulation ended."""
    load = str(res.run.get("emulation", {}).get("loadavg", "")).split()
    return load[0] if load else "?"


def _span(r: pd.Series, m: str, fmt: str, side: str = "emu") -> str:
    lo, mid, hi = r[f"{side}_{m}_min"], r[f"{side}_{m}"], r[f"{side}_{m}_max"]
    if np.isnan(mid):
        return f">{r['horizon_s']:.0f}"
    if lo == hi:
        return format(mid, fmt)
    return f"{format(mid, fmt)} ({format(lo, fmt)}-{format(hi, fmt)})"


def printable(t: pd.DataFrame) -> pd.DataFrame:
    def sim(r: pd.Series, m: str, fmt: str) -> str:
        # tables written before the simulated side had seeds: one value
        if f"sim_{m}_min" not in r:
            x = r[f"sim_{m}"]
            return f">{r['horizon_s']:.0f}" if np.isnan(x) else format(x, fmt)
        return _span(r, m, fmt, "sim")

    def ratio(x: float) -> str:
        if np.isnan(x):
            return "-"
        flag = "" if abs(x - 1) <= WITHIN else " *"
        return f"{x:.2f}{flag}"

    out = []
    for _, r in t.iterrows():
        out.append(
            {
                "cell": f"{r['cc']} {r['direction']} HT={r['ht_s']:g}",
                "recovery s: Linux": _span(r, "recovery_s", ".1f"),
                "sim": sim(r, "recovery_s", ".1f"),
                "ratio": ratio(r["recovery_ratio"]),
                "steady Mbit/s: Linux": _span(r, "steady_mbps", ".2f"),
                "sim ": sim(r, "steady_mbps", ".2f"),
                "ratio ": ratio(r["steady_ratio"]),
                "RTOs: Linux": _span(r, "timeouts", ".0f"),
                "sim  ": sim(r, "timeouts", ".0f"),
                "flagged": int(r["flagged"]),
                "load": r["load"],
            }
        )
    return pd.DataFrame(out).set_index("cell")


def summary(t: pd.DataFrame) -> str:
    ratios = pd.concat([t["recovery_ratio"], t["steady_ratio"]]).dropna()
    within = int((abs(ratios - 1) <= WITHIN).sum())
    within_2x = int(((ratios >= 0.5) & (ratios <= 2.0)).sum())
    return (
        f"{within} of {len(ratios)} ratios within {WITHIN:.0%}, "
        f"{within_2x} within 2x (recovery and steady rate; '*': beyond {WITHIN:.0%})"
    )


def repeats(scs: Mapping[str, Scenario], repeat: int) -> dict[str, Scenario]:
    """Each emulated run: ``KEY#i``, the scenario named for its repeat (so
    that the store keeps every repeat)."""
    return {
        f"{k}#{i}": sc.with_changes({"name": f"{sc.name}-r{i}"})
        for k, sc in scs.items()
        for i in range(repeat)
    }


def seeded(scs: Mapping[str, Scenario], seeds: int) -> dict[str, Scenario]:
    """Each simulated run: ``KEY#i``, the scenario with seed ``i + 1``. A
    seed moves the timer wheel's phase of the linux profile's sender
    (``tcp.timer_hz``), as a host's jiffies counter differs from run to run
    on the kernel's side; nothing else in these scenarios is random."""
    return {
        f"{k}#{i}": sc.with_changes({"seed": i + 1, "name": f"{sc.name}-s{i + 1}"})
        for k, sc in scs.items()
        for i in range(seeds)
    }


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[Cell]]:
    """The command line and the cells it chooses."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=1, help="emulated runs per scenario")
    ap.add_argument("--jobs", type=int, default=1, help="emulations at once")
    ap.add_argument(
        "--seeds", type=int, default=5, help="simulated runs per scenario, seeds 1..N (5)"
    )
    ap.add_argument("--at", type=float, default=20.0, help="handover time (s)")
    ap.add_argument("--after", type=float, default=60.0, help="seconds run after it")
    ap.add_argument("--quick", action="store_true", help="HT = 2 s, L1 -> L2 only")
    ap.add_argument("--cc", nargs="*", default=list(CCS), help="kernel algorithms")
    ap.add_argument(
        "--direction", nargs="*", choices=study.DIRECTIONS, help="handover directions (all)"
    )
    ap.add_argument("--ht", nargs="*", type=float, help="outages in seconds (all)")
    ap.add_argument("--out", type=Path, default=Path("linux-agreement"))
    args = ap.parse_args(argv)
    hts = (2.0,) if args.quick else tuple(args.ht or study.HTS)
    directions = ("L1L2",) if args.quick else tuple(args.direction or study.DIRECTIONS)
    return args, [Cell(cc, d, ht) for cc in args.cc for d in directions for ht in hts]


def main(argv: list[str]) -> int:
    args, cells = parse(argv)
    scs = scenarios(cells, args.at, args.after)
    runs = repeats(scs, args.repeat)
    args.out.mkdir(parents=True, exist_ok=True)
    why = unavailable()
    if why:
        print(f"cannot emulate: {why}", file=sys.stderr)
        return 2
    done = emulate_runs(NAME, runs, args.out, args.jobs)
    emulated = {k: [done[f"{k}#{i}"] for i in range(args.repeat)] for k in scs}
    twins = {k: StudyRun(simulation_of(sc)) for k, sc in seeded(scs, args.seeds).items()}
    ran = run_runs(NAME, twins, args.out, None).results
    simulated = {k: [ran[f"{k}#{i}"] for i in range(args.seeds)] for k in scs}
    t = table(cells, emulated, simulated, args.at, args.after)
    t.to_csv(args.out / "agreement.csv", index=False)
    shown = printable(t)
    text = shown.to_markdown()
    (args.out / "agreement.md").write_text(text + "\n\n" + summary(t) + "\n", encoding="utf-8")
    print(text)
    print()
    print(summary(t))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
