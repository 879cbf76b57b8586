"""The one definition of a run's figures that both renderers follow: the
matplotlib files (:mod:`wavelab.plot.run_plots`) and the report's plotly
page (``report/assets/report.js``, which receives :func:`report_spec` as
JSON). It names each figure's title and axis labels and each trace's label;
the colours, markers and line styles come from :mod:`wavelab.plot.style`.
Neither renderer writes a title, label or colour of its own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from wavelab.plot.style import (
    ALGORITHM_STYLES,
    FLOW_DASHES,
    GREY,
    HANDOFF_COLOR,
    OUTAGE_COLOR,
    PALETTE,
    STATE_COLORS,
    TOTAL,
    algorithm_style,
)

FIGURES: dict[str, dict[str, str]] = {
    "rate": {"title": "rate", "y": "Mbit/s", "x": "time (s)"},
    "window": {"title": "congestion window and state", "y": "segments", "x": "time (s)"},
    "rtt": {"title": "RTT", "y": "ms", "x": "time (s)"},
    "sequence": {"title": "sequence numbers", "y": "segment", "x": "time (s)"},
    "rtt-cdf": {"title": "RTT distribution", "y": "fraction of samples", "x": "RTT (ms)"},
    "queue": {"title": "queues", "y": "packets waiting", "x": "time (s)"},
    "queue-delay": {
        "title": "queue delay (sojourn of the last packet dequeued)",
        "y": "ms",
        "x": "time (s)",
    },
    "algorithm": {"title": "algorithm state", "y": "", "x": "time (s)"},
    "jain": {"title": "fairness", "y": "Jain's index", "x": "time (s)"},
    "throughput-delay": {
        "title": "throughput vs delay",
        "y": "goodput (Mbit/s, sum over the flows)",
        "x": "(ms, better to the right)",
    },
}
"""Each figure's title (after the run's name in the files) and axis labels."""

TRACES: dict[str, str] = {
    "goodput": "goodput",
    "send_rate": "sending rate",
    "capacity": "capacity",
    "all": "all flows",
    "off_scale": "off scale",
    "cwnd": "cwnd",
    "ssthresh": "ssthresh",
    "in_flight": "in flight",
    "burst": "burst (segments)",
    "tx_time": "TxTime (ms)",
    "srtt": "srtt",
    "rtt": "RTT sample",
    "rto": "RTO",
    "seq_sent": "highest sent",
    "seq_acked": "acknowledged",
    "rtx": "retransmitted",
    "handoff": "handoff",
    "outage": "link down",
}
"""Each trace's label (after the flow's name where it belongs to a flow)."""

MIN_SEEDS = 3
"""The fewest runs a point's 95 % confidence interval is drawn from, in the
PNGs and the report alike: with two, Student's t(0.975, 1) = 12.7 makes an
interval wider than the data says anything about; such points are drawn as
their runs instead."""

LOG_SPAN = 100.0
"""A delay axis is logarithmic when the largest delay is more than this
many times the smallest (two decades), in the PNGs and the report alike: on
a linear axis a few runs with seconds of queueing squeeze every other point
onto one line."""


def is_algorithm_path(param: str) -> bool:
    """Whether a sweep parameter chooses a congestion-control algorithm
    (``flows[0].cc``, ``cc``): figures coloured by it draw each value in its
    algorithm's colour and marker."""
    return param == "cc" or param.endswith(".cc")


def report_spec(algorithms: Sequence[str] = ()) -> dict[str, Any]:
    """What the report's script draws with, JSON-ready: :data:`FIGURES`,
    :data:`TRACES`, the palette, the flows' line styles, the state and event
    colours, the colour and marker of every built-in algorithm and of
    ``algorithms``, and the rules of truthful sweep plots
    (:data:`MIN_SEEDS`, :data:`LOG_SPAN`)."""
    names = list(ALGORITHM_STYLES) + [a for a in algorithms if a not in ALGORITHM_STYLES]
    return {
        "figures": FIGURES,
        "traces": TRACES,
        "palette": PALETTE,
        "dashes": [dash for _, dash in FLOW_DASHES],
        "grey": GREY,
        "total": TOTAL,
        "handoff": HANDOFF_COLOR,
        "outage": OUTAGE_COLOR,
        "states": STATE_COLORS,
        "algorithms": {a: asdict(algorithm_style(a)) for a in names},
        "min_seeds": MIN_SEEDS,
        "log_span": LOG_SPAN,
    }
