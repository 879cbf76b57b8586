"""The plots of traffic beside the bulk flows, drawn by :func:`plot_all`
when a run has what they show:

* ``fct-cdf.png`` (a run with workloads): the CDF of the transfers'
  completion times and of their slowdowns, per workload
  (:mod:`wavelab.analysis.transfers`);
* ``owd-cdf.png`` (``output.delays = true``): the CDF of every one-way
  delay per flow (its ``owd_distribution``) and each flow's RFC 3550
  interarrival jitter;
* ``delays.png`` (``output.delays = true``): each flow's one-way delay per
  sampling interval against time, and a ping flow's RTT (as flent draws
  ping under load).

The workloads' transfers are left out of the per-flow figures (their own
is ``fct-cdf.png``)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from wavelab.analysis.rtt import rtt_cdf
from wavelab.analysis.transfers import completion_cdf
from wavelab.plot.figure_files import write_figure
from wavelab.results.frames import Results

MAX_FLOWS = 8
"""Most flows a per-flow traffic figure draws (the first ones)."""


def _own_flows(results: Results) -> list[int]:
    """The flows that are not a workload's transfers, the first
    :data:`MAX_FLOWS`."""
    transfers = set(results.transfers["flow_index"].tolist()) if len(results.transfers) else set()
    return [f for f in range(len(results.flows)) if f not in transfers][:MAX_FLOWS]


def _title(fig: Figure, results: Results, what: str) -> None:
    fig.suptitle(f"{results.scenario.name}: {what}")
    fig.tight_layout()


def plot_completion_times(results: Results, path: Path | None = None) -> Figure | None:
    """The CDF of the completed transfers' completion times (left) and
    slowdowns (right) per workload, on log axes; None without transfers."""
    t = results.transfers
    if not len(t) or not t["completion_time"].notna().any():
        return None
    fig, (a, b) = plt.subplots(1, 2, figsize=(plt.rcParams["figure.figsize"][0], 3.4))
    for ax, column, label in (
        (a, "completion_time", "completion time (s)"),
        (b, "slowdown", "slowdown (completion / ideal)"),
    ):
        cdf = completion_cdf(t, column)
        for name, g in cdf.groupby("workload", sort=False):
            ax.step(g["value"], g["cdf"], where="post", label=str(name))
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(label)
        ax.set_ylim(0, 1.02)
        ax.axhline(0.99, ls=":", color="grey", lw=0.8)
    a.set_ylabel("fraction of transfers")
    a.legend(loc="lower right")
    done = int(t["completion_time"].notna().sum())
    _title(fig, results, f"completion times of {done} of {len(t)} transfers")
    write_figure(fig, path, True)
    return fig


def plot_owd_cdf(results: Results, path: Path | None = None) -> Figure | None:
    """The CDF of every one-way delay of each flow (left, from the run's
    ``owd_distribution``) and each flow's RFC 3550 interarrival jitter
    (right); None without the distribution (``output.delays`` off)."""
    dist = results.owd_distribution
    if not len(dist):
        return None
    flows = [f for f in _own_flows(results) if f in set(dist["flow"].tolist())]
    if not flows:
        return None
    names = [str(n) for n in results.flows["name"]]
    fig, (a, b) = plt.subplots(
        1, 2, figsize=(plt.rcParams["figure.figsize"][0], 3.4), width_ratios=[2, 1]
    )
    # one colour per flow (flows of one algorithm would share theirs)
    colors = [f"C{k % 10}" for k in range(len(flows))]
    for f, color in zip(flows, colors, strict=True):
        c = rtt_cdf(dist, f, "owd")
        a.step(c["owd"] * 1e3, c["cdf"], where="post", color=color, label=names[f])
    a.set_xlabel("one-way delay (ms)")
    a.set_ylabel("fraction of packets")
    a.set_ylim(0, 1.02)
    a.legend(loc="lower right")
    jitter = results.flows["jitter"].iloc[flows].to_numpy(dtype=float) * 1e3
    b.barh(
        [names[f] for f in flows],
        np.nan_to_num(jitter),
        color=colors,
    )
    b.invert_yaxis()
    b.set_xlabel("jitter, RFC 3550 (ms)")
    _title(fig, results, "one-way delay and jitter")
    write_figure(fig, path, True)
    return fig


def plot_delays(results: Results, path: Path | None = None) -> Figure | None:
    """Each flow's mean one-way delay per sampling interval against time
    (top) and, with ping flows, their mean RTT per interval (bottom); None
    without the delay series (``output.delays`` off)."""
    d = results.delays
    if not len(d):
        return None
    flows = _own_flows(results)
    pings = [f for f in flows if (d.loc[d["flow"] == f, "rtt_samples"] > 0).any()]
    names = [str(n) for n in results.flows["name"]]
    panels = 2 if pings else 1
    width = plt.rcParams["figure.figsize"][0]
    fig, axes = plt.subplots(panels, 1, figsize=(width, 2.6 * panels + 0.6), sharex=True)
    axes = np.atleast_1d(axes)
    color = {f: f"C{k % 10}" for k, f in enumerate(flows)}
    for f in flows:
        s = d[(d["flow"] == f) & d["owd_mean"].notna()]
        if len(s):
            axes[0].plot(s["time"], s["owd_mean"] * 1e3, color=color[f], label=names[f])
    axes[0].set_ylabel("one-way delay (ms)")
    axes[0].legend(loc="upper right", fontsize="small")
    for f in pings:
        s = d[(d["flow"] == f) & d["rtt_mean"].notna()]
        axes[1].plot(s["time"], s["rtt_mean"] * 1e3, color=color[f], label=names[f])
    if pings:
        axes[1].set_ylabel("ping RTT (ms)")
        axes[1].legend(loc="upper right", fontsize="small")
    axes[-1].set_xlabel("time (s)")
    _title(fig, results, "delays per sampling interval")
    write_figure(fig, path, True)
    return fig
