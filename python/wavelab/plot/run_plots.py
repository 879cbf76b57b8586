"""Default plots of a run, as PNG files.

* ``sequence.png``: sequence number (in segments) of sent and retransmitted
  data and of received ACKs against time, one panel per logged flow, as in the
  papers' figures (falls back to the sampled highest-sent / acked curves when
  no packet log was kept);
* ``rate.png``: goodput and sending rate per flow, averaged over 1 s
  (:data:`wavelab.analysis.rates.RATE_WINDOW`, which says why), with the
  bottleneck's capacity as every schedule entry, handover and trace changed
  it (:mod:`wavelab.analysis.capacity`); a release after a long hole far above the
  capacity is drawn off scale;
* ``cwnd.png``: congestion window and ssthresh per flow, with the recovery state;
* ``rtt.png``: smoothed RTT, RTT samples and RTO per flow;
* ``queue.png``: queue length of every link direction that ever queued;
* ``algorithm.png``: the algorithms' own variables (the ``cc_*`` columns:
  TCP Wave's TxTime and burst, CUBIC's W_max, BBR's bottleneck estimate, ...),
  one small panel per variable;
* ``rtt-cdf.png``: the CDF of every RTT sample per flow (not only the
  sampled series: the run's ``rtt_distribution``), the whole run whatever
  ``window`` says;
* ``jain.png``: Jain's fairness index of the flows' goodputs over 1 s
  windows against time, for runs of two flows or more.

Every plot against time marks the handoffs of multi-homed nodes (a dotted
purple line at each switch) and shades every window when a link was down
(its outages, a handover's or a break-before-make handoff's disconnection).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from wavelab.analysis.capacity import (
    Capacity,
    bottleneck_direction,
    direction_capacity,
    outages,
)
from wavelab.analysis.rates import (
    RATE_WINDOW,
    goodput_and_send_rate,
    jain_over_time,
    rate_ceiling,
)
from wavelab.analysis.rtt import rtt_cdf
from wavelab.plot.figure_files import figure_dpi, figure_format, save_figure
from wavelab.results.frames import Results

TimeRange = tuple[float, float] | None
"""Plot only this window of simulated time (seconds), or everything."""


def _within(frame: pd.DataFrame, window: TimeRange) -> pd.DataFrame:
    if window is None or not len(frame):
        return frame
    start, end = window
    return frame[(frame["time"] >= start) & (frame["time"] <= end)]


STATE_COLORS = {
    "open": "#ffffff",
    "disorder": "#fde9b4",
    "cwr": "#d9ecf7",
    "recovery": "#f8c9a0",
    "loss": "#f29a9a",
}


def flow_mss(results: Results) -> list[int]:
    """The MSS of every flow (replicas expanded), from the normalised scenario."""
    out: list[int] = []
    for spec in results.scenario.normalized["flows"]:
        out += [int(spec["tcp"]["mss"])] * int(spec.get("count", 1))
    return out


def flow_names(results: Results) -> list[str]:
    """Flow names in flow order."""
    return [str(n) for n in results.flows["name"]]


def _panels(n: int, height: float = 2.6) -> tuple[Figure, list[Axes]]:
    fig, axes = plt.subplots(n, 1, figsize=(10, max(3.2, height * n)), sharex=True, squeeze=False)
    return fig, [a for row in axes for a in row]


def _mark_events(axes: list[Axes], results: Results, window: TimeRange) -> None:
    """On every time axis: a dotted line at every handoff that happened, and
    every window when a link was down shaded (its outages, a handover's or a
    break-before-make handoff's disconnection: :func:`wavelab.analysis.capacity.outages`);
    each labelled once."""
    h = results.handoffs
    done = h[h["time"].notna()] if len(h) else h
    end = float(results.run.get("simulated") or np.inf)
    down = [
        w
        for spans in outages(results.scenario.normalized, results.handovers, h, end).values()
        for w in spans
    ]
    for ax in axes:
        labelled = False
        for _, row in done.iterrows():
            t = float(row["time"])
            if window is not None and not window[0] <= t <= window[1]:
                continue
            ax.axvline(t, ls=":", lw=1, color="tab:purple", label=None if labelled else "handoff")
            labelled = True
        shaded = False
        for w in down:
            if window is not None and (w.end < window[0] or w.start > window[1]):
                continue
            label = None if shaded else "link down"
            ax.axvspan(w.start, w.end, color="tab:red", alpha=0.12, lw=0, label=label)
            shaded = True


def _finish(fig: Figure, axes: list[Axes], title: str, path: Path) -> Path:
    axes[-1].set_xlabel("time (s)")
    fig.suptitle(title)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def plot_sequence(
    results: Results, path: Path, max_flows: int = 4, window: TimeRange = None
) -> Path:
    """Sequence numbers of sent data and received ACKs against time."""
    names = flow_names(results)
    mss = flow_mss(results)
    log = _within(results.packets, window)
    logged = sorted(set(log["flow"].tolist())) if len(log) else []
    flows = (logged or list(range(len(names))))[:max_flows]
    fig, axes = _panels(len(flows), 3.0)
    for ax, f in zip(axes, flows, strict=True):
        seg = float(mss[f])
        if f in logged:
            g = log[log["flow"] == f]
            ev = g["event"].astype(str)
            kind = g["kind"].astype(str)
            sent = g[(ev == "send") & (kind == "data")]
            rtx = g[ev == "retransmit"]
            acks = g[(ev == "ack") & (kind == "ack")]
            drops = g[(ev == "drop") & ~g["is_ack"]]
            ax.plot(sent["time"], sent["seq"] / seg, ".", ms=2, color="tab:blue", label="sent")
            ax.plot(
                acks["time"],
                acks["seq"] / seg,
                "-",
                lw=0.8,
                color="tab:green",
                label="ACK received",
            )
            if len(rtx):
                ax.plot(
                    rtx["time"],
                    rtx["seq"] / seg,
                    "o",
                    ms=4,
                    mfc="none",
                    color="tab:red",
                    label="retransmitted",
                )
            if len(drops):
                ax.plot(
                    drops["time"], drops["seq"] / seg, "x", ms=4, color="black", label="dropped"
                )
        else:
            s = _within(results.series[results.series["flow"] == f], window)
            sent_total = s["bytes_sent"] + 0.0
            ax.plot(s["time"], sent_total / seg, "-", color="tab:blue", label="highest sent")
            ax.plot(s["time"], s["bytes_acked"] / seg, "-", color="tab:green", label="acknowledged")
        ax.set_ylabel("segment")
        ax.set_title(f"{names[f]} (MSS {mss[f]} B)", fontsize=10, loc="left")
        ax.legend(loc="upper left", fontsize=8, markerscale=2)
        ax.grid(alpha=0.3)
    _mark_events(axes, results, window)
    return _finish(fig, axes, f"{results.scenario.name}: sequence numbers", path)


def bottleneck_capacity(results: Results) -> Capacity | None:
    """The capacity over time of the run's bottleneck (the direction where
    packets waited longest, as the metrics choose it), or None."""
    if not len(results.links) or "queue_delay_mean" not in results.links:
        return None
    d = bottleneck_direction(results.links)
    if d is None:
        return None
    end = float(results.run.get("simulated") or results.scenario.normalized.get("duration", 0))
    return direction_capacity(
        results.scenario.normalized, d, end, results.handovers, results.handoffs
    )


def plot_rate(results: Results, path: Path, window: TimeRange = None) -> Path:
    """Goodput and sending rate per flow, each averaged over
    :data:`wavelab.analysis.RATE_WINDOW`, with the bottleneck's capacity as
    it changed; values far above it (a release after a long hole) are drawn
    off scale at the top, marked with a triangle."""
    g = _within(goodput_and_send_rate(results.series), window)
    names = flow_names(results)
    fig, axes = _panels(2, 3.2)
    for f in sorted(set(g["flow"].tolist())):
        part = g[g["flow"] == f]
        label = names[f]
        axes[0].plot(part["time"], part["goodput"] / 1e6, lw=1, label=label)
        axes[1].plot(part["time"], part["send_rate"] / 1e6, lw=1, label=label)
    if len(g) and len(names) > 1:
        total = g.groupby("time")["goodput"].sum(min_count=1)
        axes[0].plot(total.index, total / 1e6, color="black", lw=1, alpha=0.6, label="all flows")
    cap = bottleneck_capacity(results)
    start, end = window if window is not None else (0.0, None)
    columns = ["goodput", "send_rate"]
    titles = ["goodput", "sending rate (with retransmissions)"]
    for ax, column, what in zip(axes, columns, titles, strict=True):
        if cap is not None:
            xs, ys = cap.steps(start, end)
            ax.plot(
                xs,
                np.asarray(ys) / 1e6,
                ls="--",
                color="grey",
                lw=0.9,
                label=f"capacity ({cap.name})",
            )
            values = g[column].to_numpy(dtype=float)
            if column == "goodput" and len(names) > 1 and len(g):
                values = np.append(values, g.groupby("time")["goodput"].sum().to_numpy())
            top = rate_ceiling(float(np.max(cap.rates)), values)
            if top is not None:
                ax.set_ylim(0, top / 1e6)
                off = g[g[column] > top]
                if len(off):
                    ax.plot(
                        off["time"],
                        np.full(len(off), top / 1e6 * 0.985),
                        "^",
                        ms=4,
                        color="tab:red",
                        label=f"off scale (up to {off[column].max() / 1e6:.1f} Mbit/s)",
                    )
        ax.set_ylabel("Mbit/s")
        ax.set_title(f"{what}, over {RATE_WINDOW:g} s", fontsize=10, loc="left")
        ax.legend(loc="upper right", fontsize=8)
        ax.grid(alpha=0.3)
    _mark_events(axes, results, window)
    return _finish(fig, axes, f"{results.scenario.name}: rate", path)


def _state_bands(ax: Axes, times: np.ndarray[Any, Any], states: pd.Series) -> None:
    codes = states.astype(str).to_numpy()
    if not len(codes):
        return
    start = 0
    for i in range(1, len(codes) + 1):
        if i == len(codes) or codes[i] != codes[start]:
            color = STATE_COLORS.get(codes[start], "#ffffff")
            if codes[start] != "open":
                left = times[start - 1] if start > 0 else times[start]
                ax.axvspan(left, times[i - 1], color=color, lw=0, zorder=0)
            start = i


def plot_cwnd(results: Results, path: Path, max_flows: int = 4, window: TimeRange = None) -> Path:
    """Congestion window and ssthresh per flow, shaded by recovery state."""
    names = flow_names(results)
    mss = flow_mss(results)
    flows = sorted(set(results.series["flow"].tolist()))[:max_flows]
    fig, axes = _panels(max(1, len(flows)), 2.6)
    for ax, f in zip(axes, flows, strict=False):
        s = _within(results.series[results.series["flow"] == f], window)
        seg = float(mss[f])
        times = s["time"].to_numpy()
        _state_bands(ax, times, s["state"])
        ax.plot(times, s["cwnd"] / seg, lw=1, color="tab:blue", label="cwnd")
        ax.plot(times, s["ssthresh"] / seg, lw=1, ls="--", color="tab:orange", label="ssthresh")
        ax.plot(times, s["in_flight"] / seg, lw=0.6, color="tab:gray", alpha=0.7, label="in flight")
        ax.set_ylabel("segments")
        ax.set_title(
            f"{names[f]}  (shading: orange recovery, red loss/timeout, yellow disorder)",
            fontsize=10,
            loc="left",
        )
        ax.legend(loc="upper right", fontsize=8)
        ax.grid(alpha=0.3)
        finite = np.concatenate([s["cwnd"].to_numpy() / seg, s["in_flight"].to_numpy() / seg])
        if len(finite):
            ax.set_ylim(0, max(4.0, float(np.nanmax(finite)) * 1.15))
    _mark_events(axes, results, window)
    return _finish(fig, axes, f"{results.scenario.name}: congestion window and state", path)


def plot_rtt(results: Results, path: Path, window: TimeRange = None) -> Path:
    """Smoothed RTT, latest RTT sample and RTO per flow."""
    names = flow_names(results)
    series = _within(results.series, window)
    fig, axes = _panels(2, 3.0)
    for f in sorted(set(series["flow"].tolist())):
        s = series[series["flow"] == f]
        label = names[f]
        (line,) = axes[0].plot(s["time"], s["srtt"] * 1e3, lw=1, label=f"{label} srtt")
        axes[0].plot(s["time"], s["rtt"] * 1e3, lw=0.5, alpha=0.5, color=line.get_color())
        axes[1].plot(s["time"], s["rto"], lw=1, color=line.get_color(), label=label)
    axes[0].set_ylabel("ms")
    axes[0].set_title("smoothed RTT (thin: latest sample)", fontsize=10, loc="left")
    axes[1].set_ylabel("s")
    axes[1].set_title("retransmission timeout", fontsize=10, loc="left")
    for ax in axes:
        ax.legend(loc="upper right", fontsize=8)
        ax.grid(alpha=0.3)
    _mark_events(axes, results, window)
    return _finish(fig, axes, f"{results.scenario.name}: RTT", path)


def plot_queues(results: Results, path: Path, window: TimeRange = None) -> Path | None:
    """Queue length (packets) of the link directions that ever queued."""
    q = _within(results.queues, window)
    if not len(q):
        return None
    busy = results.links[results.links["max_queue_packets"] > 0]["dir"].tolist()
    if not busy:
        return None
    fig, axes = _panels(1, 3.2)
    for d in busy:
        part = q[q["dir"] == d]
        axes[0].plot(part["time"], part["packets"], lw=1, label=str(part["link"].iloc[0]))
    axes[0].set_ylabel("packets waiting")
    _mark_events(axes, results, window)
    axes[0].legend(loc="upper right", fontsize=8)
    axes[0].grid(alpha=0.3)
    return _finish(fig, axes, f"{results.scenario.name}: queues", path)


# Variables measured in seconds are drawn in milliseconds.
_SECONDS = {"tx_time", "dispersion", "min_rtt", "avg_rtt", "delta_rtt", "rt_prop", "rtt_min", "k"}


def plot_algorithm_state(
    results: Results, path: Path, window: TimeRange = None, max_panels: int = 12
) -> Path | None:
    """One small panel per algorithm variable (``cc_*`` columns), flows as lines."""
    series = _within(results.series, window)
    cols = [c for c in series.columns if c.startswith("cc_") and series[c].notna().any()]
    cols = cols[:max_panels]
    if not cols:
        return None
    names = flow_names(results)
    ncols = 3 if len(cols) > 4 else len(cols)
    nrows = (len(cols) + ncols - 1) // ncols
    fig, grid = plt.subplots(
        nrows, ncols, figsize=(4.2 * ncols, 2.6 * nrows), sharex=True, squeeze=False
    )
    axes = [a for row in grid for a in row]
    for ax, col in zip(axes, cols, strict=False):
        var = col[3:]
        scale, unit = (1e3, " (ms)") if var in _SECONDS else (1.0, "")
        for f in sorted(set(series["flow"].tolist())):
            part = series[series["flow"] == f]
            if part[col].notna().any():
                ax.plot(part["time"], part[col] * scale, lw=0.9, label=names[f])
        ax.set_title(var + unit, fontsize=9, loc="left")
        ax.grid(alpha=0.3)
    _mark_events(axes[: len(cols)], results, window)
    for ax in axes[len(cols) :]:
        ax.set_visible(False)
    axes[0].legend(fontsize=7, loc="upper right")
    for ax in axes[-ncols:]:
        ax.set_xlabel("time (s)")
    fig.suptitle(f"{results.scenario.name}: algorithm state")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def plot_jain(results: Results, path: Path, window: TimeRange = None) -> Path | None:
    """Jain's fairness index of the flows' goodputs (over 1 s windows)
    against time, for runs of two flows or more; None otherwise."""
    if len(results.flows) < 2:
        return None
    jain = jain_over_time(results.series[["time", "flow", "bytes_delivered"]])
    if window is not None:
        jain = jain[(jain.index >= window[0]) & (jain.index <= window[1])]
    fig, axes = _panels(1, 3.2)
    ax = axes[0]
    ax.plot(jain.index, jain.to_numpy(), lw=1, color="black")
    n = len(results.flows)
    ax.axhline(1 / n, ls=":", color="grey", lw=0.8, label=f"1/n = {1 / n:.2f}: one flow has all")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("Jain's index")
    ax.set_title(f"fairness of {n} flows' goodput over 1 s windows", fontsize=10, loc="left")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    _mark_events(axes, results, window)
    return _finish(fig, axes, f"{results.scenario.name}: fairness", path)


def plot_rtt_cdf(results: Results, path: Path) -> Path | None:
    """The distribution of every RTT sample each flow's sender took, as a
    CDF per flow (and of all flows together with two or more), from the
    run's ``rtt_distribution`` (:func:`wavelab.analysis.rtt_cdf`); the
    median and the 95th percentile of each flow marked. None without
    samples (an emulation)."""
    dist = results.rtt_distribution
    if not len(dist):
        return None
    names = flow_names(results)
    fig, axes = _panels(1, 3.6)
    ax = axes[0]
    for f in sorted(set(dist["flow"].tolist())):
        c = rtt_cdf(dist, f)
        (line,) = ax.step(c["rtt"] * 1e3, c["cdf"], where="post", lw=1.2, label=names[f])
        row = results.flows.iloc[f]
        for q, marker in (("rtt_p50", "o"), ("rtt_p95", "s")):
            at = float(row[q]) * 1e3
            if np.isfinite(at):
                level = 0.5 if q == "rtt_p50" else 0.95
                ax.plot([at], [level], marker, ms=4, mfc="none", color=line.get_color())
    if len(names) > 1:
        c = rtt_cdf(dist)
        ax.step(
            c["rtt"] * 1e3,
            c["cdf"],
            where="post",
            lw=1,
            color="black",
            alpha=0.6,
            label="all flows",
        )
    ax.axhline(0.95, ls=":", color="grey", lw=0.8)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("fraction of samples")
    ax.set_title("RTT of every sample (circle: median, square: p95)", fontsize=10, loc="left")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    ax.set_xlabel("RTT (ms)")
    fig.suptitle(f"{results.scenario.name}: RTT distribution")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def plot_all(
    results: Results,
    directory: str | Path,
    window: TimeRange = None,
    fmt: str = "png",
    dpi: int = 110,
) -> list[Path]:
    """Writes every default plot into ``directory`` (only the simulated-time
    ``window`` if given) as ``fmt`` (png, pdf or svg) at ``dpi``; returns
    the files."""
    fmt = figure_format(fmt)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    with figure_dpi(dpi):
        written = [
            plot_sequence(results, out / f"sequence.{fmt}", window=window),
            plot_rate(results, out / f"rate.{fmt}", window=window),
            plot_cwnd(results, out / f"cwnd.{fmt}", window=window),
            plot_rtt(results, out / f"rtt.{fmt}", window=window),
        ]
        for extra in (
            plot_queues(results, out / f"queue.{fmt}", window=window),
            plot_algorithm_state(results, out / f"algorithm.{fmt}", window=window),
            plot_jain(results, out / f"jain.{fmt}", window=window),
            plot_rtt_cdf(results, out / f"rtt-cdf.{fmt}"),
        ):
            if extra:
                written.append(extra)
    return written
