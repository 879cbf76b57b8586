"""Flow completion times of a run's workloads, from its ``transfers``
table (one row per transfer: ``workload``, ``flow``, ``flow_index``,
``start``, ``size``, ``completion_time``, ``ideal``, ``slowdown``; times in
seconds, a transfer not completed by the end of the run has no
``completion_time`` and no ``slowdown``).

The ideal completion time is ``2 x base RTT + size x 8 / bottleneck rate``
on the transfer's path as the run starts (a handshake and one round trip
for the data, plus the serialisation at the bottleneck); the slowdown is
completion / ideal (docs/scenarios.md, "Workloads of short transfers")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

FCT_COLUMNS = (
    "workload",
    "transfers",
    "completed",
    "fct_mean_s",
    "fct_p50_s",
    "fct_p99_s",
    "slowdown_mean",
    "slowdown_p99",
)
"""The columns of :func:`transfer_summary`."""


def transfer_summary(transfers: pd.DataFrame) -> pd.DataFrame:
    """One row per workload: its transfers, how many completed, the mean,
    median and 99th percentile of their completion times (seconds) and the
    mean and 99th percentile of their slowdowns, over the completed ones
    (NaN when none completed)."""
    rows = []
    if len(transfers):
        for name, g in transfers.groupby("workload", sort=False):
            fct = g["completion_time"].dropna().to_numpy(dtype=float)
            slow = g["slowdown"].dropna().to_numpy(dtype=float)

            def q(v: np.ndarray, p: float) -> float:
                return float(np.quantile(v, p)) if len(v) else float("nan")

            rows.append(
                {
                    "workload": name,
                    "transfers": len(g),
                    "completed": len(fct),
                    "fct_mean_s": float(fct.mean()) if len(fct) else float("nan"),
                    "fct_p50_s": q(fct, 0.5),
                    "fct_p99_s": q(fct, 0.99),
                    "slowdown_mean": float(slow.mean()) if len(slow) else float("nan"),
                    "slowdown_p99": q(slow, 0.99),
                }
            )
    return pd.DataFrame(rows, columns=list(FCT_COLUMNS))


def _floats(column: Any) -> np.ndarray[Any, Any]:
    """A column (a DataFrame's, nullable, or a native table's array) as
    floats with NaN where it is null."""
    return pd.Series(column, dtype="Float64").to_numpy(dtype=float, na_value=np.nan)


def transfer_metrics(transfers: pd.DataFrame | Mapping[str, Any] | None) -> dict[str, Any]:
    """A run's figures of its workloads' transfers, all workloads together,
    as a sweep's metrics: ``transfers``, ``transfers_completed``,
    ``fct_mean_s``, ``fct_p50_s``, ``fct_p99_s``, ``slowdown_mean`` and
    ``slowdown_p99`` over the completed ones; nothing without transfers.
    ``transfers`` is the table as a DataFrame or its columns by name."""
    if transfers is None or "completion_time" not in transfers:
        return {}
    fct = _floats(transfers["completion_time"])
    if not len(fct):
        return {}
    slow = _floats(transfers["slowdown"])
    done, slow = fct[~np.isnan(fct)], slow[~np.isnan(slow)]

    def stat(v: np.ndarray[Any, Any], f: str) -> float:
        if not len(v):
            return float("nan")
        return float(v.mean()) if f == "mean" else float(np.quantile(v, float(f)))

    return {
        "transfers": len(fct),
        "transfers_completed": len(done),
        "fct_mean_s": stat(done, "mean"),
        "fct_p50_s": stat(done, "0.5"),
        "fct_p99_s": stat(done, "0.99"),
        "slowdown_mean": stat(slow, "mean"),
        "slowdown_p99": stat(slow, "0.99"),
    }


def completion_cdf(transfers: pd.DataFrame, column: str = "completion_time") -> pd.DataFrame:
    """The empirical CDF of ``column`` (``completion_time`` or ``slowdown``)
    per workload over its completed transfers: ``workload``, ``value``,
    ``cdf`` (the fraction at most ``value``)."""
    parts = []
    for name, g in transfers.groupby("workload", sort=False):
        v = np.sort(g[column].dropna().to_numpy(dtype=float))
        if len(v):
            parts.append(
                pd.DataFrame(
                    {"workload": name, "value": v, "cdf": np.arange(1, len(v) + 1) / len(v)}
                )
            )
    if not parts:
        return pd.DataFrame(columns=["workload", "value", "cdf"])
    return pd.concat(parts, ignore_index=True)
