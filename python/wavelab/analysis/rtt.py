"""The RTT distribution of a run: the CDF of every RTT sample the senders
took, from the run's ``rtt_distribution`` table (the simulator's histograms);
and the one-way delays of the segments of a packet log."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def rtt_cdf(distribution: pd.DataFrame, flow: int | None = None, name: str = "rtt") -> pd.DataFrame:
    """The CDF of the RTT samples of ``flow`` (or of all flows together)
    from a run's ``rtt_distribution`` table: columns ``rtt`` (seconds, each
    bucket's upper edge) and ``cdf`` (the fraction of samples below it),
    starting at the first bucket's lower edge with 0. Exact at every point;
    between two points the samples lie within one bucket (at most 1/64 of
    its lower edge wide). ``name = "owd"`` reads an ``owd_distribution``
    table the same way (columns ``owd`` and ``cdf``)."""
    d = distribution if flow is None else distribution[distribution["flow"] == flow]
    if not len(d):
        return pd.DataFrame({name: [], "cdf": []})
    # every flow's buckets share the same edges: sum the counts per bucket
    per = d.groupby([f"{name}_low", f"{name}_high"], sort=True)["count"].sum()
    lows = per.index.get_level_values(0).to_numpy(dtype=float)
    highs = per.index.get_level_values(1).to_numpy(dtype=float)
    counts = per.to_numpy(dtype=float)
    cdf = np.cumsum(counts) / counts.sum()
    return pd.DataFrame({name: np.append(lows[:1], highs), "cdf": np.append(0.0, cdf)})


def one_way_delays(packets: pd.DataFrame) -> np.ndarray[Any, Any]:
    """The one-way delay (seconds) of every data segment of a packet log
    (a run's ``packets`` table, kept for flows with ``log_packets = true``)
    sent once and delivered: its ``deliver`` time less its ``send`` time.
    Segments retransmitted are left out: which copy arrived is not known.
    Empty without a packet log."""
    if not len(packets):
        return np.zeros(0)
    p = packets[packets["kind"].astype(str) == "data"]
    event = p["event"].astype(str)
    resent = p.loc[event == "retransmit", ["flow", "seq"]].drop_duplicates()
    sent = p.loc[event == "send", ["flow", "seq", "time"]].drop_duplicates(["flow", "seq"])
    sent = sent.merge(resent, on=["flow", "seq"], how="left", indicator=True)
    sent = sent[sent["_merge"] == "left_only"].drop(columns="_merge")
    got = p.loc[event == "deliver", ["flow", "seq", "time"]].drop_duplicates(["flow", "seq"])
    both = sent.merge(got, on=["flow", "seq"], suffixes=("_sent", ""))
    return (both["time"] - both["time_sent"]).to_numpy(dtype=float)
