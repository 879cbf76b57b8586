"""A run's data for the report page, from its directory (``wavelab run`` or
a store's ``runs/KEY``), and a DataFrame in the page's table format.

The time series of a run, per flow, with the flow's colour, marker and line
style (its algorithm's, :func:`wavelab.plot.style.flow_styles`, as in the
PNGs): goodput and sending rate averaged over
:data:`wavelab.analysis.rates.RATE_WINDOW` by the function ``rate.png`` uses
(:func:`wavelab.analysis.rates.goodput_and_send_rate`), with the bottleneck's capacity as it
changed and every window when a link was down shaded; congestion
window and ssthresh (segments), or TCP Wave's burst (segments) and TxTime;
RTT (smoothed and sampled) and RTO; the CDF of every RTT sample (the run's
``rtt_distribution``, as ``rtt-cdf.png``); sequence numbers (highest sent and
acknowledged, in segments) with the retransmissions of the packet log when
the run kept one. Each trace is decimated to at most :data:`MAX_POINTS`
points (every k-th sample of the averaged series: the values at the kept
instants are the PNG's); the time series of at most ``max_runs`` runs are
embedded (the table still lists every run), each as gzip-compressed JSON in
base64 that the page inflates (``DecompressionStream``) when the run is
shown, which makes a sweep's report about three times smaller.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wavelab.analysis.capacity import bottleneck_direction, direction_capacity, outages
from wavelab.analysis.rates import RATE_WINDOW, goodput_and_send_rate, rate_ceiling
from wavelab.analysis.rtt import rtt_cdf
from wavelab.plot.style import flow_styles
from wavelab.scenario.flow_rows import flow_row_specs

MAX_POINTS = 1500
"""Most points per trace."""
MAX_RETRANSMISSIONS = 5000
"""Most retransmission markers per flow."""


def _clean(values: np.ndarray[Any, Any], digits: int) -> list[float | None]:
    """Rounded values with NaN and infinities as null (JSON has neither)."""
    a = np.asarray(values, dtype=float)
    a = np.round(a, digits)
    out: list[float | None] = a.tolist()
    bad = ~np.isfinite(a)
    if bad.any():
        for i in np.flatnonzero(bad):
            out[int(i)] = None
    return out


def _decimate(n: int) -> slice:
    step = max(1, math.ceil(n / MAX_POINTS))
    return slice(None, None, step)


def _mss(scenario: dict[str, Any]) -> list[float]:
    return [float(spec.get("tcp", {}).get("mss", 1460)) for spec in flow_row_specs(scenario)]


def run_data(directory: Path, label: str = "") -> dict[str, Any]:
    """The time series of one run directory (written by `wavelab run` or the
    store), ready for the page."""
    meta = json.loads((directory / "run.json").read_text(encoding="utf-8"))
    scenario = meta.get("scenario", {})
    mss = _mss(scenario)
    series = pd.read_parquet(directory / "series.parquet")
    flows = pd.read_parquet(directory / "flows.parquet")
    packets_path = directory / "packets.parquet"
    rtx = pd.DataFrame()
    if packets_path.exists():
        log = pd.read_parquet(packets_path, columns=["time", "flow", "event", "seq"])
        rtx = log[log["event"].astype(str) == "retransmit"]

    def table(name: str) -> pd.DataFrame | None:
        path = directory / f"{name}.parquet"
        return pd.read_parquet(path) if path.exists() else None

    handovers, handoffs = table("handovers"), table("handoffs")
    end = float(meta.get("run", {}).get("simulated") or np.nan)
    if math.isnan(end):
        end = float(series["time"].max()) if len(series) else 0.0
    events = [
        {"label": w.label, "start": w.start, "end": w.end}
        for spans in outages(scenario, handovers, handoffs, end).values()
        for w in spans
    ]
    links = table("links")
    capacity: dict[str, Any] | None = None
    d = bottleneck_direction(links) if links is not None and len(links) else None
    if d is not None:
        cap = direction_capacity(scenario, d, end, handovers, handoffs)
        xs, ys = cap.steps(0.0, end)
        capacity = {
            "name": cap.name,
            "t": _clean(np.asarray(xs), 4),
            "y": _clean(np.asarray(ys) / 1e6, 4),
        }
    rates = goodput_and_send_rate(series)
    distribution = table("rtt_distribution")
    out_flows = []
    all_rates: list[pd.DataFrame] = []
    styles = flow_styles([str(a) for a in flows["algorithm"]])
    for f, row in enumerate(flows.itertuples(index=False)):
        s = series[series["flow"] == f].sort_values("time")
        seg = mss[f] if f < len(mss) else 1460.0
        t = s["time"].to_numpy(dtype=float)
        # the same averaging as rate.png (goodput_and_send_rate), at the kept samples
        r = rates[rates["flow"] == f]
        goodput = r["goodput"].to_numpy(dtype=float) / 1e6
        send_rate = r["send_rate"].to_numpy(dtype=float) / 1e6
        all_rates.append(r)
        keep = _decimate(len(t))
        flow: dict[str, Any] = {
            "name": str(row.name),
            "algorithm": str(row.algorithm),
            # the flow's colour, marker and line style, as in the PNGs
            "color": styles[f].color,
            "symbol": styles[f].symbol,
            "dash": styles[f].dash,
            "t": _clean(t[keep], 4),
            "goodput": _clean(goodput[keep], 4),
            "send_rate": _clean(send_rate[keep], 4),
            "cwnd": _clean(s["cwnd"].to_numpy(dtype=float)[keep] / seg, 2),
            "ssthresh": _clean(s["ssthresh"].to_numpy(dtype=float)[keep] / seg, 2),
            "srtt": _clean(s["srtt"].to_numpy(dtype=float)[keep] * 1e3, 2),
            "rtt": _clean(s["rtt"].to_numpy(dtype=float)[keep] * 1e3, 2),
            "rto": _clean(s["rto"].to_numpy(dtype=float)[keep] * 1e3, 1),
            "seq_sent": _clean(s["bytes_sent"].to_numpy(dtype=float)[keep] / seg, 1),
            "seq_acked": _clean(s["bytes_acked"].to_numpy(dtype=float)[keep] / seg, 1),
        }
        if "cc_burst" in s and s["cc_burst"].notna().any():
            flow["burst"] = _clean(s["cc_burst"].to_numpy(dtype=float)[keep], 2)
        if "cc_tx_time" in s and s["cc_tx_time"].notna().any():
            flow["tx_time"] = _clean(s["cc_tx_time"].to_numpy(dtype=float)[keep] * 1e3, 2)
        if distribution is not None and len(distribution):
            cdf = rtt_cdf(distribution, f)
            flow["rtt_cdf_ms"] = _clean(cdf["rtt"].to_numpy(dtype=float) * 1e3, 3)
            flow["rtt_cdf"] = _clean(cdf["cdf"].to_numpy(dtype=float), 5)
        if len(rtx):
            r = rtx[rtx["flow"] == f].head(MAX_RETRANSMISSIONS)
            flow["rtx_t"] = _clean(r["time"].to_numpy(dtype=float), 4)
            flow["rtx_seq"] = _clean(r["seq"].to_numpy(dtype=float) / seg, 1)
        out_flows.append(flow)
    ceiling = None
    if capacity is not None and all_rates:
        every = pd.concat(all_rates)
        values = np.concatenate(
            [every[c].to_numpy(dtype=float) for c in ("goodput", "send_rate")]
            + [every.groupby("time")["goodput"].sum().to_numpy(dtype=float)]
        )
        peak = max((v for v in capacity["y"] if v is not None), default=0.0) * 1e6
        top = rate_ceiling(peak, values)
        ceiling = None if top is None else round(top / 1e6, 4)
    return {
        "label": label or str(scenario.get("name") or directory.name),
        "name": str(scenario.get("name") or ""),
        "complete": bool(meta.get("complete", True)),
        "flows": out_flows,
        "events": events,
        "capacity": capacity,
        "rate_window": RATE_WINDOW,
        "rate_ceiling": ceiling,
    }


def _cell(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, float | np.floating):
        f = float(v)
        return round(f, 6) if math.isfinite(f) else None
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, bool | np.bool_):
        return bool(v)
    if isinstance(v, int | str):
        return v
    if pd.isna(v):
        return None
    return str(v)


def table_data(frame: pd.DataFrame, title: str, note: str = "") -> dict[str, Any]:
    """A DataFrame as the page's table format."""
    rows = [[_cell(v) for v in r] for r in frame.itertuples(index=False, name=None)]
    return {"title": title, "note": note, "columns": [str(c) for c in frame.columns], "rows": rows}
