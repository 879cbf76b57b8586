"""Every approach to a vertical handover, side by side (``wavelab reproduce
handover-bakeoff``): a better single-path TCP (TCP Wave's bursts, ETCPv1's
cross-layer notices, CUBIC, BBR) against Multipath TCP (RFC 8684), which
keeps a subflow on each access link.

The topology is MobiWac 2009's (``wavelab reproduce mobiwac2009``): a
server, an access router, two base stations, and a mobile node on two
access links, ``old`` and ``new``; at :data:`HANDOFF_AT` the node hands off
from ``old`` to ``new`` (make-before-break or break-before-make, with the
paper's disconnection and notice delay; after a make-before-break handoff
the old link goes down :data:`OVERLAP` later, for every approach alike).
The handoffs (:func:`handoffs`):

* DCNET 2016's L1 <-> L2 (2 Mbit/s / 30 ms and 8 Mbit/s / 240 ms, 100-packet
  buffers) as a break-before-make handoff with a 2 s disconnection, both
  ways (DCNET 2016 changes one link's settings; with two access links the
  old one is gone and the new one down for the outage, which MPTCP needs);
* MobiWac 2009's 16 handoffs between EGPRS, HSDPA, WiMAX and WLAN-like
  links, their buffers max(BDP, 5) packets (``--quick``: figures 6 and 13).

One bulk flow from the server to the mobile node per run (:data:`ROWS`):
TCP Wave (no SACK, as its papers run it), ETCPv1 (NewReno with SACK that
acts on the handoff's notice), CUBIC and BBR with SACK, and MPTCP with a
subflow per access link, full-mesh or backup (RFC 8684 section 3.3.8),
uncoupled CUBIC or LIA (RFC 6356) over NewReno; an MPTCP subflow's
failure is found by its own timeouts (``failover = "timeouts"``), or, in
one backup row, also by the handoff's cross-layer notice (``"notice"``, the
notice ETCPv1 acts on). Beside it
a ping (one 56-byte request every 100 ms, single path: it follows the
node's attachment).

Measured from the handoff on (:func:`run_row`): the **interruption**, the
longest time without any data reaching the receiver (for MPTCP, on any
subflow); the **time to 90 %** of the new link's payload capacity (goodput
over a 1 s window, from the moment only the new link is left: after the
disconnection, or :data:`OVERLAP` after a make-before-break handoff); the **bytes
retransmitted** (every subflow's); and the ping's 99th-percentile RTT over
the whole run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from wavelab._util.table_text import table_text
from wavelab.analysis.handover_recovery import recovery_time
from wavelab.experiments import mobiwac2009
from wavelab.experiments.figures import save
from wavelab.experiments.runs import run_runs
from wavelab.experiments.tables import Markdown, Tables
from wavelab.results.frames import Results
from wavelab.scenario.loading import Scenario, from_toml
from wavelab.sweep.study import StudyRun

HANDOFF_AT = 10.0
"""When the node hands off (s)."""
AFTER = 40.0
"""Seconds simulated after the handoff."""
INTERVAL = 0.05
"""The series' sampling interval (s): the interruption's resolution."""
OVERLAP = 1.0
"""How long the old access link stays up after a make-before-break
handoff (s); then it goes down for the rest of the run. wavelab's handoff
model leaves it up for good (the packets it holds drain, as MobiWac 2009
has it), which for MPTCP would keep a subflow on a network the node has
left; one second is our choice, applied to every row alike."""

ROWS: dict[str, dict[str, Any]] = {
    "wave": {"cc": "wave", "sack": False},
    "etcpv1": {"cc": "etcpv1", "sack": True},
    "cubic": {"cc": "cubic", "sack": True},
    "bbr": {"cc": "bbr", "sack": True},
    "mptcp-full-mesh": {"cc": "cubic", "sack": True, "mptcp": {"paths": "full-mesh"}},
    "mptcp-backup": {"cc": "cubic", "sack": True, "mptcp": {"paths": "backup"}},
    "mptcp-backup-notice": {
        "cc": "cubic",
        "sack": True,
        "mptcp": {"paths": "backup", "failover": "notice"},
    },
    "mptcp-full-mesh-lia": {
        "cc": "newreno",
        "sack": True,
        "mptcp": {"paths": "full-mesh", "coupled": "lia"},
    },
    "mptcp-backup-lia": {
        "cc": "newreno",
        "sack": True,
        "mptcp": {"paths": "backup", "coupled": "lia"},
    },
}
"""Each row's algorithm, SACK and MPTCP settings."""


@dataclass(frozen=True)
class Case:
    """One handoff of the bake-off."""

    name: str
    handoff: mobiwac2009.Handoff
    queue: str | None = None
    """Both access links' buffer, when not MobiWac's max(BDP, 5) packets."""


def dcnet(direction: str) -> Case:
    """DCNET 2016's handover as a break-before-make handoff between two
    access links, with its 2 s outage as the disconnection."""
    l1, l2 = (2000, 30), (8000, 240)
    old, new = (l1, l2) if direction == "L1L2" else (l2, l1)
    h = mobiwac2009.Handoff(
        figure=0,
        direction=direction,
        kind="break-before-make",
        old=old,
        new=new,
        disconnection=2.0,
        packets=100,
        reported="",
    )
    return Case(f"dcnet-{direction}", h, "100pkt")


def handoffs(quick: bool) -> list[Case]:
    """The cases: DCNET's two directions, then MobiWac's figures."""
    figures = (6, 13) if quick else tuple(h.figure for h in mobiwac2009.handoffs())
    mobiwac = [
        Case(f"mobiwac-fig{h.figure}", h) for h in mobiwac2009.handoffs() if h.figure in figures
    ]
    return [dcnet("L1L2"), dcnet("L2L1"), *mobiwac]


def scenario(case: Case, row: str) -> Scenario:
    """One run: the case's handoff and the row's flow, with a ping."""
    text = mobiwac2009.scenario_text(case.handoff, at=HANDOFF_AT, flows=1, tcp="regular")
    sc = from_toml(text)
    data = dict(sc.data)
    r = ROWS[row]
    flow = {
        "name": "bulk",
        "from": "server",
        "to": "mobile",
        "cc": r["cc"],
        "tcp": {**mobiwac2009.TCP, "sack": r["sack"]},
    }
    if "mptcp" in r:
        flow["mptcp"] = r["mptcp"]
    ping = {
        "name": "ping",
        "from": "server",
        "to": "mobile",
        "transport": "ping",
        "ping": {"interval": "100ms", "size": "56B"},
    }
    handoff = dict(data["handoffs"][0])
    handoff.pop("transfer", None)
    changes: dict[str, Any] = {
        "name": f"bakeoff-{case.name}-{row}",
        "duration": f"{HANDOFF_AT + AFTER:g}s",
        "output": {"interval": f"{INTERVAL:g}s", "queues": False},
        "flows": [flow, ping],
        "handoffs": [handoff],
    }
    if case.handoff.kind == "make-before-break":
        gone = HANDOFF_AT + OVERLAP
        changes["links[3].outages"] = [{"start": f"{gone:g}s", "duration": f"{AFTER:g}s"}]
    if case.queue:
        changes["links[3].queue"] = case.queue
        changes["links[4].queue"] = case.queue
    return sc.with_changes(changes)


def cells(quick: bool) -> dict[str, tuple[Case, str]]:
    """Every run by name: its case and row."""
    return {f"{c.name}-{row}": (c, row) for c in handoffs(quick) for row in ROWS}


def _bulk_rows(res: Results) -> list[int]:
    """The flows-table rows of the bulk connection (one, or its subflows)."""
    f = res.flows
    return [int(k) for k in f[f["name"].astype(str).str.startswith("bulk")]["flow"]]


def delivered_series(res: Results) -> pd.Series:
    """The bytes the receiver got over time, summed over the bulk flow's
    rows (for MPTCP its subflows: data that reached the receiver, before
    the connection reorders it)."""
    s = res.series[res.series["flow"].isin(_bulk_rows(res))]
    by_time = s.groupby("time")["bytes_delivered"].sum()
    return by_time.sort_index()


def longest_gap(series: pd.Series, start: float) -> float:
    """The longest time (s) from ``start`` on during which ``series`` (a
    cumulative count) did not grow, at its sampling resolution."""
    t = series.index.to_numpy(dtype=float)
    v = series.to_numpy(dtype=float)
    keep = t >= start - 1e-9
    t, v = t[keep], v[keep]
    if len(t) < 2:
        return float("nan")
    grew = np.flatnonzero(np.diff(v) > 0) + 1
    marks = np.concatenate(([0], grew, [len(t) - 1]))
    return float(np.max(np.diff(t[marks])))


def run_row(case: Case, row: str, res: Results) -> dict[str, Any]:
    """One run's figures (see the module)."""
    h = case.handoff
    # when only the new link is left: after the disconnection, or once the
    # old link is gone after a make-before-break handoff
    up = HANDOFF_AT + (h.disconnection if h.kind == "break-before-make" else OVERLAP)
    capacity = h.new[0] * 1e3 * mobiwac2009.MSS / mobiwac2009.PACKET
    delivered = delivered_series(res)
    rec = recovery_time(delivered, up, capacity)
    f = res.flows
    bulk = f[f["flow"].isin(_bulk_rows(res))]
    ping = f[f["name"] == "ping"].iloc[0]
    return {
        "case": case.name,
        "kind": "MBB" if h.kind == "make-before-break" else "BBM",
        "old": f"{h.old[0]}/{h.old[1]}",
        "new": f"{h.new[0]}/{h.new[1]}",
        "row": row,
        "interruption_s": longest_gap(delivered, HANDOFF_AT),
        "to_90pct_s": np.nan if rec.seconds is None else rec.seconds,
        "retransmitted_kb": float(bulk["bytes_retransmitted"].fillna(0).sum()) / 1e3,
        "ping_p99_ms": float(str(ping["rtt_p99"])) * 1e3,
        "goodput_after_mbps": (
            (float(delivered.iloc[-1]) - float(str(delivered.asof(up))))
            * 8
            / (HANDOFF_AT + AFTER - up)
        )
        / 1e6,
    }


def pivot(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """One metric: a row per case, a column per approach."""
    t = rows.pivot(index="case", columns="row", values=column)
    order = list(dict.fromkeys(rows["case"]))
    return t.loc[order, [r for r in ROWS if r in t.columns]]


def wins(rows: pd.DataFrame) -> pd.DataFrame:
    """Per approach: in how many cases it had the shortest interruption and
    the shortest time to 90 % (ties count for each), and its median of
    each."""
    out = []
    inter, to90 = pivot(rows, "interruption_s"), pivot(rows, "to_90pct_s")
    best_i = inter.eq(inter.min(axis=1), axis=0)
    best_r = to90.eq(to90.min(axis=1), axis=0)
    for r in inter.columns:
        out.append(
            {
                "row": r,
                "shortest_interruption": int(best_i[r].sum()),
                "fastest_to_90pct": int(best_r[r].sum()),
                "median_interruption_s": float(inter[r].median()),
                "median_to_90pct_s": float(to90[r].median()),
                "reached_90pct": f"{int(to90[r].notna().sum())}/{len(to90)}",
            }
        )
    return pd.DataFrame(out)


def figure(rows: pd.DataFrame, out: Path) -> Path:
    """Interruption and time to 90 % per case, a marker per approach."""
    fig, axes = plt.subplots(2, 1, figsize=(13, 7), sharex=True)
    cases = list(dict.fromkeys(rows["case"]))
    x = np.arange(len(cases))
    markers = "osD^vPh*X"
    for k, r in enumerate(ROWS):
        part = rows[rows["row"] == r].set_index("case").reindex(cases)
        for ax, col in zip(axes, ("interruption_s", "to_90pct_s"), strict=True):
            ax.scatter(
                x + (k - (len(ROWS) - 1) / 2) * 0.08,
                part[col].fillna(AFTER).to_numpy(),
                marker=markers[k],
                s=28,
                color=f"C{k}",
                label=r,
                facecolors="none" if "mptcp" in r else f"C{k}",
            )
    axes[0].set(ylabel="longest gap without delivery (s)", yscale="log")
    axes[1].set(ylabel=f"to 90 % of the new link (s; {AFTER:g}: not reached)", yscale="log")
    axes[1].set_xticks(x, cases, rotation=45, ha="right", fontsize=8)
    for ax in axes:
        ax.grid(alpha=0.3, which="both")
    axes[0].legend(ncol=4, fontsize=7)
    return save(fig, out / "bakeoff.png")


def reproduce(
    out: Path,
    quick: bool,
    jobs: int | None,
    cluster: str | None = None,
    cluster_timeout: float | None = None,
) -> Path:
    """Runs the bake-off (into ``out/store``, resumable), prints and writes
    its tables, draws its figure."""
    out.mkdir(parents=True, exist_ok=True)
    plan = cells(quick)
    study = {k: StudyRun(scenario(c, r)) for k, (c, r) in plan.items()}
    runs: Mapping[str, Results] = run_runs(
        "handover-bakeoff", study, out, jobs, cluster, cluster_timeout
    ).results
    rows = pd.DataFrame([run_row(c, r, runs[k]) for k, (c, r) in plan.items()])
    summary = wins(rows)
    tables = Tables(out)
    tables.csv("runs.csv", rows)
    tables.csv("summary.csv", summary)
    doc = Markdown().table(summary.round(2))
    printed = [table_text(summary.round(2))]
    for col, title in (
        ("interruption_s", "longest gap without delivery after the handoff (s)"),
        ("to_90pct_s", "to 90 % of the new link (s; - not reached)"),
        ("retransmitted_kb", "bytes retransmitted (kB)"),
        ("ping_p99_ms", "ping RTT p99 (ms)"),
    ):
        t = pivot(rows, col).round(2 if col.endswith("_s") else 0)
        doc.lines(f"## {title}").table(t, index=True)
        printed.append(f"{title}\n{table_text(t.reset_index())}")
    tables.markdown("summary.md", doc)
    figure(rows, out)
    with pd.option_context("display.width", 250):
        print("\n\n".join(printed))
    return out
