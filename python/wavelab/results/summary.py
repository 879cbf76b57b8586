"""A run's ``summary.csv`` (one row per flow: the figures people compare
first, and the run's) and ``run.json`` (the normalised scenario and the
run's figures)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from wavelab._util.provenance import code_record
from wavelab.analysis.capacity import Table
from wavelab.analysis.metrics import flow_metrics, retransmission_and_rtt
from wavelab.scenario.loading import Scenario

RUN_COLUMNS = (
    "bottleneck",
    "queue_delay_mean_ms",
    "queue_delay_p95_ms",
    "loss_rate",
    "aqm_drops",
    "marks",
    "utilisation",
    "jain",
)
"""The run's figures in the summary (the same on every flow's row)."""


def summary_frame(
    flows: pd.DataFrame,
    links: Table | None = None,
    run: Mapping[str, Any] | None = None,
    normalized: Mapping[str, Any] | None = None,
    handovers: Table | None = None,
    handoffs: Table | None = None,
    metrics: Mapping[str, Any] | None = None,
    subflows: Table | None = None,
) -> pd.DataFrame:
    """One row per flow of a ``flows`` table: the figures people compare
    first. Per flow: goodput, bytes delivered, the retransmission counters,
    the ECN counters (``ecn_echoes``, ``ecn_reductions``, ``ce_received``) and
    ``retransmission_rate``, the minimum RTT and ``rtt_mean_ms``,
    ``rtt_p50_ms``, ``rtt_p95_ms``, ``rtt_p99_ms`` (its sender's samples),
    completion time. Per run, repeated on each row (:data:`RUN_COLUMNS`; with
    the links table, run figures and normalised scenario): the bottleneck's
    name, queueing delay mean and p95 (ms), ``loss_rate`` (packets dropped
    there / offered), its discipline's ``aqm_drops`` and ``marks`` (CE set),
    and ``utilisation``, and ``jain`` (Jain's index of the
    flows' goodputs; empty for one flow, where it says nothing). Every figure
    comes from :func:`wavelab.analysis.metrics.flow_metrics` and
    :func:`wavelab.analysis.metrics.retransmission_and_rtt`, as in a sweep's
    metrics table; ``metrics``, the run's
    :func:`~wavelab.analysis.metrics.flow_metrics` already
    computed (a sweep's worker has them), replaces the tables for the run's
    figures."""
    f = flows
    rates = retransmission_and_rtt(f)
    out = pd.DataFrame(
        {
            "flow": f["name"],
            "algorithm": f["algorithm"],
            "goodput_mbps": (f["goodput"] / 1e6).round(3),
            "delivered_mb": (f["bytes_delivered"] / 1e6).round(3),
            "retransmissions": f["retransmissions"],
            "fast_retransmits": f["fast_retransmits"],
            "rto_expiries": f["rto_expiries"],
            "spurious_retransmissions": f["spurious_retransmissions"],
            **{c: f[c] for c in ("ecn_echoes", "ecn_reductions", "ce_received") if c in f},
            "retransmission_rate": np.round(rates["retransmission_rate"], 5),
            "min_rtt_ms": (f["min_rtt"] * 1e3).round(2),
            **{c: np.round(rates[c], 2) for c in ("rtt_mean_ms", "rtt_p50_ms", "rtt_p95_ms")},
            "rtt_p99_ms": np.round(rates["rtt_p99_ms"], 2),
            "completion_s": f["completion_time"].round(4),
            **network_columns(f),
        }
    )
    add_subflow_columns(out, subflows)
    if metrics is not None:
        m = metrics
    elif links is None or run is None or normalized is None:
        return out
    else:
        m = flow_metrics(f, links, run, normalized, handovers, handoffs)
    digits = {"queue_delay_mean_ms": 2, "queue_delay_p95_ms": 2, "loss_rate": 5}
    for c in RUN_COLUMNS:
        v = m.get(c, math.nan)
        out[c] = v if isinstance(v, str | int) else round(float(v), digits.get(c, 4))
    return out


NETWORK_COLUMNS = (
    "packets_sent",
    "packets_received",
    "packets_lost",
    "packets_late",
    "owd_mean_ms",
    "owd_p50_ms",
    "owd_p95_ms",
    "owd_p99_ms",
    "jitter_ms",
)
"""The summary's network statistics of a flow's data packets (when the
flows table has them: the simulator's runs)."""


def network_columns(f: pd.DataFrame) -> dict[str, pd.Series]:
    """Per flow, its data packets sent, received and dropped at the
    network (and received late, past a UDP flow's playout deadline, when a
    flow has one), their one-way delay mean and percentiles and their RFC 3550
    interarrival jitter in ms; empty when the flows table lacks them (an
    emulation, or results from before they were measured)."""
    if "owd_mean" not in f:
        return {}
    out: dict[str, pd.Series] = {c: f[c] for c in NETWORK_COLUMNS[:3]}
    if "packets_late" in f and f["packets_late"].notna().any():
        # a UDP flow's packets received past its playout deadline
        out["packets_late"] = f["packets_late"]
    for c in ("owd_mean", "owd_p50", "owd_p95", "owd_p99", "jitter"):
        out[f"{c}_ms"] = (f[c] * 1e3).round(3)
    return out


def run_json(scenario: Scenario, run: dict[str, Any], complete: bool) -> bytes:
    """``run.json`` of a run: the normalised scenario, the run's figures, the
    code that made it (:func:`wavelab._util.provenance.code_record`: the
    version, the native build, the git commit when run from a checkout), and
    the SHA-256 of each trace file the scenario reads (if any)."""
    meta: dict[str, Any] = {
        "scenario": scenario.normalized,
        "run": run,
        "complete": complete,
        "code": code_record(),
    }
    if scenario.traces:
        meta["traces"] = scenario.traces
    return (json.dumps(meta, indent=2) + "\n").encode()


def add_subflow_columns(out: pd.DataFrame, subflows: Table | None) -> None:
    """With Multipath TCP subflows (the ``subflows`` table has rows), adds
    to each flow row its ``connection``, whether it is a ``backup`` subflow
    and its connection's goodput (``conn_goodput_mbps``); nothing otherwise."""
    if subflows is None or len(subflows["flow"]) == 0:
        return
    rows = {int(f): k for k, f in enumerate(subflows["flow"])}
    pick = [rows.get(i) for i in range(len(out))]

    def column(name: str) -> list[Any]:
        values = subflows[name]
        return [None if k is None else values[k] for k in pick]

    out["connection"] = column("connection")
    out["backup"] = column("backup")
    out["conn_goodput_mbps"] = [
        math.nan if g is None else round(float(g) / 1e6, 4) for g in column("conn_goodput")
    ]


def meta_files(
    scenario: Scenario,
    flows: pd.DataFrame,
    run: dict[str, Any],
    complete: bool,
    links: Table | None = None,
    handovers: Table | None = None,
    handoffs: Table | None = None,
    metrics: Mapping[str, Any] | None = None,
    subflows: Table | None = None,
) -> dict[str, bytes]:
    """``summary.csv`` (:func:`summary_frame`; its run columns need
    ``links`` or ``metrics``) and ``run.json`` of a run."""
    summary = summary_frame(
        flows, links, run, scenario.normalized, handovers, handoffs, metrics, subflows
    )
    return {
        "summary.csv": summary.to_csv(index=False).encode(),
        "run.json": run_json(scenario, run, complete),
    }
