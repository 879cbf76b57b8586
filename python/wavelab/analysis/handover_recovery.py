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
from typing import Protocol

import numpy as np
import pandas as pd

METRICS = ("goodput", "bottleneck", "sender")
"""The byte counts the recovery time is computed on."""


class RunTables(Protocol):
    """What :func:`cumulative` reads of a run: its ``series`` and ``queues``
    tables (:class:`wavelab.results.Results` has them)."""

    @property
    def series(self) -> pd.DataFrame: ...

    @property
    def queues(self) -> pd.DataFrame: ...


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


def cumulative(res: RunTables, metric: str, flow: int = 0, link_dir: int = 2) -> pd.Series:
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
    run: RunTables,
    baseline: RunTables,
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
