"""TCP over a Starlink-like LEO access link (``wavelab reproduce starlink``).

The algorithms the LEO literature compares, each alone on the built-in
``starlink`` scenario (the ``leo`` link model: a new satellite every 15 s,
a new base delay and capacity per interval, a delay spike and a 50 ms outage
at each switch, 1 % loss without congestion), downlink (server to dish) and
uplink (dish to server), over several seeds (each seed is another drawn
path). What the published measurements say, beside our figures:

* the minimum RTT changes every 15 s, a sawtooth of plateaus (Huston, "A
  transport protocol's view of Starlink", APNIC blog, May 2024; Mohan et
  al., "A Multifaceted Look at Starlink Performance", WWW 2024);
* BBR carries far more than CUBIC, and CUBIC more than Reno (Huston's
  measurements over Starlink), since the loss the link makes is not
  congestion and the loss-based algorithms take it for congestion.

* BBRv3's uplink goodput is 60-70 % of BBRv1's (the notes of LeoReplayer's
  measurements): BBRv3 (``bbr3``, draft-ietf-ccwg-bbr-06) takes loss above
  2 % in a probe, and each lossy round outside one, as a bound, where v1
  ignores loss.

TCP Wave runs without SACK, as its papers describe its loss recovery; the
others with SACK, as Linux runs them.

With ``traces`` (``--traces DIR``), the same algorithms run over measured
paths instead of drawn ones: each LeoReplayer pair in the folder
(``bw_N.txt``, the capacity as Mahimahi delivery opportunities, with
``delay_N.txt``, the one-way delay every 10 ms) replaces the ``leo`` model on
the direction the data takes (the other direction carries the ACKs at
100 Mbit/s behind the same delay); no loss is added to what the traces say.
The summary is then over the traces, not over seeds.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from wavelab import _native
from wavelab._util.table_text import table_text
from wavelab.analysis.capacity import direction_capacity
from wavelab.errors import WavelabError
from wavelab.experiments.figures import save
from wavelab.experiments.runs import run_runs
from wavelab.experiments.tables import Markdown, Tables
from wavelab.plot.style import algorithm_style
from wavelab.results.frames import Results
from wavelab.scenario.builtin import builtin_scenario
from wavelab.scenario.loading import Scenario, from_dict
from wavelab.sweep.study import StudyRun

ALGORITHMS = ("bbr", "bbr3", "cubic", "newreno", "westwood", "wave")
DIRECTIONS = ("downlink", "uplink")
SAT = 1
"""The LEO link's index in the scenario (``sat``: gateway -> dish)."""


@dataclass(frozen=True)
class Form:
    """How long each run is, and its seeds."""

    duration: float
    seeds: tuple[int, ...]


FULL = Form(90.0, (1, 2, 3, 4, 5))
QUICK = Form(30.0, (1, 2))

T_975 = {
    **{1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306},
    **{9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042, 60: 2.000, 120: 1.980},
}
"""Student's t, two-sided 95 %, by degrees of freedom (the seeds or traces
less one); between two entries, the one of fewer degrees (a wider interval)."""


def t975(dof: int) -> float:
    """Student's t, two-sided 95 %, for ``dof`` degrees of freedom (from
    :data:`T_975`, rounded down to the nearest entry)."""
    return T_975[max(k for k in T_975 if k <= dof)]


def scenarios(form: Form) -> dict[str, Scenario]:
    """The runs, named ``<algorithm>-<direction>-seed<k>``."""
    base = builtin_scenario("starlink").with_changes({"duration": f"{form.duration:g}s"})
    out: dict[str, Scenario] = {}
    for algo in ALGORITHMS:
        for direction in DIRECTIONS:
            for seed in form.seeds:
                changes: dict[str, object] = {
                    "seed": seed,
                    "flows[0].cc": algo,
                    "flows[0].tcp": {"sack": algo != "wave"},
                }
                if direction == "uplink":
                    changes |= {"flows[0].from": "dish", "flows[0].to": "server"}
                out[f"{algo}-{direction}-seed{seed}"] = base.with_changes(changes)
    return out


TRACE_RE = re.compile(r"bw_(\d+)\.txt")


def trace_pairs(folder: Path) -> dict[int, tuple[Path, Path]]:
    """The LeoReplayer pairs in ``folder`` by number: ``bw_N.txt`` with its
    ``delay_N.txt``; an error naming what is missing."""
    if not folder.is_dir():
        raise WavelabError(f"--traces {folder}: not a folder")
    pairs: dict[int, tuple[Path, Path]] = {}
    for bw in sorted(folder.iterdir()):
        m = TRACE_RE.fullmatch(bw.name)
        if m is None:
            continue
        delay = folder / f"delay_{m.group(1)}.txt"
        if not delay.is_file():
            raise WavelabError(f"--traces {folder}: {bw.name} has no {delay.name} beside it")
        pairs[int(m.group(1))] = (bw.absolute(), delay.absolute())
    if not pairs:
        raise WavelabError(
            f"--traces {folder}: no LeoReplayer pair in it (bw_N.txt with delay_N.txt)"
        )
    return dict(sorted(pairs.items()))


def trace_scenarios(form: Form, pairs: Mapping[int, tuple[Path, Path]]) -> dict[str, Scenario]:
    """The runs over measured paths, named ``<algorithm>-<direction>-trace<N>``
    (the quick form takes the first two pairs)."""
    base = builtin_scenario("starlink").with_changes({"duration": f"{form.duration:g}s"})
    data = copy.deepcopy(dict(base.data))
    sat = data["links"][SAT]
    sat.pop("leo")
    # (the delay and rate the traces do not give: the ACKs' rate; the
    # delay before a delay trace's first point, which is at 0)
    sat |= {"rate": "100Mbit/s", "delay": "20ms"}
    out: dict[str, Scenario] = {}
    chosen = list(pairs.items())[: 2 if form is QUICK else None]
    for algo in ALGORITHMS:
        for direction in DIRECTIONS:
            for n, (bw, delay) in chosen:
                both = {"delay_trace": str(delay), "delay_trace_format": "leoreplayer"}
                traced = {"trace": str(bw)} | both
                data["links"][SAT]["forward"] = traced if direction == "downlink" else both
                data["links"][SAT]["reverse"] = both if direction == "downlink" else traced
                sc = from_dict(data, source=base.source)
                changes: dict[str, object] = {
                    "flows[0].cc": algo,
                    "flows[0].tcp": {"sack": algo != "wave"},
                }
                if direction == "uplink":
                    changes |= {"flows[0].from": "dish", "flows[0].to": "server"}
                out[f"{algo}-{direction}-trace{n}"] = sc.with_changes(changes)
    return out


def _direction(name: str) -> int:
    """The LEO link's direction a run's data takes (2: forward, 3: reverse)."""
    return 2 * SAT + (0 if "-downlink-" in name else 1)


def run_row(name: str, res: Results, duration: float) -> dict[str, object]:
    """One run's figures: goodput, the share of the drawn capacity it used,
    its timeouts and retransmissions."""
    algo, direction, sample = name.rsplit("-", 2)
    m = re.fullmatch(r"(seed|trace)(\d+)", sample)
    assert m is not None, name
    kind, number = m.groups()
    flow = res.flows.iloc[0]
    delivered = float(flow["bytes_delivered"]) * 8
    capacity = direction_capacity(res.scenario.normalized, _direction(name), duration)
    return {
        "algorithm": algo,
        "direction": direction,
        # seed<k> (a drawn path) or trace<N> (a measured one)
        kind: int(number),
        "goodput_mbps": delivered / duration / 1e6,
        "utilisation": delivered / capacity.bits(),
        "rto_expiries": int(flow["rto_expiries"]),
        "retransmission_rate": float(flow["retransmissions"]) / max(1, int(flow["segments_sent"])),
    }


def summarise(rows: pd.DataFrame, over: str = "seeds") -> pd.DataFrame:
    """Per algorithm and direction: the mean over the seeds (or the traces,
    ``over``) and its 95 % confidence interval (Student's t), of goodput and
    utilisation."""
    out = []
    for (algo, direction), g in rows.groupby(["algorithm", "direction"], sort=False):
        n = len(g)
        entry: dict[str, object] = {"algorithm": algo, "direction": direction, over: n}
        for col in ("goodput_mbps", "utilisation"):
            mean = float(g[col].mean())
            half = t975(n - 1) * float(g[col].std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
            entry[col] = mean
            entry[f"{col}_ci95"] = half
        entry["rto_expiries"] = float(g["rto_expiries"].mean())
        out.append(entry)
    return pd.DataFrame(out)


def checks(summary: pd.DataFrame) -> pd.DataFrame:
    """The published statements beside what the runs give."""
    rows = []
    for direction in DIRECTIONS:
        part = summary[summary["direction"] == direction].set_index("algorithm")
        g = part["goodput_mbps"]
        order = " > ".join(f"{a} {g[a]:.1f}" for a in g.sort_values(ascending=False).index)
        holds = g["bbr"] > g["cubic"] > g["newreno"]
        rows.append(
            (
                f"{direction}: goodput order (Mbit/s)",
                "BBR above CUBIC above Reno (Huston 2024)",
                f"{order}: {'holds' if holds else 'does not hold'}",
            )
        )
    up = summary[summary["direction"] == "uplink"].set_index("algorithm")["goodput_mbps"]
    ratio = up["bbr3"] / up["bbr"]
    rows.append(
        (
            "uplink: BBRv3 / BBRv1 goodput",
            "60-70 % (LeoReplayer's notes)",
            f"{ratio:.0%}: {'within' if 0.6 <= ratio <= 0.7 else 'outside'}",
        )
    )
    return pd.DataFrame(rows, columns=["check", "published", "wavelab"])


def min_rtt_per_second(res: Results) -> pd.Series:
    """The smallest RTT sample in each second of a run (s)."""
    s = res.series[res.series["rtt"] > 0]
    return s.groupby(np.floor(s["time"].to_numpy()))["rtt"].min()


def path_rtt(res: Results) -> tuple[np.ndarray, np.ndarray]:
    """The drawn path's RTT with no queue (two core delays and two base
    delays), as a step per interval: times, RTTs (s)."""
    normalized = res.scenario.normalized
    plan = _native.leo_plan(json.dumps(dict(normalized)), SAT)
    assert plan is not None
    delay = _native.quantity(str(normalized["links"][0]["delay"]))
    assert delay is not None
    core = 2 * delay[0]
    times = np.array([row[0] for row in plan[0]])
    return times, np.array([core + 2 * row[1] for row in plan[0]])


def around_switches(
    res: Results, switches: np.ndarray, before: float = 1.0, after: float = 3.0, step: float = 0.05
) -> pd.Series:
    """The RTT around the reconfigurations at ``switches`` (s): every RTT
    sample from ``before`` seconds before each switch to ``after`` seconds
    after it, by its time from the switch in bins of ``step``; the median
    over the switches in each bin (s, indexed by the bin's start)."""
    s = res.series[res.series["rtt"] > 0]
    t = s["time"].to_numpy()
    rtt = s["rtt"].to_numpy()
    parts = []
    for w in switches:
        inside = (t >= w - before) & (t < w + after)
        parts.append(pd.DataFrame({"since": t[inside] - w, "rtt": rtt[inside]}))
    both = pd.concat(parts, ignore_index=True)
    bins = np.floor(both["since"].to_numpy() / step) * step
    return both.groupby(np.round(bins, 6))["rtt"].median()


def reconfiguration_figure(runs: Mapping[str, Results], seeds: tuple[int, ...], out: Path) -> None:
    """The RTT around a reconfiguration, downlink, pooled over the seeds'
    switches: the median in 50 ms bins, for BBR, BBRv3 and CUBIC."""
    fig, ax = plt.subplots(figsize=(10, 4))
    for algo in ("bbr", "bbr3", "cubic"):
        parts = []
        for seed in seeds:
            res = runs[f"{algo}-downlink-seed{seed}"]
            times, _ = path_rtt(res)
            parts.append(around_switches(res, times[1:]))
        m = pd.concat(parts).groupby(level=0).median()
        style = algorithm_style(algo)  # BBR v1 and v3 share a colour: the marker tells
        ax.plot(m.index, m * 1e3, lw=1, label=algo, color=style.color, marker=style.marker, ms=3)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set(
        xlabel="time from the reconfiguration (s)",
        ylabel="RTT, median over the switches (ms)",
        title=f"RTT around a satellite reconfiguration (downlink, {len(seeds)} seeds)",
    )
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    save(fig, out / "reconfiguration.png")


def figures(
    runs: Mapping[str, Results], summary: pd.DataFrame, first: str, out: Path, over: str = "seeds"
) -> None:
    """The minimum-RTT sawtooth of the ``first`` sample's downlink runs
    (``seed1``, ``trace3``), and the goodput of each algorithm with its
    confidence interval. The sawtooth is drawn for the algorithms whose RTT
    samples follow Karn's rule (TCP Wave's include, by design, samples
    inflated by loss repair: seconds long over this lossy path); with the
    drawn path's RTT where the path was drawn by the LEO model."""
    fig, ax = plt.subplots(figsize=(10, 4))
    for algo in ("bbr", "bbr3", "cubic", "newreno"):
        m = min_rtt_per_second(runs[f"{algo}-downlink-{first}"])
        style = algorithm_style(algo)
        ax.plot(m.index, m * 1e3, lw=1, label=algo, color=style.color, marker=style.marker, ms=3)
    if first.startswith("seed"):
        times, rtt = path_rtt(runs[f"cubic-downlink-{first}"])
        ax.step(times, rtt * 1e3, where="post", color="black", ls="--", lw=1, label="path")
        for t in times[1:]:
            ax.axvline(t, color="grey", lw=0.5, alpha=0.5)
    ax.set(
        xlabel="time (s)",
        ylabel="smallest RTT in each second (ms)",
        title=f"Minimum RTT over the LEO path (downlink, {first})",
    )
    ax.legend(ncol=3, fontsize=8)
    ax.grid(alpha=0.3)
    save(fig, out / "min_rtt.png")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, direction in zip(axes, DIRECTIONS, strict=True):
        part = summary[summary["direction"] == direction]
        colors = [algorithm_style(a).color for a in part["algorithm"]]
        ax.bar(
            part["algorithm"],
            part["goodput_mbps"],
            yerr=part["goodput_mbps_ci95"].fillna(0),
            color=colors,
            capsize=4,
        )
        n = int(part[over].max())
        ax.set(title=f"{direction} ({n} {over}, 95 % CI)", ylabel="goodput (Mbit/s)")
        ax.grid(alpha=0.3, axis="y")
    save(fig, out / "goodput.png")


def reproduce(
    out: Path,
    quick: bool,
    jobs: int | None,
    cluster: str | None = None,
    cluster_timeout: float | None = None,
    traces: Path | None = None,
) -> Path:
    """Runs the study (into ``out/store``, resumable), prints and writes the
    tables, draws the figures; over the LeoReplayer pairs in ``traces``
    instead of the LEO model if given."""
    form = QUICK if quick else FULL
    pairs = trace_pairs(traces) if traces is not None else None
    out.mkdir(parents=True, exist_ok=True)
    chosen = scenarios(form) if pairs is None else trace_scenarios(form, pairs)
    study = {k: StudyRun(sc) for k, sc in chosen.items()}
    runs = run_runs("starlink", study, out, jobs, cluster, cluster_timeout).results
    rows = pd.DataFrame([run_row(k, runs[k], form.duration) for k in study])
    over = "seeds" if pairs is None else "traces"
    summary = summarise(rows, over)
    check = checks(summary)
    tables = Tables(out)
    tables.csv("runs.csv", rows)
    tables.csv("summary.csv", summary)
    tables.csv("comparison.csv", check)
    tables.markdown("summary.md", Markdown().table(summary.round(3)).table(check))
    first = f"seed{form.seeds[0]}" if pairs is None else f"trace{next(iter(pairs))}"
    figures(runs, summary, first, out, over)
    if pairs is None:
        reconfiguration_figure(runs, form.seeds, out)
    with pd.option_context("display.width", 200, "display.max_colwidth", 90):
        print(table_text(summary.round(3)))
        print()
        print(table_text(check))
    return out
