"""Analysis of runs: figures computed from a run's tables.

* :mod:`~wavelab.analysis.handover_recovery`: the recovery time after a handover
  (the DCNET 2016 metric);
* :mod:`~wavelab.analysis.rates`: goodput and sending rate over a window,
  Jain's index over time;
* :mod:`~wavelab.analysis.rtt`: the CDF of every RTT sample;
* :mod:`~wavelab.analysis.capacity`: a link direction's capacity over time
  and the windows when a link was down;
* :mod:`~wavelab.analysis.metrics`: the per-run figures of a sweep and of
  the run summary, with their units;
* :mod:`~wavelab.analysis.seeds`: the mean and 95 % confidence interval of
  each figure over a sweep's seeds.
"""

from wavelab.analysis.handover_recovery import (
    METRICS,
    Recovery,
    RunTables,
    cumulative,
    recovery,
    recovery_time,
    steady_rate,
)
from wavelab.analysis.rates import (
    RATE_WINDOW,
    goodput_and_send_rate,
    jain_over_time,
    rate_ceiling,
    windowed_rate,
)
from wavelab.analysis.rtt import rtt_cdf

__all__ = [
    "METRICS",
    "RATE_WINDOW",
    "Recovery",
    "RunTables",
    "cumulative",
    "goodput_and_send_rate",
    "jain_over_time",
    "rate_ceiling",
    "recovery",
    "recovery_time",
    "rtt_cdf",
    "steady_rate",
    "windowed_rate",
]
