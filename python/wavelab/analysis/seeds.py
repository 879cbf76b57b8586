"""Seeds aggregated: the mean and 95 % confidence interval of every metric
over the seeds of each parameter point of a sweep.

A sweep with ``seeds = N`` (or ``seed`` among its keys) repeats each point
with N seeds; the runs table keeps one row per run, and this module adds a
tidy table, one row per (point without its seed, metric): the point's other
parameters, ``metric``, its ``unit`` (:func:`wavelab.analysis.metrics.unit`; empty
for a count), ``n`` (runs that gave a number), ``mean``, ``std``
(sample standard deviation) and ``ci95_low`` / ``ci95_high``, the mean plus
or minus t(0.975, n - 1) std / sqrt(n), Student's interval for the mean of n
independent runs (NaN for n < 2). Runs that did not finish (``pending``,
``failed``) are left out, so ``n`` may be below the number of seeds.

The t quantiles come from the standard table (three decimals, df 1 to 30,
then 40, 60, 120 and the normal 1.960, interpolated in 1/df between them):
no statistics library is needed for one quantile, and the table's rounding
(below 0.05 %) is far below a confidence interval's own uncertainty.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from wavelab.analysis.metrics import unit

T975 = {
    **dict(
        enumerate(
            [
                *(12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228),
                *(2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086),
                *(2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042),
            ],
            start=1,
        )
    ),
    40: 2.021,
    60: 2.000,
    120: 1.980,
}
"""Student's t quantile 0.975 by degrees of freedom (the standard table)."""

NOT_METRICS = frozenset({"point", "events", "wall_s", "flows", "metrics_version"})


def t975(df: int) -> float:
    """Student's t quantile 0.975 for ``df`` >= 1 degrees of freedom."""
    if df < 1:
        return math.nan
    if df in T975:
        return T975[df]
    known = [*sorted(T975), math.inf]
    values = [T975[k] for k in sorted(T975)] + [1.960]
    hi = next(i for i, k in enumerate(known) if k > df)
    lo = hi - 1
    # linear in 1/df between the table's neighbours (1/inf = 0)
    x, x0, x1 = 1 / df, 1 / known[lo], 1 / known[hi]
    return values[lo] + (values[hi] - values[lo]) * (x - x0) / (x1 - x0)


def mean_ci(x: np.ndarray[Any, Any]) -> tuple[float, float]:
    """The mean of ``x`` and the half-width of its 95 % confidence interval,
    t(0.975, n - 1) std / sqrt(n) (NaN for fewer than two values)."""
    n = len(x)
    if n < 2:
        return (float(np.mean(x)) if n else math.nan, math.nan)
    return float(np.mean(x)), t975(n - 1) * float(np.std(x, ddof=1)) / math.sqrt(n)


def aggregate(table: pd.DataFrame, params: Sequence[str]) -> pd.DataFrame:
    """The tidy table of the module description, from a sweep's runs table
    (:func:`wavelab.sweep.runs_table.build_table`) whose parameter columns are
    ``params``."""
    ok = table[table["status"] == "ok"] if "status" in table else table
    group = [p for p in params if p != "seed" and p in ok]
    metrics = [
        c
        for c in ok.columns
        if c not in NOT_METRICS
        and c not in params
        and pd.api.types.is_numeric_dtype(ok[c])
        and not pd.api.types.is_bool_dtype(ok[c])
    ]
    rows = []
    groups = ok.groupby(group, sort=False, dropna=False) if group else [((), ok)]
    for keys, g in groups:
        key = dict(zip(group, keys if isinstance(keys, tuple) else (keys,), strict=True))
        for m in metrics:
            x = g[m].to_numpy(dtype=float)
            x = x[~np.isnan(x)]
            n = len(x)
            mean = float(x.mean()) if n else math.nan
            std = float(x.std(ddof=1)) if n > 1 else math.nan
            half = t975(n - 1) * std / math.sqrt(n) if n > 1 else math.nan
            rows.append(
                {
                    **key,
                    "metric": m,
                    "unit": unit(m) or "",
                    "n": n,
                    "mean": mean,
                    "std": std,
                    "ci95_low": mean - half,
                    "ci95_high": mean + half,
                }
            )
    columns = [*group, "metric", "unit", "n", "mean", "std", "ci95_low", "ci95_high"]
    return pd.DataFrame(rows, columns=columns)


__all__ = ["T975", "aggregate", "mean_ci", "t975"]
