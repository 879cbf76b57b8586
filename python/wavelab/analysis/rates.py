"""Rates over time: goodput and sending rate per flow averaged over a window
(what the rate plots and the report draw), and Jain's fairness index of the
flows' goodputs over time."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

RATE_WINDOW = 1.0
"""Seconds over which the plots and the report average goodput and sending
rate (:func:`goodput_and_send_rate`). A receiver holds what arrives above a hole and
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


def goodput_and_send_rate(series: pd.DataFrame, window: float = RATE_WINDOW) -> pd.DataFrame:
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
