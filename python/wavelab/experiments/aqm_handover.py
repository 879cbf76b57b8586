"""Queue disciplines and ECN across a vertical handover and over a GEO path
(``wavelab reproduce aqm-handover``).

One long-lived flow of each algorithm through the bottleneck of three paths,
with each of five queue disciplines on it, with and without ECN:

* ``L1L2`` and ``L2L1``: the DCNET 2016 handover (Abdelsalam et al., "TCP
  Wave Resilience to Link Changes"; the built-in ``dcnet2016-handover``):
  L1 = 2 Mbit/s / 30 ms and L2 = 8 Mbit/s / 240 ms one way, a 100-packet
  buffer of 1000-byte packets, a 2 s outage at :data:`HANDOVER_AT` after
  which the bottleneck runs as the other link;
* ``geo``: the GEO satellite + WLAN path of Annese et al. (``wavelab
  reproduce satwlan``, trial 1's channel with independent per-attempt loss,
  its random outages included): 1.2 Mbit/s and 273 ms one way over the
  satellite behind a 1.5 MB buffer (10 s of queue at the link's rate).

The disciplines (:data:`QDISCS`) are drop-tail, CoDel (RFC 8289), FQ-CoDel
(RFC 8290), PIE (RFC 8033) and DualPI2 (RFC 9332), each with its RFC's
defaults, on both directions of the bottleneck, within the same buffer. The
flows (:data:`ROWS`): CUBIC with and without classic ECN (RFC 3168), BBR
(v1) with and without, BBRv3 with ECN (draft-ietf-ccwg-bbr-06 counts a
CE mark as a loss), TCP Wave (no ECN: it has no response to a mark),
DCTCP (RFC 8257) and the Prague-style L4S response (ECT(1)). Every flow but
Wave's uses SACK.

What each run gives (:func:`run_row`), on the path after the handover (on
``geo``, after the first :data:`GEO_WARMUP` seconds):

* the goodput share: the bytes the receiver delivered in order from the
  moment the new link is up (on ``geo``: from :data:`GEO_WARMUP`) to the
  end, over the bottleneck's payload capacity in that time (a window that
  long makes a SACK receiver's release of data buffered before it
  negligible; over a short window the release can go above 1);
* the link's busy share over the last :data:`STEADY` seconds: the IP bytes
  the bottleneck delivered, retransmissions and segments the receiver
  already has included, over its rate (a link kept busy with what the
  receiver cannot use shows here and not in the goodput);
* the queueing delay at the bottleneck: the queue's bytes at each 50 ms
  sample over the link's rate, its median and 95th percentile over the
  goodput's window (the queue the discipline lets the flow keep);
* the recovery time (DCNET only): from the moment the new link is up until
  the goodput over a 1 s window first reaches 90 % of the new link's payload
  capacity (:func:`wavelab.analysis.handover_recovery.recovery_time`; the
  target is the link's capacity, not the flow's own steady rate, so a
  discipline that keeps the flow below 90 % shows as never recovered);
* drops at the bottleneck (the buffer's and the discipline's), CE marks,
  retransmissions and timeouts.

The figures: the throughput-delay plane of each path (the goodput share against
the 95th percentile of the queueing delay) and the recovery times.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from wavelab._util.table_text import table_text
from wavelab.analysis.handover_recovery import cumulative, recovery_time
from wavelab.experiments import satwlan
from wavelab.experiments.figures import save
from wavelab.experiments.runs import run_runs
from wavelab.experiments.tables import Markdown, Tables
from wavelab.results.frames import Results
from wavelab.scenario.builtin import builtin_scenario
from wavelab.scenario.loading import Scenario
from wavelab.sweep.study import StudyRun

QDISCS = ("drop-tail", "codel", "fq_codel", "pie", "dualpi2")
"""The queue disciplines, in the order of the tables (``drop-tail``: none)."""

ROWS: dict[str, tuple[str, bool]] = {
    "cubic": ("cubic", False),
    "cubic-ecn": ("cubic", True),
    "bbr": ("bbr", False),
    "bbr-ecn": ("bbr", True),
    "bbr3-ecn": ("bbr3", True),
    "wave": ("wave", False),
    "dctcp": ("dctcp", True),
    "prague": ("prague", True),
}
"""Each row's algorithm and whether its TCP negotiates ECN."""

PATHS = ("L1L2", "L2L1", "geo")
DCNET_LINKS: dict[str, dict[str, str]] = {
    "L1": {"rate": "2Mbit/s", "delay": "30ms"},
    "L2": {"rate": "8Mbit/s", "delay": "240ms"},
}
DCNET_RATE = {"L1": 2e6, "L2": 8e6}
DCNET_MSS = 960
"""DCNET's 1000-byte IP packets (MSS 960 plus 40 bytes of headers)."""
HANDOVER_AT = 60.0
"""When the DCNET paths hand over (s): one instant for every algorithm,
late enough for the slowest slow start here (CUBIC over L2's 480 ms RTT)."""
OUTAGE = 2.0
"""The handover's outage (s): the DCNET study's baseline HT."""
BOTTLENECK_DIR = 2
"""The bottleneck's forward direction (link 1) on every path."""
GEO_RATE = 1.2e6
GEO_MSS = satwlan.MSS
GEO_WARMUP = 30.0
"""Seconds of the GEO run left out of its figures (slow start)."""


@dataclass(frozen=True)
class Form:
    """How long each path's runs are, and which rows and disciplines run."""

    after: float
    """Seconds simulated after the DCNET handover starts."""
    geo: float
    """Seconds of a GEO run."""
    rows: tuple[str, ...]
    qdiscs: tuple[str, ...]


FULL = Form(90.0, 300.0, tuple(ROWS), QDISCS)
QUICK = Form(40.0, 90.0, ("cubic", "cubic-ecn", "dctcp"), ("drop-tail", "codel", "fq_codel"))
STEADY = 30.0
"""The window (s) at the end of each run of the link's busy share."""


def key(path: str, row: str, qdisc: str) -> str:
    """A run's name."""
    return f"{path}-{row}-{qdisc}"


def _flow(row: str) -> dict[str, Any]:
    cc, ecn = ROWS[row]
    return {"flows[0].cc": cc, "flows[0].tcp.sack": cc != "wave", "flows[0].tcp.ecn": ecn}


def dcnet_scenario(direction: str, row: str, qdisc: str, form: Form) -> Scenario:
    """A DCNET handover run: the bottleneck starts as ``direction[:2]`` and
    hands over to ``direction[2:]`` at :data:`HANDOVER_AT`."""
    old, new = DCNET_LINKS[direction[:2]], DCNET_LINKS[direction[2:]]
    handover = {"at": f"{HANDOVER_AT:g}s", "outage": f"{OUTAGE:g}s", **new}
    changes: dict[str, Any] = {
        "name": f"aqm-handover-{key(direction, row, qdisc)}",
        "duration": f"{HANDOVER_AT + form.after:g}s",
        "links[1].rate": old["rate"],
        "links[1].delay": old["delay"],
        "links[1].handovers": [handover],
        **_flow(row),
    }
    if qdisc != "drop-tail":
        changes["links[1].qdisc"] = qdisc
    return builtin_scenario("dcnet2016-handover").with_changes(changes)


def geo_scenario(row: str, qdisc: str, form: Form) -> Scenario:
    """A GEO + WLAN run: one flow over trial 1's channel (seed 1)."""
    trial = satwlan.Trial("1", ("NewReno SACK", "NewReno"), 1)
    base = satwlan.trial_scenario(trial, seed=1, duration=form.geo)
    data = dict(base.data)
    data["flows"] = data["flows"][:1]
    sc = base.with_changes({"flows": data["flows"]})
    changes: dict[str, Any] = {
        "name": f"aqm-handover-{key('geo', row, qdisc)}",
        "flows[0].name": row,
        "flows[0].log_packets": False,
        "output.queues": True,
        **_flow(row),
    }
    if qdisc != "drop-tail":
        changes["links[1].qdisc"] = qdisc
    return sc.with_changes(changes)


def cells(form: Form) -> dict[str, tuple[str, str, str]]:
    """Every run of the form: its :func:`key`, and its path, row and
    discipline."""
    return {
        key(path, row, qdisc): (path, row, qdisc)
        for path in PATHS
        for row in form.rows
        for qdisc in form.qdiscs
    }


def scenarios(form: Form) -> dict[str, Scenario]:
    """Every run of the form, by :func:`key`."""
    return {
        k: geo_scenario(row, qdisc, form)
        if path == "geo"
        else dcnet_scenario(path, row, qdisc, form)
        for k, (path, row, qdisc) in cells(form).items()
    }


@dataclass(frozen=True)
class Window:
    """Where a run's figures are taken: the new link's rate and payload
    share, when it came up and when the run ends (s)."""

    rate: float
    payload: float
    t0: float
    end: float

    @property
    def capacity(self) -> float:
        """The payload capacity (bit/s)."""
        return self.rate * self.payload


def window(path: str, form: Form) -> Window:
    """The measurement window of a path's runs."""
    if path == "geo":
        payload = GEO_MSS / (GEO_MSS + 52)  # 1500-byte packets with timestamps
        return Window(GEO_RATE, payload, GEO_WARMUP, form.geo)
    end = HANDOVER_AT + form.after
    payload = DCNET_MSS / (DCNET_MSS + 40)
    return Window(DCNET_RATE[path[2:]], payload, HANDOVER_AT + OUTAGE, end)


def _between(series: pd.Series, a: float, b: float) -> float:
    """The increase of a cumulative count from time ``a`` to ``b`` (the
    samples at or before each)."""
    t = series.index.to_numpy(dtype=float)
    v = series.to_numpy(dtype=float)
    ia = max(int(np.searchsorted(t, a + 1e-9, side="right")) - 1, 0)
    ib = max(int(np.searchsorted(t, b + 1e-9, side="right")) - 1, 0)
    return float(v[ib] - v[ia])


def queue_delays(res: Results, w: Window) -> np.ndarray:
    """The bottleneck's queueing delay (s) at each sample from the new
    link's start to the end: the bytes queued over the link's rate."""
    q = res.queues[res.queues["dir"] == BOTTLENECK_DIR]
    t = q["time"].to_numpy(dtype=float)
    inside = (t >= w.t0) & (t <= w.end)
    delays: np.ndarray = q["bytes"].to_numpy(dtype=float)[inside] * 8 / w.rate
    return delays


def run_row(cell: tuple[str, str, str], res: Results, form: Form) -> dict[str, Any]:
    """One run's figures (see the module); ``cell`` is its path, row and
    discipline."""
    path, row, qdisc = cell
    w = window(path, form)
    good = cumulative(res, "goodput")
    wire = cumulative(res, "bottleneck", link_dir=BOTTLENECK_DIR)
    busy = _between(wire, w.end - STEADY, w.end) * 8 / STEADY
    after = _between(good, w.t0, w.end) * 8 / (w.end - w.t0)
    delays = queue_delays(res, w)
    rec = recovery_time(good, w.t0, w.capacity) if path != "geo" else None
    link = res.links.iloc[BOTTLENECK_DIR]
    flow = res.flows.iloc[0]
    return {
        "path": path,
        "row": row,
        "qdisc": qdisc,
        "goodput_mbps": after / 1e6,
        "goodput_share": after / w.capacity,
        "link_busy": busy / w.rate,
        "queue_p50_ms": float(np.median(delays)) * 1e3 if len(delays) else np.nan,
        "queue_p95_ms": float(np.percentile(delays, 95)) * 1e3 if len(delays) else np.nan,
        "recovery_s": np.nan if rec is None or rec.seconds is None else rec.seconds,
        "horizon_s": w.end - w.t0,
        "drops": int(link["dropped_queue"]) + int(link["dropped_aqm"]),
        "marks": int(link["marked"]),
        "retransmissions": int(flow["retransmissions"]),
        "rto_expiries": int(flow["rto_expiries"]),
    }


def pivot(rows: pd.DataFrame, column: str, path: str) -> pd.DataFrame:
    """One metric of one path as a table: a row per flow, a column per
    discipline."""
    part = rows[rows["path"] == path]
    table = part.pivot(index="row", columns="qdisc", values=column)
    order = [r for r in ROWS if r in table.index]
    return table.loc[order, [q for q in QDISCS if q in table.columns]]


def row_color(row: str) -> str:
    """A flow's colour in the plane (one of matplotlib's ten, by its place
    in :data:`ROWS`: the algorithms' own colours are shared by CUBIC and
    DCTCP, and by Wave and Prague)."""
    return f"C{list(ROWS).index(row)}"


MARKERS = {"drop-tail": "s", "codel": "o", "fq_codel": "^", "pie": "D", "dualpi2": "P"}


def plane_figure(rows: pd.DataFrame, out: Path) -> Path:
    """The throughput-delay plane of each path: the goodput share against
    the 95th percentile of the queueing delay, a colour per flow, a marker per
    discipline, hollow where the flow negotiates ECN; a delay below 0.1 ms
    is drawn at 0.1 ms (the log scale)."""
    fig, axes = plt.subplots(1, len(PATHS), figsize=(15, 4.6))
    for ax, path in zip(axes, PATHS, strict=True):
        part = rows[(rows["path"] == path) & rows["queue_p95_ms"].notna()]
        for _, r in part.iterrows():
            ecn = ROWS[str(r["row"])][1]
            color = row_color(str(r["row"]))
            ax.scatter(
                max(float(r["queue_p95_ms"]), 0.1),
                r["goodput_share"],
                marker=MARKERS[str(r["qdisc"])],
                s=40,
                facecolors="none" if ecn else color,
                edgecolors=color,
            )
        ax.set_xscale("log")
        ax.set(
            title={"L1L2": "DCNET L1 -> L2", "L2L1": "DCNET L2 -> L1", "geo": "GEO + WLAN"}[path],
            xlabel="queueing delay, 95th percentile (ms)",
            ylabel="goodput / capacity, new link",
            ylim=(0, 1.05),
        )
        ax.grid(alpha=0.3, which="both")
    seen = sorted({str(r) for r in rows["row"]}, key=list(ROWS).index)
    handles = [
        Line2D(
            [],
            [],
            ls="",
            marker="o",
            color=row_color(r),
            markerfacecolor="none" if ROWS[r][1] else row_color(r),
            label=r,
        )
        for r in seen
    ]
    handles += [
        Line2D([], [], ls="", marker=MARKERS[q], color="grey", label=q)
        for q in QDISCS
        if q in set(rows["qdisc"])
    ]
    axes[-1].legend(handles=handles, fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return save(fig, out / "plane.png")


def recovery_figure(rows: pd.DataFrame, out: Path) -> Path:
    """The recovery times of the DCNET paths: a group of bars per flow, a
    bar per discipline; a run that never reached 90 % of the new link's
    capacity is drawn to its horizon, hatched."""
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.2), sharey=False)
    for ax, path in zip(axes, ("L1L2", "L2L1"), strict=True):
        rec = pivot(rows, "recovery_s", path)
        horizon = float(rows[rows["path"] == path]["horizon_s"].max())
        n = len(rec.columns)
        x = np.arange(len(rec.index))
        width = 0.8 / max(n, 1)
        for i, q in enumerate(rec.columns):
            values = rec[q].to_numpy(dtype=float)
            never = np.isnan(values)
            ax.bar(
                x + i * width,
                np.where(never, horizon, values),
                width,
                label=q,
                color=f"C{i}",
                hatch=None,
            )
            if never.any():
                ax.bar(
                    (x + i * width)[never],
                    horizon,
                    width,
                    color="none",
                    edgecolor="black",
                    hatch="//",
                    lw=0,
                )
        ax.set_xticks(x + width * (n - 1) / 2, list(rec.index), rotation=30, fontsize=8)
        ax.set(
            yscale="log",
            ylabel="to 90 % of the new link (s)",
            title=f"DCNET {path[:2]} -> {path[2:]} (hatched: not within {horizon:.0f} s)",
        )
        ax.grid(alpha=0.3, axis="y")
    axes[-1].legend(fontsize=7)
    return save(fig, out / "recovery.png")


def reproduce(
    out: Path,
    quick: bool,
    jobs: int | None,
    cluster: str | None = None,
    cluster_timeout: float | None = None,
) -> Path:
    """Runs the study (into ``out/store``, resumable), prints and writes its
    tables, draws its figures."""
    form = QUICK if quick else FULL
    out.mkdir(parents=True, exist_ok=True)
    study = {k: StudyRun(sc) for k, sc in scenarios(form).items()}
    runs = run_runs("aqm-handover", study, out, jobs, cluster, cluster_timeout).results
    rows = pd.DataFrame([run_row(cell, runs[k], form) for k, cell in cells(form).items()])
    tables = Tables(out)
    tables.csv("runs.csv", rows)
    doc = Markdown()
    printed = []
    for path in PATHS:
        for column, title in (
            ("goodput_share", "goodput / capacity on the new link"),
            ("link_busy", "the link's busy share, last 30 s"),
            ("queue_p95_ms", "queueing delay p95 (ms)"),
            ("recovery_s", "to 90 % of the new link (s)"),
        ):
            if column == "recovery_s" and path == "geo":
                continue
            table = pivot(rows, column, path).round(1 if column.endswith(("_ms", "_s")) else 3)
            heading = f"{path}: {title}"
            doc.lines(f"## {heading}").table(table, index=True)
            if column != "link_busy":  # in summary.md and runs.csv
                printed.append(f"{heading}\n{table_text(table.reset_index())}")
    tables.markdown("summary.md", doc)
    plane_figure(rows, out)
    recovery_figure(rows, out)
    with pd.option_context("display.width", 200):
        print("\n\n".join(printed))
    return out
