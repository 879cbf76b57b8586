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

Every function draws into the matplotlib ``ax`` it is given (an ``Axes``, or
a sequence of them for the plots of several panels: as many panels are drawn
as axes are given) or, without one, into a figure of its own; it returns the
``Figure`` (None when there is nothing to draw), and writes it to ``path``
when one is given. Flows take their algorithm's colour and marker
(:mod:`wavelab.plot.style`); the titles and labels are those of
:mod:`wavelab.plot.spec`, which the report follows too. Sizes and fonts come
from the style in force: :func:`plot_all` uses ``wavelab`` or ``paper``.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from wavelab.plot.figure_files import figure_dpi, figure_format, write_figure
from wavelab.plot.spec import FIGURES, TRACES
from wavelab.plot.style import (
    GREY,
    HANDOFF_COLOR,
    OUTAGE_COLOR,
    STATE_COLORS,
    TOTAL,
    FlowStyle,
    flow_styles,
    style,
)
from wavelab.results.frames import Results
from wavelab.scenario.flow_rows import flow_row_specs

TimeRange = tuple[float, float] | None
"""Plot only this window of simulated time (seconds), or everything."""


def _within(frame: pd.DataFrame, window: TimeRange) -> pd.DataFrame:
    if window is None or not len(frame):
        return frame
    start, end = window
    return frame[(frame["time"] >= start) & (frame["time"] <= end)]


Target = Axes | Sequence[Axes] | None
"""Where a plot draws: one matplotlib ``Axes``, several (one per panel), or
None for a figure of its own."""


def flow_mss(results: Results) -> list[int]:
    """The MSS of every flow (replicas expanded), from the normalised scenario."""
    return [int(spec["tcp"]["mss"]) for spec in flow_row_specs(results.scenario.normalized)]


def flow_names(results: Results) -> list[str]:
    """Flow names in flow order."""
    return [str(n) for n in results.flows["name"]]


def flow_style(results: Results) -> list[FlowStyle]:
    """The colour, marker and line style of every flow (by its algorithm)."""
    return flow_styles([str(a) for a in results.flows["algorithm"]])


def _panels(n: int, height: float = 2.6, ax: Target = None) -> tuple[Figure, list[Axes], bool]:
    """The figure and axes to draw ``n`` panels into: those of ``ax`` (as
    many as given, at most ``n``), or a new figure as wide as the style's
    with each panel ``height`` tall at the ``wavelab`` style's 3.2 in figure
    height (scaled with the style's); and whether the figure is new."""
    if ax is not None:
        given = [ax] if isinstance(ax, Axes) else list(ax)
        if not given:
            raise ValueError("ax: give an Axes or a non-empty sequence of them")
        fig = given[0].get_figure()
        assert isinstance(fig, Figure)
        return fig, given[:n], False
    width, base = plt.rcParams["figure.figsize"]
    panel = base * height / 3.2
    fig, axes = plt.subplots(
        n, 1, figsize=(width, max(base, panel * n)), sharex=True, squeeze=False
    )
    return fig, [a for row in axes for a in row], True


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
            label = None if labelled else TRACES["handoff"]
            ax.axvline(t, ls=":", lw=1, color=HANDOFF_COLOR, label=label)
            labelled = True
        shaded = False
        for w in down:
            if window is not None and (w.end < window[0] or w.start > window[1]):
                continue
            label = None if shaded else TRACES["outage"]
            ax.axvspan(w.start, w.end, color=OUTAGE_COLOR, alpha=0.2, lw=0, label=label)
            shaded = True


def _finish(
    fig: Figure,
    axes: list[Axes],
    results: Results,
    figure: str,
    path: Path | None,
    own: bool,
    bottom: list[Axes] | None = None,
) -> Figure:
    """Labels the x axis of the ``bottom`` axes (the last one by default);
    in a figure of its own, the title and the layout; writes the figure to
    ``path`` if given (and closes it if it is its own)."""
    for ax in bottom or axes[-1:]:
        ax.set_xlabel(FIGURES[figure]["x"])
    if own:
        fig.suptitle(f"{results.scenario.name}: {FIGURES[figure]['title']}")
        fig.tight_layout()
    write_figure(fig, path, own)
    return fig


def plot_sequence(
    results: Results,
    path: Path | None = None,
    max_flows: int = 4,
    window: TimeRange = None,
    *,
    ax: Target = None,
) -> Figure:
    """Sequence numbers of sent data and received ACKs against time, one
    panel per flow (the first ``max_flows`` the packet log kept)."""
    names = flow_names(results)
    mss = flow_mss(results)
    styles = flow_style(results)
    log = _within(results.packets, window)
    logged = sorted(set(log["flow"].tolist())) if len(log) else []
    flows = (logged or list(range(len(names))))[:max_flows]
    fig, axes, own = _panels(len(flows), 3.0, ax)
    sent_label, acked_label = TRACES["seq_sent"], TRACES["seq_acked"]
    for ax_, f in zip(axes, flows, strict=False):
        seg = float(mss[f])
        st = styles[f]
        if f in logged:
            g = log[log["flow"] == f]
            ev = g["event"].astype(str)
            kind = g["kind"].astype(str)
            sent = g[(ev == "send") & (kind == "data")]
            rtx = g[ev == "retransmit"]
            acks = g[(ev == "ack") & (kind == "ack")]
            drops = g[(ev == "drop") & ~g["is_ack"]]
            ax_.plot(sent["time"], sent["seq"] / seg, ".", ms=2, color=st.color, label="sent")
            ax_.plot(acks["time"], acks["seq"] / seg, "-", lw=0.8, color=GREY, label="ACK received")
            if len(rtx):
                ax_.plot(
                    rtx["time"],
                    rtx["seq"] / seg,
                    "o",
                    ms=4,
                    mfc="none",
                    color=TOTAL,
                    label=TRACES["rtx"],
                )
            if len(drops):
                ax_.plot(
                    drops["time"], drops["seq"] / seg, "x", ms=4, color="black", label="dropped"
                )
        else:
            s = _within(results.series[results.series["flow"] == f], window)
            sent_total = s["bytes_sent"] + 0.0
            ax_.plot(s["time"], sent_total / seg, ls=st.linestyle, color=st.color, label=sent_label)
            ax_.plot(s["time"], s["bytes_acked"] / seg, "--", color=GREY, label=acked_label)
        ax_.set_ylabel(FIGURES["sequence"]["y"])
        ax_.set_title(f"{names[f]} (MSS {mss[f]} B)")
        ax_.legend(loc="upper left", markerscale=2)
    _mark_events(axes, results, window)
    return _finish(fig, axes, results, "sequence", path, own)


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


def plot_rate(
    results: Results, path: Path | None = None, window: TimeRange = None, *, ax: Target = None
) -> Figure:
    """Goodput (first panel) and sending rate (second panel) per flow, each
    averaged over :data:`wavelab.analysis.RATE_WINDOW`, with the
    bottleneck's capacity as it changed; values far above it (a release
    after a long hole) are drawn off scale at the top, marked with a
    triangle."""
    g = _within(goodput_and_send_rate(results.series), window)
    names = flow_names(results)
    styles = flow_style(results)
    fig, axes, own = _panels(2, 3.2, ax)
    columns = ["goodput", "send_rate"][: len(axes)]
    for f in sorted(set(g["flow"].tolist())):
        part = g[g["flow"] == f]
        st = styles[f]
        for ax_, column in zip(axes, columns, strict=True):
            ax_.plot(
                part["time"], part[column] / 1e6, ls=st.linestyle, color=st.color, label=names[f]
            )
    if len(g) and len(names) > 1:
        total = g.groupby("time")["goodput"].sum(min_count=1)
        axes[0].plot(total.index, total / 1e6, color=TOTAL, lw=1, ls=":", label=TRACES["all"])
    cap = bottleneck_capacity(results)
    start, end = window if window is not None else (0.0, None)
    titles = {"goodput": TRACES["goodput"], "send_rate": "sending rate (with retransmissions)"}
    for ax_, column in zip(axes, columns, strict=True):
        if cap is not None:
            xs, ys = cap.steps(start, end)
            ax_.plot(
                xs,
                np.asarray(ys) / 1e6,
                ls="--",
                color=GREY,
                lw=0.9,
                label=f"{TRACES['capacity']} ({cap.name})",
            )
            values = g[column].to_numpy(dtype=float)
            if column == "goodput" and len(names) > 1 and len(g):
                values = np.append(values, g.groupby("time")["goodput"].sum().to_numpy())
            top = rate_ceiling(float(np.max(cap.rates)), values)
            if top is not None:
                ax_.set_ylim(0, top / 1e6)
                off = g[g[column] > top]
                if len(off):
                    ax_.plot(
                        off["time"],
                        np.full(len(off), top / 1e6 * 0.985),
                        "^",
                        ms=4,
                        color=TOTAL,
                        label=f"{TRACES['off_scale']} (up to {off[column].max() / 1e6:.1f} Mbit/s)",
                    )
        ax_.set_ylabel(FIGURES["rate"]["y"])
        ax_.set_title(f"{titles[column]}, over {RATE_WINDOW:g} s")
        ax_.legend(loc="upper right")
    _mark_events(axes, results, window)
    return _finish(fig, axes, results, "rate", path, own)


def _state_bands(ax: Axes, times: np.ndarray[Any, Any], states: pd.Series) -> None:
    """Shades every span of a recovery state other than open, each state
    labelled once (for the legend)."""
    codes = states.astype(str).to_numpy()
    if not len(codes):
        return
    start = 0
    labelled: set[str] = set()
    for i in range(1, len(codes) + 1):
        if i == len(codes) or codes[i] != codes[start]:
            state = str(codes[start])
            color = STATE_COLORS.get(state, "#ffffff")
            if state != "open":
                left = times[start - 1] if start > 0 else times[start]
                label = None if state in labelled else state
                labelled.add(state)
                ax.axvspan(left, times[i - 1], color=color, lw=0, zorder=0, label=label)
            start = i


def plot_cwnd(
    results: Results,
    path: Path | None = None,
    max_flows: int = 4,
    window: TimeRange = None,
    *,
    ax: Target = None,
) -> Figure:
    """Congestion window and ssthresh per flow (one panel each, the first
    ``max_flows``), shaded by recovery state."""
    names = flow_names(results)
    mss = flow_mss(results)
    styles = flow_style(results)
    flows = sorted(set(results.series["flow"].tolist()))[:max_flows]
    fig, axes, own = _panels(max(1, len(flows)), 2.6, ax)
    for ax_, f in zip(axes, flows, strict=False):
        s = _within(results.series[results.series["flow"] == f], window)
        seg = float(mss[f])
        st = styles[f]
        times = s["time"].to_numpy()
        _state_bands(ax_, times, s["state"])
        ax_.plot(
            times, s["cwnd"] / seg, lw=1, ls=st.linestyle, color=st.color, label=TRACES["cwnd"]
        )
        ax_.plot(times, s["ssthresh"] / seg, lw=1, ls="--", color=TOTAL, label=TRACES["ssthresh"])
        ax_.plot(
            times, s["in_flight"] / seg, lw=0.6, color=GREY, alpha=0.7, label=TRACES["in_flight"]
        )
        ax_.set_ylabel(FIGURES["window"]["y"])
        ax_.set_title(f"{names[f]} (shaded: its recovery states)")
        ax_.legend(loc="upper right", ncols=2)
        finite = np.concatenate([s["cwnd"].to_numpy() / seg, s["in_flight"].to_numpy() / seg])
        if len(finite):
            ax_.set_ylim(0, max(4.0, float(np.nanmax(finite)) * 1.15))
    _mark_events(axes, results, window)
    return _finish(fig, axes, results, "window", path, own)


def plot_rtt(
    results: Results, path: Path | None = None, window: TimeRange = None, *, ax: Target = None
) -> Figure:
    """Smoothed RTT and latest RTT sample (first panel) and RTO (second
    panel) per flow."""
    names = flow_names(results)
    styles = flow_style(results)
    series = _within(results.series, window)
    fig, axes, own = _panels(2, 3.0, ax)
    for f in sorted(set(series["flow"].tolist())):
        s = series[series["flow"] == f]
        st = styles[f]
        label = names[f]
        axes[0].plot(
            s["time"], s["srtt"] * 1e3, lw=1, ls=st.linestyle, color=st.color,
            label=f"{label} {TRACES['srtt']}",
        )  # fmt: skip
        axes[0].plot(s["time"], s["rtt"] * 1e3, lw=0.5, alpha=0.5, color=st.color)
        if len(axes) > 1:
            axes[1].plot(s["time"], s["rto"], lw=1, ls=st.linestyle, color=st.color, label=label)
    axes[0].set_ylabel(FIGURES["rtt"]["y"])
    axes[0].set_title(f"smoothed RTT (thin: {TRACES['rtt']})")
    if len(axes) > 1:
        axes[1].set_ylabel("s")
        axes[1].set_title(f"retransmission timeout ({TRACES['rto']})")
    for ax_ in axes:
        ax_.legend(loc="upper right")
    _mark_events(axes, results, window)
    return _finish(fig, axes, results, "rtt", path, own)


def plot_queues(
    results: Results, path: Path | None = None, window: TimeRange = None, *, ax: Target = None
) -> Figure | None:
    """Queue length (packets) of the link directions that ever queued;
    None when none did."""
    q = _within(results.queues, window)
    if not len(q):
        return None
    busy = results.links[results.links["max_queue_packets"] > 0]["dir"].tolist()
    if not busy:
        return None
    fig, axes, own = _panels(1, 3.2, ax)
    for d in busy:
        part = q[q["dir"] == d]
        axes[0].plot(part["time"], part["packets"], lw=1, label=str(part["link"].iloc[0]))
    axes[0].set_ylabel(FIGURES["queue"]["y"])
    _mark_events(axes, results, window)
    axes[0].legend(loc="upper right")
    return _finish(fig, axes, results, "queue", path, own)


def plot_queue_delay(
    results: Results, path: Path | None = None, window: TimeRange = None, *, ax: Target = None
) -> Figure | None:
    """Queue delay over time of each link direction a queue discipline runs:
    the queue series' ``sojourn`` (the time the packet most recently
    dequeued waited, in ms); None when no direction has a discipline (a
    drop-tail direction's sojourn is NaN)."""
    q = _within(results.queues, window)
    if not len(q) or "sojourn" not in q:
        return None
    managed = [d for d, part in q.groupby("dir", sort=True) if part["sojourn"].notna().any()]
    if not managed:
        return None
    fig, axes, own = _panels(1, 3.2, ax)
    for d in managed:
        part = q[q["dir"] == d]
        axes[0].plot(part["time"], part["sojourn"] * 1e3, lw=1, label=str(part["link"].iloc[0]))
    axes[0].set_ylabel(FIGURES["queue-delay"]["y"])
    _mark_events(axes, results, window)
    axes[0].legend(loc="upper right")
    return _finish(fig, axes, results, "queue-delay", path, own)


# Variables measured in seconds are drawn in milliseconds.
_SECONDS = {"tx_time", "dispersion", "min_rtt", "avg_rtt", "delta_rtt", "rt_prop", "rtt_min", "k"}


def plot_algorithm_state(
    results: Results,
    path: Path | None = None,
    window: TimeRange = None,
    max_panels: int = 12,
    *,
    ax: Target = None,
) -> Figure | None:
    """One small panel per algorithm variable (``cc_*`` columns), flows as
    lines; None when the run has none. Given ``ax``, as many variables as
    axes are drawn."""
    series = _within(results.series, window)
    cols = [c for c in series.columns if c.startswith("cc_") and series[c].notna().any()]
    cols = cols[:max_panels]
    if not cols:
        return None
    names = flow_names(results)
    styles = flow_style(results)
    ncols = 3 if len(cols) > 4 else len(cols)
    own = ax is None
    if ax is None:
        nrows = (len(cols) + ncols - 1) // ncols
        width = plt.rcParams["figure.figsize"][0]
        panel = plt.rcParams["figure.figsize"][1] * 2.6 / 3.2
        fig, grid = plt.subplots(
            nrows, ncols, figsize=(width, panel * nrows), sharex=True, squeeze=False
        )
        axes = [a for row in grid for a in row]
    else:
        fig, axes, _ = _panels(len(cols), 2.6, ax)
        cols = cols[: len(axes)]
    for ax_, col in zip(axes, cols, strict=False):
        var = col[3:]
        scale, unit = (1e3, " (ms)") if var in _SECONDS else (1.0, "")
        for f in sorted(set(series["flow"].tolist())):
            part = series[series["flow"] == f]
            if part[col].notna().any():
                st = styles[f]
                ax_.plot(
                    part["time"], part[col] * scale, lw=0.9, ls=st.linestyle, color=st.color,
                    label=names[f],
                )  # fmt: skip
        ax_.set_title(var + unit)
    _mark_events(axes[: len(cols)], results, window)
    for ax_ in axes[len(cols) :]:
        ax_.set_visible(False)
    axes[0].legend(loc="upper right")
    bottom = axes[-ncols:] if own else axes[-1:]
    return _finish(fig, axes, results, "algorithm", path, own, bottom)


def plot_jain(
    results: Results, path: Path | None = None, window: TimeRange = None, *, ax: Target = None
) -> Figure | None:
    """Jain's fairness index of the flows' goodputs (over 1 s windows)
    against time, for runs of two flows or more; None otherwise."""
    if len(results.flows) < 2:
        return None
    jain = jain_over_time(results.series[["time", "flow", "bytes_delivered"]])
    if window is not None:
        jain = jain[(jain.index >= window[0]) & (jain.index <= window[1])]
    fig, axes, own = _panels(1, 3.2, ax)
    ax_ = axes[0]
    ax_.plot(jain.index, jain.to_numpy(), lw=1, color=TOTAL)
    n = len(results.flows)
    ax_.axhline(1 / n, ls=":", color=GREY, lw=0.8, label=f"1/n = {1 / n:.2f}: one flow has all")
    ax_.set_ylim(0, 1.05)
    ax_.set_ylabel(FIGURES["jain"]["y"])
    ax_.set_title(f"fairness of {n} flows' goodput over 1 s windows")
    ax_.legend(loc="lower right")
    _mark_events(axes, results, window)
    return _finish(fig, axes, results, "jain", path, own)


def plot_rtt_cdf(
    results: Results, path: Path | None = None, *, ax: Axes | None = None
) -> Figure | None:
    """The distribution of every RTT sample each flow's sender took, as a
    CDF per flow (and of all flows together with two or more), from the
    run's ``rtt_distribution`` (:func:`wavelab.analysis.rtt_cdf`); the
    median and the 95th percentile of each flow marked with the flow's
    algorithm's marker (filled: median, open: p95). None without samples
    (an emulation)."""
    dist = results.rtt_distribution
    if not len(dist):
        return None
    names = flow_names(results)
    styles = flow_style(results)
    fig, axes, own = _panels(1, 3.6, ax)
    ax_ = axes[0]
    for f in sorted(set(dist["flow"].tolist())):
        c = rtt_cdf(dist, f)
        st = styles[f]
        ax_.step(
            c["rtt"] * 1e3, c["cdf"], where="post", lw=1.2, ls=st.linestyle, color=st.color,
            label=names[f],
        )  # fmt: skip
        row = results.flows.iloc[f]
        for q, level, face in (("rtt_p50", 0.5, st.color), ("rtt_p95", 0.95, "none")):
            at = float(row[q]) * 1e3
            if np.isfinite(at):
                ax_.plot([at], [level], st.marker, ms=4, mfc=face, color=st.color)
    if len(names) > 1:
        c = rtt_cdf(dist)
        ax_.step(
            c["rtt"] * 1e3, c["cdf"], where="post", lw=1, ls=":", color=TOTAL,
            label=TRACES["all"],
        )  # fmt: skip
    ax_.axhline(0.95, ls=":", color=GREY, lw=0.8)
    ax_.set_ylim(0, 1.02)
    ax_.set_ylabel(FIGURES["rtt-cdf"]["y"])
    ax_.set_title("RTT of every sample (filled marker: median, open: p95)")
    ax_.legend(loc="lower right")
    return _finish(fig, axes, results, "rtt-cdf", path, own)


def plot_all(
    results: Results,
    directory: str | Path,
    window: TimeRange = None,
    fmt: str = "png",
    dpi: int = 110,
    style_name: str = "wavelab",
) -> list[Path]:
    """Writes every default plot into ``directory`` (only the simulated-time
    ``window`` if given) as ``fmt`` (png, pdf or svg) at ``dpi`` in the
    matplotlib style ``style_name`` (``wavelab`` or ``paper``:
    :data:`wavelab.plot.style.STYLES`); returns the files."""
    fmt = figure_format(fmt)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def put(name: str, fig: Figure | None) -> None:
        if fig is not None:
            written.append(out / f"{name}.{fmt}")

    with figure_dpi(dpi), style(style_name):
        put("sequence", plot_sequence(results, out / f"sequence.{fmt}", window=window))
        put("rate", plot_rate(results, out / f"rate.{fmt}", window=window))
        put("cwnd", plot_cwnd(results, out / f"cwnd.{fmt}", window=window))
        put("rtt", plot_rtt(results, out / f"rtt.{fmt}", window=window))
        put("queue", plot_queues(results, out / f"queue.{fmt}", window=window))
        put(
            "queue-delay",
            plot_queue_delay(results, out / f"queue-delay.{fmt}", window=window),
        )
        put("algorithm", plot_algorithm_state(results, out / f"algorithm.{fmt}", window=window))
        put("jain", plot_jain(results, out / f"jain.{fmt}", window=window))
        put("rtt-cdf", plot_rtt_cdf(results, out / f"rtt-cdf.{fmt}"))
    return written
