"""Per-run metrics of a sweep: one row per run, one column per figure.

From the flows table of each run:

* totals over the run's flows: ``goodput_mbps`` (sum), ``retransmissions``,
  ``fast_retransmits``, ``rto_expiries``, ``spurious_retransmissions``, the
  ECN counters ``ecn_echoes`` (ACKs with ECN-Echo the senders got),
  ``ecn_reductions`` (the window reductions they caused) and
  ``ce_received`` (data segments that reached the receivers marked CE),
  ``retransmission_rate`` (retransmitted segments / segments sent), and
  ``jain`` (Jain's fairness index of the TCP flows' goodputs, with 2 of them or more);
* the RTT over every sample every sender took (RFC 6298 measurements, all
  flows together): ``rtt_mean_ms``, ``rtt_p50_ms``, ``rtt_p95_ms``,
  ``rtt_p99_ms`` (the simulator counts the samples in a histogram: a
  percentile is within 0.8 % of the exact one, the mean is exact);
* at the bottleneck, the link direction where packets waited longest on
  average (ties: the slowest), named in ``bottleneck``: the queueing delay
  of every packet it sent, ``queue_delay_mean_ms``, ``queue_delay_p95_ms``,
  ``queue_delay_p99_ms``; its ``loss_rate`` (packets dropped there, by the
  queue, its discipline, the loss model or an outage, / packets offered to
  it); the packets its queue discipline dropped as congestion signals,
  ``aqm_drops``, and set CE on, ``marks`` (both 0 on drop-tail); and its
  ``utilisation``: the bits it delivered to the far end (IP bytes) / the
  integral of its capacity over the run, where the capacity follows every
  rate schedule, handover and trace and is 0 while the link is down
  (:mod:`wavelab.analysis.capacity`), so a link used fully whenever it was up has
  utilisation 1 whatever its rate did; ``capacity_mb`` is that integral
  (in megabytes, as ``delivered_mb``) and ``up_s`` the seconds the link was
  up. NaN when the
  simulator alone knows when the link was down (an ``outage_process``);
* per flow, when a run has at most :data:`PER_FLOW_LIMIT` flows: the same
  counters plus ``delivered_mb``, ``min_rtt_ms``, ``completion_s``,
  ``retransmission_rate`` and the flow's own ``rtt_mean_ms``,
  ``rtt_p50_ms``, ``rtt_p95_ms`` and ``rtt_p99_ms``, in columns named
  ``<figure>:<flow name>`` (``goodput_mbps:first``);
* of a scenario with workloads, the flows' figures are those of its own
  flows (:func:`own_flows`), and its transfers have theirs:
  ``transfers``, ``transfers_completed``, ``fct_mean_s``, ``fct_p50_s``,
  ``fct_p99_s``, ``slowdown_mean``, ``slowdown_p99``
  (:func:`wavelab.analysis.transfers.transfer_metrics`).

Every name ends in its unit (``_ms``, ``_s``, ``_mbps``, ``_mb``), or is a
count, a ratio (``_rate``, ``utilisation``, ``jain``: 0 to 1) or a name;
:func:`unit` gives it, and the sweep's Parquet files carry it as field
metadata.

When the scenario has a handoff with a transfer measurement
(``handoffs[].transfer``, MobiWac 2009's metric), from the handoffs table:
``transfer_s``, the time from the first such handoff until the slowest flow
it moved had the packets acknowledged (NaN if one did not within the run),
and ``transfer_packets``.

When the scenario has a handover, the recovery time of
:func:`wavelab.analysis.handover_recovery.recovery_time` (the DCNET 2016 definition: receiver
goodput over a 1 s window reaching 0.9 R_ss after T + HT), for the first
handover of the first link that has one:

* ``R_ss`` comes from a **baseline run**: the same scenario with that link
  switched to the handover's new settings from the start and no handovers on
  it (:func:`baseline_scenario`); the sweep runs it too, once per distinct
  baseline (it is an ordinary run of the store);
* ``recovery_s`` is computed on the sum of the flows' goodput,
  ``recovery_s:<flow>`` per flow; ``recovery_sustained_s`` also requires the
  rate to stay there for :data:`HOLD` seconds; NaN means not recovered within
  ``recovery_horizon_s``; ``handover_s`` is when the handover happened (a
  ``"steady"`` handover's time comes from the run).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from wavelab.analysis.capacity import Table, bottleneck_direction, direction_capacity
from wavelab.analysis.handover_recovery import Recovery, recovery_time, steady_rate
from wavelab.scenario.flow_rows import flow_row_specs
from wavelab.scenario.loading import Scenario

PER_FLOW_LIMIT = 16
"""Runs with more flows get only the totals (and the recovery on their sum)."""
HOLD = 10.0
"""Seconds the rate must stay recovered for ``recovery_sustained_s``."""
COUNTERS = (
    "retransmissions",
    "fast_retransmits",
    "rto_expiries",
    "spurious_retransmissions",
    "ecn_echoes",
    "ecn_reductions",
    "ce_received",
)
VERSION = 5
"""Changes when the metrics computed by :func:`flow_metrics` change (stored
metrics of another version are recomputed from the run's files)."""
RTT: tuple[tuple[str, str], ...] = tuple(
    (f, f"{f}_ms") for f in ("rtt_mean", "rtt_p50", "rtt_p95", "rtt_p99")
)
"""The RTT figures: (field of the flows table and of the run figures, metric)."""


def _num(x: Any) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v


def _count(x: Any) -> int | float:
    """A counter as an int; NaN where it is missing (a counter the driver
    cannot know, such as one the kernel does not keep in an emulation)."""
    return math.nan if pd.isna(x) else int(x)


def _total(values: Any) -> int | float:
    """The sum of a counter column; NaN if a flow's value is missing (a
    total of the flows that have one would pass for all of them)."""
    if pd.isna(values).any():
        return math.nan
    return int(values.sum())


UDP_PREFIX = "udp-"
"""The flows table's ``algorithm`` of a UDP flow starts with it (then its
pattern: ``udp-voice``, ``udp-cbr``, ...); a ping flow's is ``ping``."""


def is_datagram_flow(algorithm: str) -> bool:
    """Whether a flows table's ``algorithm`` is a UDP or ping flow's (no
    congestion control: its rate is its pattern's)."""
    return algorithm.startswith(UDP_PREFIX) or algorithm == "ping"


def jain(values: list[float]) -> float:
    """Jain's fairness index (NaN for fewer than two values or all zero)."""
    x = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if len(x) < 2 or float((x * x).sum()) == 0.0:
        return math.nan
    return float(x.sum() ** 2 / (len(x) * (x * x).sum()))


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan


def flow_metrics(
    flows: Table,
    links: Table | None = None,
    run: Mapping[str, Any] | None = None,
    normalized: Mapping[str, Any] | None = None,
    handovers: Table | None = None,
    handoffs: Table | None = None,
) -> dict[str, Any]:
    """The figures of one run from its flows table, its links table, its run
    figures (``Results.run``), its normalised scenario and its handovers and
    handoffs tables (see the module description; without links, run and
    scenario, only the flows' figures). The tables are DataFrames, or their
    columns by name (:func:`wavelab.results.tables.table_columns`, which a sweep's
    worker passes: building DataFrames of a few rows took longer than the
    short runs of a study): the same figures, type for type."""
    flows = own_flows(flows, normalized)
    names = [str(n) for n in flows["name"]]
    out: dict[str, Any] = {"metrics_version": VERSION, "flows": len(names)}
    goodputs = [_num(g) / 1e6 for g in flows["goodput"]]
    out["goodput_mbps"] = float(np.nansum(goodputs)) if goodputs else math.nan
    for c in COUNTERS:
        out[c] = _total(flows[c]) if c in flows else math.nan
    out["retransmission_rate"] = _ratio(
        float(_total(flows["retransmissions"])), float(_total(flows["segments_sent"]))
    )
    # fairness among the congestion-controlled flows: a UDP flow's rate is
    # its pattern's, not a share it competes for; an MPTCP connection's
    # subflows together are one flow
    tcp = [not is_datagram_flow(str(a)) for a in flows["algorithm"]]
    out["jain"] = jain(connection_goodputs(goodputs, tcp, normalized))
    for field, column in RTT:
        out[column] = _num((run or {}).get(field)) * 1e3
    if links is not None and normalized is not None and run is not None:
        out.update(
            bottleneck_metrics(links, normalized, _num(run.get("simulated")), handovers, handoffs)
        )
    if len(names) <= PER_FLOW_LIMIT:
        nan = [math.nan] * len(names)

        def values_of(name: str) -> list[Any]:
            return list(flows[name]) if name in flows else nan

        per_flow = {c: values_of(c) for c in COUNTERS}
        delivered, min_rtt = values_of("bytes_delivered"), values_of("min_rtt")
        completion = values_of("completion_time")
        rates = retransmission_and_rtt(flows)
        for i, name in enumerate(names):
            out[f"goodput_mbps:{name}"] = goodputs[i]
            out[f"delivered_mb:{name}"] = _num(delivered[i]) / 1e6
            for c in COUNTERS:
                out[f"{c}:{name}"] = _count(per_flow[c][i])
            out[f"min_rtt_ms:{name}"] = _num(min_rtt[i]) * 1e3
            for col, values in rates.items():
                out[f"{col}:{name}"] = values[i]
            out[f"completion_s:{name}"] = _num(completion[i])
    return out


def own_flows(flows: Table, normalized: Mapping[str, Any] | None) -> Table:
    """The rows of ``flows`` that are the scenario's own flows (replicas
    expanded, then its MPTCP connections' further subflows), without its
    workloads' transfers, which come between them
    (:mod:`wavelab.analysis.transfers` has their figures); ``flows`` itself
    when the scenario has no workloads or is not given."""
    if normalized is None or not normalized.get("workloads"):
        return flows
    own = sum(int(f.get("count", 1)) for f in normalized.get("flows", []))
    joins = len(flow_row_specs(normalized)) - own
    n = len(flows["name"])
    keep = list(range(own)) + list(range(n - joins, n))
    if isinstance(flows, pd.DataFrame):
        return flows.iloc[keep]
    return {c: [v[k] for k in keep] for c, v in flows.items()}


def connection_goodputs(
    goodputs: list[float], tcp: list[bool], normalized: Mapping[str, Any] | None
) -> list[float]:
    """The goodputs of the TCP rows (``tcp``) of the scenario's own flows
    (:func:`own_flows`), an MPTCP connection's subflows summed into one
    (rows are matched to their flows by :func:`flow_row_specs`, which needs
    the normalised scenario; without it, each row is a flow)."""
    specs = flow_row_specs(normalized) if normalized is not None else []
    if len(specs) != len(goodputs):
        specs = [{} for _ in goodputs]
    sums: dict[int, float] = {}
    for k, (g, t, spec) in enumerate(zip(goodputs, tcp, specs, strict=True)):
        if not t:
            continue
        if spec.get("mptcp") is None:
            sums[-1 - k] = g  # a flow of its own (NaN stays NaN: jain skips it)
        else:
            sums[id(spec)] = sums.get(id(spec), 0.0) + (0.0 if math.isnan(g) else g)
    return list(sums.values())


def retransmission_and_rtt(flows: Table) -> dict[str, list[float]]:
    """Each flow's ``retransmission_rate`` (retransmitted segments / segments
    sent) and ``rtt_mean_ms``, ``rtt_p50_ms``, ``rtt_p95_ms``, ``rtt_p99_ms``
    (its sender's RTT samples), by metric name, one value per row of the
    flows table (NaN where the table has no such column): the per-flow
    figures of :func:`flow_metrics` and of the run summary
    (:func:`wavelab.results.summary.summary_frame`)."""
    n = len(flows["name"])

    def values_of(name: str) -> list[float]:
        return [_num(v) for v in flows[name]] if name in flows else [math.nan] * n

    sent, retx = values_of("segments_sent"), values_of("retransmissions")
    out = {"retransmission_rate": [_ratio(r, s) for r, s in zip(retx, sent, strict=True)]}
    for field, col in RTT:
        out[col] = [v * 1e3 for v in values_of(field)]
    return out


def handoff_metrics(handoffs: Columns | pd.DataFrame | None) -> dict[str, Any]:
    """``transfer_s`` and ``transfer_packets`` of the first handoff that
    measures a transfer (see the module description); nothing without one."""
    if handoffs is None or "transfer_packets" not in handoffs:
        return {}
    packets = np.asarray(handoffs["transfer_packets"])
    times = np.asarray(handoffs["transfer_time"], dtype=float)
    for p, t in zip(packets, times, strict=True):
        if int(p) > 0:
            return {"transfer_s": float(t), "transfer_packets": int(p)}
    return {}


def bottleneck_metrics(
    links: Table,
    normalized: Mapping[str, Any],
    simulated: float,
    handovers: Table | None = None,
    handoffs: Table | None = None,
) -> dict[str, Any]:
    """Queueing delay, loss rate and utilisation of the bottleneck (the module
    description says which direction that is and how each is defined)."""
    d = bottleneck_direction(links)
    if d is None:
        return {}
    row = int(np.flatnonzero(np.asarray(links["dir"]) == d)[0])
    b = {n: list(links[n])[row] for n in [str(c) for c in links]}
    aqm = _count(b.get("dropped_aqm", 0))
    dropped = float(b["dropped_queue"] + b["dropped_random"] + b["dropped_outage"] + aqm)
    cap = direction_capacity(normalized, d, simulated, handovers, handoffs)
    bits = cap.bits() if cap.known else math.nan
    return {
        "bottleneck": f"{b['link']}:{b['direction']}",
        "queue_delay_mean_ms": _num(b["queue_delay_mean"]) * 1e3,
        "queue_delay_p95_ms": _num(b["queue_delay_p95"]) * 1e3,
        "queue_delay_p99_ms": _num(b["queue_delay_p99"]) * 1e3,
        "loss_rate": _ratio(dropped, float(b["arrived"])),
        "aqm_drops": aqm,
        "marks": _count(b.get("marked", 0)),
        "utilisation": _ratio(float(b["delivered_bytes"]) * 8, bits),
        "capacity_mb": bits / 8e6,
        "up_s": cap.up_seconds() if cap.known else math.nan,
    }


UNITS = (
    ("_ms", "ms"),
    ("_s", "s"),
    ("_mbps", "Mbit/s"),
    ("_mb", "MB"),
    ("_bps", "bit/s"),
    ("_bytes", "B"),
    ("_pkt", "packets"),
)
"""Name endings and the unit they mean."""


def unit(column: str) -> str | None:
    """The unit of a metric or typed parameter column, from the end of its
    name (``rtt_p95_ms`` and ``rtt_p95_ms:first``: ``"ms"``); ``"1"`` for the
    ratios (``_rate``, ``utilisation``, ``jain``, ``slowdown_*``); None for
    counts and names."""
    name = column.split(":", 1)[0]
    for end, u in UNITS:
        if name.endswith(end):
            return u
    if name.endswith("_rate") or name in ("utilisation", "jain") or name.startswith("slowdown"):
        return "1"
    return None


def handover_link(normalized: Mapping[str, Any]) -> int | None:
    """Index of the first link with a handover, or None."""
    for i, link in enumerate(normalized["links"]):
        if link.get("handovers"):
            return i
    return None


def baseline_scenario(sc: Scenario) -> Scenario | None:
    """The scenario whose steady rate is R_ss: the first handover link switched
    to the handover's new settings from the start, without its handovers.
    None if the scenario has no handover."""
    i = handover_link(sc.normalized)
    if i is None:
        return None
    link = sc.normalized["links"][i]
    h = link["handovers"][0]
    changes: dict[str, Any] = {f"links[{i}].handovers": []}
    for f in ("rate", "delay", "queue", "loss"):
        if h.get(f) is None:
            continue
        changes[f"links[{i}].{f}"] = h[f]
        for d in ("forward", "reverse"):
            if (link.get(d) or {}).get(f) is not None:
                # a handover switches both directions, overrides included
                changes[f"links[{i}].{d}.{f}"] = h[f]
    return sc.with_changes(changes)


Columns = Mapping[str, Any]
"""A table as columns: a DataFrame, or a dict of arrays."""


def _cumulative(series: Columns, flow: int | None) -> pd.Series:
    """Cumulative delivered bytes of ``flow`` (or of all flows summed) over time.

    Every flow has a sample at every sampling instant once it has started, so
    the sum over flows at an instant is the sum of that instant's rows."""
    t = np.asarray(series["time"], dtype=float)
    f = np.asarray(series["flow"])
    b = np.asarray(series["bytes_delivered"], dtype=float)
    if flow is not None:
        keep = f == flow
        return pd.Series(b[keep], index=t[keep])
    times, at = np.unique(t, return_inverse=True)
    return pd.Series(np.bincount(at, weights=b, minlength=len(times)), index=times)


def _recovery(run: pd.Series, base: pd.Series, t0: float) -> tuple[float, float, float]:
    if len(run) < 2 or len(base) < 2:
        return math.nan, math.nan, math.nan
    r_ss = steady_rate(base)
    if not r_ss > 0:
        return math.nan, math.nan, float(run.index[-1]) - t0
    first = recovery_time(run, t0, r_ss)
    held = recovery_time(run, t0, r_ss, hold=HOLD)

    def secs(r: Recovery) -> float:
        return math.nan if r.seconds is None else r.seconds

    return secs(first), secs(held), first.horizon


def recovery_metrics(
    series: Columns,
    handovers: Columns,
    baseline_series: Columns,
    flow_names: list[str],
) -> dict[str, Any]:
    """Recovery times after the scenario's first handover (module description).

    ``series`` and ``baseline_series`` need the columns ``time``, ``flow``
    and ``bytes_delivered``; ``handovers`` the columns ``time`` and ``outage``."""
    out: dict[str, Any] = {}
    if handovers is None or "time" not in handovers or not len(handovers["time"]):
        return out
    t = _num(np.asarray(handovers["time"], dtype=float)[0])
    outage = _num(np.asarray(handovers["outage"], dtype=float)[0])
    out["handover_s"] = t
    if math.isnan(t):
        out["recovery_s"] = math.nan
        out["recovery_sustained_s"] = math.nan
        out["recovery_horizon_s"] = math.nan
        return out
    t0 = t + outage
    first, held, horizon = _recovery(
        _cumulative(series, None), _cumulative(baseline_series, None), t0
    )
    out["recovery_s"] = first
    out["recovery_sustained_s"] = held
    out["recovery_horizon_s"] = horizon
    if len(flow_names) <= PER_FLOW_LIMIT:
        for f, name in enumerate(flow_names):
            first, held, _ = _recovery(_cumulative(series, f), _cumulative(baseline_series, f), t0)
            out[f"recovery_s:{name}"] = first
            out[f"recovery_sustained_s:{name}"] = held
    return out
