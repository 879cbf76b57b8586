"""The TCP Wave project page's experiments (``wavelab reproduce wave-page``).

1. One Wave connection through a 6 Mbit/s bottleneck (the page's Figures 1-3:
   burst transmission, TxTime, RTT).
2. Fairness on a 10 Mbit/s bottleneck: connection 1 from 0 to 240 s,
   connection 2 from 100 to 200 s, with two Wave, two BBR and two CUBIC
   connections (Figures 4-8: sequence numbers, per-connection rates, RTT).

The page reports no table, only what its figures show; the checks below put
each of its statements beside our measurement. Path choices the page does not
give (25 ms one-way delay, a 100-packet buffer) are in the scenario files
(``wavelab scenarios wave-page-single``). Wave runs without SACK, as its
papers describe its loss recovery; BBR and CUBIC run with SACK, as Linux does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from wavelab._util.table_text import table_text
from wavelab.experiments.figures import save
from wavelab.experiments.runs import run_runs
from wavelab.experiments.tables import Markdown, Tables
from wavelab.plot.style import algorithm_style
from wavelab.results.frames import Results
from wavelab.scenario.builtin import builtin_scenario
from wavelab.scenario.loading import Scenario
from wavelab.sweep.study import StudyRun

ALGORITHMS = ("wave", "bbr", "cubic")


@dataclass(frozen=True)
class Phases:
    """When connection 2 runs, and the end of the run (seconds)."""

    start: float
    stop: float
    end: float
    single_end: float


FULL = Phases(100.0, 200.0, 240.0, 60.0)
QUICK = Phases(20.0, 40.0, 60.0, 20.0)


def scenarios(quick: bool) -> dict[str, Scenario]:
    """The runs: ``single`` and ``fairness-<algorithm>``."""
    ph = QUICK if quick else FULL
    single = builtin_scenario("wave-page-single").with_changes({"duration": f"{ph.single_end:g}s"})
    fair = builtin_scenario("wave-page-fairness").with_changes(
        {
            "duration": f"{ph.end:g}s",
            "flows[1].start": f"{ph.start:g}s",
            "flows[1].stop": f"{ph.stop:g}s",
        }
    )
    out = {"single": single}
    for algo in ALGORITHMS:
        changes: dict[str, object] = {"flows[0].cc": algo, "flows[1].cc": algo}
        if algo != "wave":
            changes |= {"flows[0].tcp": {"sack": True}, "flows[1].tcp": {"sack": True}}
        out[f"fairness-{algo}"] = fair.with_changes(changes)
    return out


def first_bursts(single: Results) -> tuple[str, str, str]:
    """When the first bursts left: the first update of TxTime (from the first
    ACK train) takes effect from the second burst, TxTime0 after the first."""
    log = single.packets
    sends = log[(log["event"].astype(str) == "send") & (log["kind"].astype(str) == "data")]
    t = sends["time"].to_numpy()
    starts = [float(t[0])] + [float(x) for a, x in itertools.pairwise(t) if x - a > 0.004]
    gaps = np.diff(starts[:4]) * 1e3
    return (
        "one flow: the first TxTime update",
        "at 0.5 s (TxTime0), after the first ACK train",
        f"bursts at {', '.join(f'{x:.3f}' for x in starts[:4])} s: "
        f"gaps {', '.join(f'{g:.0f}' for g in gaps)} ms",
    )


def _delivered_at(res: Results, flow: int, times: np.ndarray) -> np.ndarray:
    """Bytes the flow had delivered at each of `times` (its last sample at or
    before each; zero before the flow started)."""
    part = res.series[res.series["flow"] == flow]
    t = part["time"].to_numpy(dtype=float)
    v = part["bytes_delivered"].to_numpy(dtype=float)
    i = np.searchsorted(t, times + 1e-9, side="right") - 1
    return np.where(i >= 0, v[np.clip(i, 0, None)], 0.0)


def rates(res: Results, flow: int, step: float = 1.0) -> pd.Series:
    """Goodput (bit/s) of a flow over consecutive `step`-second windows."""
    end = float(res.series["time"].max())
    edges = np.arange(0.0, end + 1e-9, step)
    delivered = _delivered_at(res, flow, edges)
    return pd.Series(np.diff(delivered) * 8 / step, index=edges[1:])


BASE_RTT = 2 * (0.001 + 0.025)
"""Propagation RTT of the scenarios (1 ms access, 25 ms bottleneck, each way)."""


def channel_rtt(res: Results) -> pd.Series:
    """The RTT a packet crossing the bottleneck experiences: the propagation RTT
    plus the bottleneck queue's delay (queued bytes at the link rate), by time.
    The same yardstick for every algorithm (their own RTT samples differ: TCP
    Wave's include, by design, samples inflated by loss repair)."""
    q = res.queues[res.queues["link"].astype(str) == "bottleneck:forward"]
    rate = float(res.links[res.links["link"].astype(str) == "bottleneck"]["rate"].iloc[0])
    return pd.Series(BASE_RTT + q["bytes"].to_numpy() * 8 / rate, index=q["time"].to_numpy())


def goodput(res: Results, flow: int, a: float, b: float) -> float:
    """Mean goodput (bit/s) of a flow between a and b seconds."""
    d = _delivered_at(res, flow, np.array([a, b]))
    return float((d[1] - d[0]) * 8 / (b - a))


def regain_time(res: Results, ph: Phases, link: float) -> float:
    """Seconds after connection 2 stops until connection 1 delivers at least
    85 % of the link over one second (NaN if never)."""
    for k in range(int((ph.end - ph.stop - 1) * 10)):
        t = ph.stop + k / 10
        if goodput(res, 0, t, t + 1) >= 0.85 * link:
            return t + 1 - ph.stop
    return float("nan")


def measure(runs: Mapping[str, Results], ph: Phases) -> pd.DataFrame:
    """The page's statements beside our figures."""
    single = runs["single"]
    s = single.series
    after = s[s["time"] > 5.0]
    rows = [
        (
            "one flow, 6 Mbit/s: rate after the first 5 s",
            "stable bursts at almost the full 6 Mbit/s",
            f"{goodput(single, 0, 5.0, ph.single_end) / 1e6:.2f} Mbit/s",
        ),
        (
            "one flow: RTT (min / median / 95th percentile)",
            "oscillates between the propagation delay and it plus the ACK-train dispersion",
            "{:.1f} / {:.1f} / {:.1f} ms (propagation 52 ms, dispersion {:.1f} ms)".format(
                float(after["rtt"].min()) * 1e3,
                float(after["rtt"].median()) * 1e3,
                float(after["rtt"].quantile(0.95)) * 1e3,
                float(after["cc_dispersion"].median()) * 1e3,
            ),
        ),
        first_bursts(single),
    ]
    link = 10e6
    for algo in ALGORITHMS:
        r = runs[f"fairness-{algo}"]
        a, b = goodput(r, 0, ph.start, ph.stop), goodput(r, 1, ph.start, ph.stop)
        jain = (a + b) ** 2 / (2 * (a * a + b * b))
        rtt = channel_rtt(r)
        rtt = rtt[(rtt.index > ph.start) & (rtt.index <= ph.stop)]
        rows += [
            (
                f"{algo}: rates while both run",
                "about 5 Mbit/s each" if algo == "wave" else "(figure only)",
                f"{a / 1e6:.2f} and {b / 1e6:.2f} Mbit/s, Jain {jain:.3f}",
            ),
            (
                f"{algo}: connection 1 alone, then after connection 2 stops",
                "full 10 Mbit/s; regained at 200 s" if algo == "wave" else "(figure only)",
                f"{goodput(r, 0, 10.0, ph.start) / 1e6:.2f} Mbit/s; 85 % regained "
                f"{regain_time(r, ph, link):.1f} s after the stop",
            ),
            (
                f"{algo}: channel RTT while both run (mean / 95th pct)",
                "Wave keeps the lowest RTT of the three" if algo == "wave" else "(figure 8)",
                f"{rtt.mean() * 1e3:.1f} / {rtt.quantile(0.95) * 1e3:.1f} ms",
            ),
        ]
    return pd.DataFrame(rows, columns=["check", "project page", "wavelab"])


def figures(runs: Mapping[str, Results], ph: Phases, out: Path) -> list[Path]:
    """The page's Figures 1-8, from our runs."""
    files: list[Path] = []
    single = runs["single"]
    mss = 1460.0
    # Figure 1: burst transmission (sequence numbers of the first 3 s)
    log = single.packets
    log = log[(log["time"] <= 3.0) & (log["kind"].astype(str) == "data")]
    sent = log[log["event"].astype(str) == "send"]
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.plot(sent["time"], sent["seq"] / mss, ".", ms=2)
    ax.set(xlabel="time (s)", ylabel="segment", title="Fig. 1: TCP Wave burst transmission")
    ax.grid(alpha=0.3)
    files.append(save(fig, out / "fig1_bursts.png"))
    # Figures 2 and 3: TxTime and RTT of the single flow
    s = single.series
    for name, col, title in [
        ("fig2_txtime.png", "cc_tx_time", "Fig. 2: TxTime"),
        ("fig3_rtt.png", "rtt", "Fig. 3: RTT of one TCP Wave connection"),
    ]:
        fig, ax = plt.subplots(figsize=(9, 4))
        ax.plot(s["time"], s[col] * 1e3, lw=0.8)
        if col == "cc_tx_time":
            ax.plot(s["time"], s["cc_dispersion"] * 1e3, lw=0.8, label="ACK-train dispersion")
            ax.legend()
            ax.set_ylim(0, max(60.0, float(s[s["time"] > 1][col].max()) * 1.2e3))
        ax.set(xlabel="time (s)", ylabel="ms", title=title)
        ax.grid(alpha=0.3)
        files.append(save(fig, out / name))
    # Figure 4: sequence numbers of two Wave connections
    r = runs["fairness-wave"]
    fig, ax = plt.subplots(figsize=(9, 4))
    for f, label in [(0, "connection 1"), (1, "connection 2")]:
        part = r.series[r.series["flow"] == f]
        ax.plot(part["time"], part["bytes_sent"] / mss, lw=1, label=label)
    ax.set(xlabel="time (s)", ylabel="segment", title="Fig. 4: two TCP Wave connections")
    ax.legend()
    ax.grid(alpha=0.3)
    files.append(save(fig, out / "fig4_sequence.png"))
    # Figures 5-7: per-connection rates
    for num, algo in zip((5, 6, 7), ALGORITHMS, strict=True):
        r = runs[f"fairness-{algo}"]
        fig, ax = plt.subplots(figsize=(9, 4))
        for f, label in [(0, "connection 1"), (1, "connection 2")]:
            g = rates(r, f)
            ax.plot(g.index, g / 1e6, lw=1, label=label)
        ax.axhline(10, ls="--", color="grey", lw=0.8)
        ax.set(
            xlabel="time (s)",
            ylabel="Mbit/s",
            ylim=(0, 11),
            title=f"Fig. {num}: two {algo.upper() if algo != 'wave' else 'TCP Wave'} connections",
        )
        ax.legend()
        ax.grid(alpha=0.3)
        files.append(save(fig, out / f"fig{num}_rates_{algo}.png"))
    # Figure 8: the channel's RTT (propagation + bottleneck queueing) per algorithm
    fig, (ax, box) = plt.subplots(
        1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 1]}, sharey=True
    )
    data = []
    for algo in ALGORITHMS:
        rtt = channel_rtt(runs[f"fairness-{algo}"]) * 1e3
        ax.plot(rtt.index, rtt, lw=0.7, label=algo, color=algorithm_style(algo).color)
        data.append(rtt[(rtt.index > ph.start) & (rtt.index <= ph.stop)].to_numpy())
    ax.set(
        xlabel="time (s)",
        ylabel="RTT (ms)",
        title="Fig. 8: channel RTT (propagation + bottleneck queue)",
    )
    ax.legend()
    ax.grid(alpha=0.3)
    box.boxplot(data, tick_labels=list(ALGORITHMS), showfliers=False)
    box.set_title("while both run", fontsize=10)
    box.grid(alpha=0.3)
    files.append(save(fig, out / "fig8_rtt.png"))
    return files


def reproduce(
    out: Path,
    quick: bool,
    jobs: int | None,
    cluster: str | None = None,
    cluster_timeout: float | None = None,
) -> Path:
    """Runs the experiments (into ``out/store``, resumable), prints and
    writes the comparison, draws the figures."""
    ph = QUICK if quick else FULL
    out.mkdir(parents=True, exist_ok=True)
    study = {k: StudyRun(sc) for k, sc in scenarios(quick).items()}
    # every run is read back from the store when it is needed
    runs = run_runs("wave-page", study, out, jobs, cluster, cluster_timeout).results
    table = measure(runs, ph)
    tables = Tables(out)
    tables.csv("comparison.csv", table)
    tables.markdown("comparison.md", Markdown().table(table))
    figures(runs, ph, out)
    with pd.option_context("display.width", 200, "display.max_colwidth", 90):
        print(table_text(table))
    return out
