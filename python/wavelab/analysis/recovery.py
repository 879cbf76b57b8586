"""Metrics computed from a run's time series.

Recovery time after a handover (the DCNET 2016 study's metric, defined
exactly):

* ``R_ss`` is the flow's own steady-state rate on the new link: the rate
  averaged over the second half of a separate run that uses only the new link
  (same length, no handover);
* after the link returns at ``t0 = T + HT``, the rate over a sliding 1-second
  window is computed from the bytes counted *after* ``t0`` only (bytes from
  before the handover would make a short outage look recovered at once; a
  window that starts before ``t0`` counts nothing before it, so a recovery
  in less than a second needs more than ``R_ss`` while the window fills);
* the recovery time is the first sample time ``t >= t0`` at which that rate
  reaches ``0.9 R_ss``, minus ``t0``; a run that never gets there is "not
  recovered" within its horizon.

The *sustained* variant (``hold`` seconds) also requires the windowed rate to
stay at or above ``0.9 R_ss`` at every sample of the following ``hold``
seconds: a slow start that crosses the target and then overflows the buffer
into a long loss recovery is not counted as recovered at the crossing.

The same definition applies to three byte counts, which :func:`recovery`
computes side by side: the receiver's in-order delivery (goodput, the
primary metric), the bytes crossing the new bottleneck (a SACK receiver can
release a buffered backlog in one burst and make goodput look recovered
early; the link's bytes cannot), and the sender's transmissions
(retransmissions included, the rate the papers plot).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from wavelab.results import Results

METRICS = ("goodput", "bottleneck", "sender")
"""The byte counts the recovery time is computed on."""

RATE_WINDOW = 1.0
"""Seconds over which the plots and the report average goodput and sending
rate (:func:`flow_rates`). A receiver holds what arrives above a hole and
releases it in one step when the retransmission fills it: over one
sampling interval that step reads as a rate the link never had (18.1 Mbit/s
on the demo's 10 Mbit/s link over 100 ms, 1,008 Mbit/s on the 2 Mbit/s link
of ``dcnet2016-handover`` over 50 ms). A fast recovery holds data for about
one RTT (under 0.5 s on every shipped scenario), so over 1 s the release is
spread over the time the data actually arrived (the demo's peak is then
10.6 Mbit/s). It is also the window of the DCNET 2016 recovery time and of
Jain's index over time. A hole kept open for many seconds still shows: in
``dcnet2016-handover`` NewReno without SACK repairs its slow-start
overshoot's losses one per RTT, and the receiver holds 6.3 MB from 2.5 s to
29.25 s (51.3 Mbit/s over 1 s at the release). No window short enough to
show a run's dynamics hides that, and it should not: in-order delivery did
stall; the plots draw such values off scale rather than let them set the
axis (:func:`rate_ceiling`). The raw per-sample rates stay in
:meth:`wavelab.Results.goodput` and the series table."""


@dataclass(frozen=True)
class Recovery:
    """The recovery time on one byte count."""

    seconds: float | None
    """Seconds from ``t0`` to recovery, or None if not recovered."""
    horizon: float
    """How long after ``t0`` the run went on."""
    target: float
    """``fraction * R_ss`` in bit/s."""

    def __str__(self) -> str:
        if self.seconds is None:
            return f"not recovered (> {self.horizon:.0f} s)"
        return f"{self.seconds:.1f} s"


def cumulative(res: Results, metric: str, flow: int = 0, link_dir: int = 2) -> pd.Series:
    """The cumulative byte count of ``metric`` over time (seconds):
    ``goodput``: bytes the receiver delivered in order; ``sender``: bytes the
    sender transmitted, retransmissions included; ``bottleneck``: bytes that
    crossed link direction ``link_dir`` (IP bytes)."""
    if metric == "bottleneck":
        q = res.queues[res.queues["dir"] == link_dir]
        return pd.Series(
            q["delivered_bytes"].to_numpy(dtype=float), index=q["time"].to_numpy(dtype=float)
        )
    s = res.series[res.series["flow"] == flow]
    if metric == "goodput":
        values = s["bytes_delivered"].to_numpy(dtype=float)
    elif metric == "sender":
        values = (s["bytes_sent"] + s["bytes_retransmitted"]).to_numpy(dtype=float)
    else:
        raise ValueError(f"{metric!r} is not one of {', '.join(METRICS)}")
    return pd.Series(values, index=s["time"].to_numpy(dtype=float))


def steady_rate(series: pd.Series) -> float:
    """Mean rate (bit/s) over the second half of a cumulative byte series."""
    t = series.index.to_numpy(dtype=float)
    v = series.to_numpy(dtype=float)
    end = float(t[-1])
    mid = end / 2
    i = int(np.searchsorted(t, mid, side="left"))
    return float((v[-1] - v[i]) * 8 / (end - t[i]))


def recovery_time(
    series: pd.Series,
    t0: float,
    r_ss: float,
    fraction: float = 0.9,
    window: float = 1.0,
    hold: float = 0.0,
) -> Recovery:
    """The recovery time of a cumulative byte series after ``t0`` (see the
    module's description). With ``hold`` > 0, the windowed rate must also stay
    at or above the target at every sample of the following ``hold`` seconds
    (a sustained recovery, closer to "reached the steady state")."""
    t = series.index.to_numpy(dtype=float)
    v = series.to_numpy(dtype=float)
    target = fraction * r_ss
    horizon = float(t[-1]) - t0
    eps = 1e-9
    i0 = int(np.searchsorted(t, t0 + eps, side="right")) - 1
    if i0 < 0 or i0 + 1 >= len(t):
        return Recovery(None, horizon, target)
    ends = np.arange(i0 + 1, len(t))
    starts = np.maximum(t[ends] - window, t0)
    j = np.maximum(np.searchsorted(t, starts + eps, side="right") - 1, i0)
    rate = (v[ends] - v[j]) * 8 / window
    ok = rate >= target
    if hold > 0:
        # the time of the first failing sample after each sample
        te = t[ends]
        failing = np.where(ok, np.inf, te)
        first_failing = np.minimum.accumulate(failing[::-1])[::-1]
        next_failure = np.append(first_failing[1:], np.inf)
        ok &= (next_failure - te >= hold - eps) & (te[-1] - te >= hold - eps)
    hit = np.flatnonzero(ok)
    if len(hit) == 0:
        return Recovery(None, horizon, target)
    return Recovery(float(t[ends[hit[0]]] - t0), horizon, target)


def recovery(
    run: Results,
    baseline: Results,
    t0: float,
    flow: int = 0,
    link_dir: int = 2,
    hold: float = 0.0,
) -> dict[str, Recovery]:
    """Recovery times on every byte count of :data:`METRICS`; ``baseline`` is
    the run on the new link alone that gives ``R_ss``."""
    out = {}
    for m in METRICS:
        r_ss = steady_rate(cumulative(baseline, m, flow, link_dir))
        out[m] = recovery_time(cumulative(run, m, flow, link_dir), t0, r_ss, hold=hold)
    return out


def jain_over_time(series: pd.DataFrame, window: float = 1.0) -> pd.Series:
    """Jain's fairness index of the flows' goodputs against time: at each
    sampling instant ``t`` (from ``window`` on), each flow's goodput over
    ``[t - window, t]`` (its delivered bytes at both ends, interpolated
    between samples), over the flows that had started by ``t - window``.
    ``series`` needs the columns ``time``, ``flow`` and ``bytes_delivered``.
    A window rather than the sampling interval, so that a receiver releasing
    a buffered backlog in one sample does not swing the index; NaN where
    fewer than two flows count or none delivered anything."""
    times = np.unique(np.asarray(series["time"], dtype=float))
    times = times[times >= times[0] + window] if len(times) else times
    rates = []
    for _, g in series.groupby("flow", sort=True):
        t = np.asarray(g["time"], dtype=float)
        # NaN for a flow that had not started a window ago
        rates.append(windowed_rate(t, np.asarray(g["bytes_delivered"], dtype=float), window, times))
    if len(rates) < 2:
        return pd.Series(np.nan, index=times, name="jain")
    x = np.vstack(rates)
    n = np.sum(~np.isnan(x), axis=0)
    total = np.nansum(x, axis=0)
    squares = np.nansum(x * x, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        jain = np.where((n >= 2) & (squares > 0), total**2 / (n * squares), np.nan)
    return pd.Series(jain, index=times, name="jain")


def windowed_rate(
    times: np.ndarray[Any, Any],
    cumulative: np.ndarray[Any, Any],
    window: float = RATE_WINDOW,
    at: np.ndarray[Any, Any] | None = None,
) -> np.ndarray[Any, Any]:
    """The rate (bit/s) of a cumulative byte count over ``[t - window, t]``
    at each time of ``at`` (default: ``times``), the count interpolated
    linearly between its samples; NaN before ``times[0] + window`` (the
    window would reach back before the first sample)."""
    t = np.asarray(times, dtype=float)
    b = np.asarray(cumulative, dtype=float)
    when = t if at is None else np.asarray(at, dtype=float)
    if not len(t):
        return np.full(len(when), np.nan)
    rate: np.ndarray[Any, Any] = (np.interp(when, t, b) - np.interp(when - window, t, b)) * 8
    rate /= window
    rate[when - window < t[0] - 1e-9] = np.nan
    return rate


def flow_rates(series: pd.DataFrame, window: float = RATE_WINDOW) -> pd.DataFrame:
    """Per flow and sample, goodput and sending rate (retransmissions
    included), bit/s, each averaged over ``window`` seconds
    (:data:`RATE_WINDOW`; :func:`windowed_rate`): what the rate plots and the
    report draw. ``series`` needs ``time``, ``flow``, ``bytes_delivered``,
    ``bytes_sent`` and ``bytes_retransmitted``."""
    parts = []
    for flow, g in series.groupby("flow", sort=True):
        g = g.sort_values("time")
        t = g["time"].to_numpy(dtype=float)
        sent = (g["bytes_sent"] + g["bytes_retransmitted"]).to_numpy(dtype=float)
        parts.append(
            pd.DataFrame(
                {
                    "time": t,
                    "flow": flow,
                    "goodput": windowed_rate(t, g["bytes_delivered"].to_numpy(float), window),
                    "send_rate": windowed_rate(t, sent, window),
                }
            )
        )
    if not parts:
        return pd.DataFrame(columns=["time", "flow", "goodput", "send_rate"])
    return pd.concat(parts, ignore_index=True)


def rate_ceiling(peak_capacity: float, values: np.ndarray[Any, Any]) -> float | None:
    """The top of a rate axis (bit/s) that keeps the capacity in view: 1.25
    times the highest capacity when some value exceeds 1.5 times it (a
    release after a long hole, see :data:`RATE_WINDOW`), drawn off scale;
    None (let the plot choose) otherwise or without a capacity."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not peak_capacity > 0 or not len(v) or float(v.max()) <= 1.5 * peak_capacity:
        return None
    return 1.25 * peak_capacity


def rtt_cdf(distribution: pd.DataFrame, flow: int | None = None) -> pd.DataFrame:
    """The CDF of the RTT samples of ``flow`` (or of all flows together)
    from a run's ``rtt_distribution`` table: columns ``rtt`` (seconds, each
    bucket's upper edge) and ``cdf`` (the fraction of samples below it),
    starting at the first bucket's lower edge with 0. Exact at every point;
    between two points the samples lie within one bucket (at most 1/64 of
    its lower edge wide)."""
    d = distribution if flow is None else distribution[distribution["flow"] == flow]
    if not len(d):
        return pd.DataFrame({"rtt": [], "cdf": []})
    # every flow's buckets share the same edges: sum the counts per bucket
    per = d.groupby(["rtt_low", "rtt_high"], sort=True)["count"].sum()
    lows = per.index.get_level_values(0).to_numpy(dtype=float)
    highs = per.index.get_level_values(1).to_numpy(dtype=float)
    counts = per.to_numpy(dtype=float)
    cdf = np.cumsum(counts) / counts.sum()
    return pd.DataFrame({"rtt": np.append(lows[:1], highs), "cdf": np.append(0.0, cdf)})
