"""WSC-TCP against NewReno over lossy wireless end links (``wavelab reproduce wsc-tcp``).

Srinivasan's thesis ("Efficient TCP enhancements for Hybrid Networks", MS
thesis, UC Santa Cruz 2016, section 4) compares NewReno with WSC-TCP in
ns-2: wireless end nodes attached to two access points, three flows, 4.8 s
runs, an initial link-layer retransmission delay rLL = 0.5 s, an "almost
lossless" and a "substantially lossy" wireless link at both end nodes, and
reports 7-22 % more throughput (its Tables 1-2,
``data/wsc_tcp_tables.csv``). The thesis describes nothing
else of the set-up; our choices (docs/experiments/wsc-tcp.md):

* ``mobile-a`` -- wlan-a -- ``ap1`` -- wired -- ``ap2`` -- wlan-b --
  ``mobile-b``; both wireless hops 2 Mbit/s (ns-2's 802.11 default), 1 ms,
  a 50-packet interface queue (ns-2's default), link-layer ARQ with 7
  retransmissions of 0.5 s each (rLL), frames in retry passed by the ones
  behind them (out of order: what makes duplicate ACKs without loss, the
  premise of section 3.2), a report to the sender for every delivered data
  frame (at once from wlan-a, the sender's own link; after 27 ms, the
  one-way delay back, from wlan-b); the wired hop 10 Mbit/s, 25 ms;
* per-attempt loss on both wireless hops: 0.001 ("almost lossless") and
  0.1 ("lossy"), and a sweep;
* three flows from ``mobile-a`` to ``mobile-b``, 1000-byte segments, no
  SACK (ns-2's NewReno agent), no delayed ACKs, an initial window of 4
  segments (RFC 5681 for this MSS);
* one earlier session of the same three flows on the same path, in the same
  hour, so that best-start has a history, as the thesis' database would:
  each run is that session (``D`` seconds, stopped, left to finish), then a
  pause, then the measured session of ``D`` seconds (4.8 s as the thesis,
  and 60 s, since 4.8 s is mostly slow start). Only the measured session is
  counted; NewReno and the others ignore the first.

Each variant runs with many seeds; the table gives the mean aggregate
goodput of the three measured flows with a 95 % confidence interval
(Student's t over the seeds), and WSC-TCP's and each part's gain over NewReno
with the interval of the paired per-seed differences.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd

from wavelab._util.table_text import table_text
from wavelab.analysis.seeds import mean_ci
from wavelab.experiments.figures import save
from wavelab.experiments.runs import run_runs
from wavelab.experiments.tables import Markdown, Tables
from wavelab.plot.style import algorithm_style
from wavelab.results.frames import Results
from wavelab.scenario.loading import Scenario, from_dict
from wavelab.sweep.study import StudyRun

WSC_PARTS = ("corrected_rtt", "dynamic_dupthresh", "best_start", "clustering")
"""WSC-TCP's four switches (docs/algorithms/wsc-tcp.md)."""


def _alone(part: str) -> dict[str, Any]:
    return {"algorithm": "wsc-tcp", **{p: p == part for p in WSC_PARTS}}


VARIANTS: dict[str, Any] = {
    "NewReno": "newreno",
    "WSC-TCP": "wsc-tcp",
    "corrected RTT only": _alone("corrected_rtt"),
    "dynamic dupthresh only": _alone("dynamic_dupthresh"),
    "best-start only": _alone("best_start"),
    "clustering only": _alone("clustering"),
    "CUBIC": "cubic",
    "TCP Wave": "wave",
}
"""The rows: the thesis' two, each WSC-TCP part alone, and two extra rows."""

PARTS = tuple(v for v in VARIANTS if v.endswith(" only"))

LOSSLESS = 0.001
LOSSY = 0.1
TABLE_LOSSES = (LOSSLESS, LOSSY)
"""Per-attempt loss of each wireless hop: "almost lossless" and "lossy"."""
SWEEP_LOSSES = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3)
DURATIONS = (4.8, 60.0)
PAUSE = 5.0
"""Seconds between the earlier session's stop and the measured one's start."""
RLL = "500ms"
"""The thesis' initial link-layer retransmission delay, rLL (section 4)."""
FLOWS = 3


@dataclass(frozen=True)
class Cell:
    """One run: a variant on a wireless loss level, for a measured duration, with a seed."""

    variant: str
    loss: float
    duration: float
    seed: int

    @property
    def key(self) -> str:
        slug = self.variant.lower().replace(" ", "-")
        return f"{slug}-p{self.loss:g}-{self.duration:g}s-seed{self.seed}"

    @property
    def start(self) -> float:
        """When the measured session starts."""
        return self.duration + PAUSE


def _wlan(name: str, a: str, b: str, loss: float, report_delay: str) -> dict[str, Any]:
    return {
        "name": name,
        "between": [a, b],
        "rate": "2Mbit/s",
        "delay": "1ms",
        "queue": "50pkt",
        "loss": {"model": "bernoulli", "p": loss},
        "arq": {
            "retries": 7,
            "retry_delay": RLL,
            "order": "out-of-order",
            "report": "all",
            "report_delay": report_delay,
        },
    }


def scenario(cell: Cell) -> Scenario:
    """The scenario of one cell."""
    cc = VARIANTS[cell.variant]
    tcp = {"mss": 1000, "sack": False, "delayed_ack": False, "initial_cwnd": 4}
    flows = []
    for k in range(FLOWS):
        common = {"from": "mobile-a", "to": "mobile-b", "cc": cc, "tcp": tcp}
        flows.append({**common, "name": f"earlier{k}", "start": "0s", "stop": f"{cell.duration}s"})
    for k in range(FLOWS):
        common = {"from": "mobile-a", "to": "mobile-b", "cc": cc, "tcp": tcp}
        flows.append({**common, "name": f"flow{k}", "start": f"{cell.start}s"})
    data = {
        "name": cell.key,
        "duration": f"{cell.start + cell.duration}s",
        "seed": cell.seed,
        "links": [
            _wlan("wlan-a", "mobile-a", "ap1", cell.loss, "0s"),
            {"name": "wired", "between": ["ap1", "ap2"], "rate": "10Mbit/s", "delay": "25ms"},
            _wlan("wlan-b", "ap2", "mobile-b", cell.loss, "27ms"),
        ],
        "flows": flows,
        "output": {"interval": "100ms"},
    }
    return from_dict(data)


def cells(quick: bool, seeds: int | None = None) -> list[Cell]:
    """The runs: the table (every variant, both loss levels, both durations)
    and the loss sweep (NewReno, WSC-TCP and its parts, 60 s); with ``quick``
    NewReno and WSC-TCP at both loss levels, 4.8 s, 3 seeds."""
    if quick:
        n = seeds or 3
        return [
            Cell(v, p, 4.8, s)
            for v in ("NewReno", "WSC-TCP")
            for p in TABLE_LOSSES
            for s in range(1, n + 1)
        ]
    n = seeds or 20
    table = [
        Cell(v, p, d, s)
        for v in VARIANTS
        for p in TABLE_LOSSES
        for d in DURATIONS
        for s in range(1, n + 1)
    ]
    sweep_variants = ("NewReno", "WSC-TCP", *PARTS)
    sweep = [
        Cell(v, p, 60.0, s)
        for v in sweep_variants
        for p in SWEEP_LOSSES
        if p not in TABLE_LOSSES
        for s in range(1, max(n // 2, 2) + 1)
    ]
    return table + sweep


def session_counts(res: Results) -> dict[str, int]:
    """What a run's measured session counted, computed where it ran (the
    store keeps only these numbers of its 1,000 runs): the bytes its flows'
    receivers delivered, their fast retransmissions, timeouts and segments
    received twice (retransmissions that were not needed), and the
    link-layer retransmissions."""
    f = res.flows
    measured = f[f["name"].str.startswith("flow")]
    links = res.links
    return {
        "delivered_bytes": int(measured["bytes_delivered"].sum()),
        "fast_retransmits": int(measured["fast_retransmits"].sum()),
        "timeouts": int(measured["rto_expiries"].sum()),
        "duplicate_segments": int(measured["duplicate_segments"].sum()),
        "link_retries": int(links["arq_retries"].sum()) if "arq_retries" in links else 0,
    }


COUNTS = ("fast_retransmits", "timeouts", "duplicate_segments", "link_retries")
"""The counts of :func:`session_counts` in the runs table, in its column order."""

REDUCE = "wavelab.experiments.wsc_tcp:session_counts@1"
""":func:`session_counts` as the study runner names it (its version goes up
when what it counts changes)."""


def measure(cell: Cell, counts: dict[str, Any]) -> dict[str, Any]:
    """The measured session's figures: aggregate goodput (bytes the
    receivers delivered over the session, in bit/s) and the counts of
    :func:`session_counts`."""
    return {
        "variant": cell.variant,
        "loss": cell.loss,
        "duration_s": cell.duration,
        "seed": cell.seed,
        "goodput_bps": float(counts["delivered_bytes"]) * 8 / cell.duration,
        **{k: counts[k] for k in COUNTS},
    }


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (variant, loss, duration): mean goodput with its 95 % interval,
    the gain over NewReno (paired by seed) with its interval, and the mean
    counts."""
    out = []
    for (variant, loss, dur), g in rows.groupby(["variant", "loss", "duration_s"], sort=False):
        base = rows[
            (rows["variant"] == "NewReno") & (rows["loss"] == loss) & (rows["duration_s"] == dur)
        ].set_index("seed")["goodput_bps"]
        mine = g.set_index("seed")["goodput_bps"]
        common = mine.index.intersection(base.index)
        gain = (mine[common] / base[common] - 1.0) * 100.0
        m, ci = mean_ci(mine.to_numpy())
        gm, gci = mean_ci(gain.to_numpy())
        out.append(
            {
                "variant": variant,
                "loss": loss,
                "duration_s": dur,
                "seeds": len(g),
                "goodput_kbps": m / 1e3,
                "ci_kbps": ci / 1e3,
                "gain_pct": gm,
                "gain_ci_pct": gci,
                "fast_retransmits": g["fast_retransmits"].mean(),
                "timeouts": g["timeouts"].mean(),
                "duplicate_segments": g["duplicate_segments"].mean(),
                "link_retries": g["link_retries"].mean(),
            }
        )
    return pd.DataFrame(out)


def paper_table() -> pd.DataFrame:
    """The thesis' Tables 1-2 (``wsc_tcp_tables.csv``)."""
    ref = resources.files("wavelab.experiments") / "data" / "wsc_tcp_tables.csv"
    with ref.open("r", encoding="utf-8") as fh:
        return pd.read_csv(fh)


def beside_paper(summary: pd.DataFrame) -> pd.DataFrame:
    """Our 4.8 s rows (NewReno and WSC-TCP, both loss levels) beside the
    thesis' aggregate throughput."""
    paper = paper_table().set_index("variant")["aggregate_throughput_bps"]
    rows = []
    for p in TABLE_LOSSES:
        for v in ("NewReno", "WSC-TCP"):
            s = summary[
                (summary["variant"] == v) & (summary["loss"] == p) & (summary["duration_s"] == 4.8)
            ]
            if s.empty:
                continue
            r = s.iloc[0]
            rows.append(
                {
                    "variant": v,
                    "loss": p,
                    "ours_kbps": r["goodput_kbps"],
                    "ci_kbps": r["ci_kbps"],
                    "paper_kbps": paper[v] / 1e3,
                    "ours_gain_pct": r["gain_pct"],
                    "paper_gain_pct": (paper["WSC-TCP"] / paper["NewReno"] - 1) * 100
                    if v == "WSC-TCP"
                    else 0.0,
                }
            )
    return pd.DataFrame(rows)


def sweep_figure(summary: pd.DataFrame, out: Path) -> Path:
    """Gain over NewReno against the per-attempt loss, 60 s runs."""
    fig, ax = plt.subplots(figsize=(7, 4))
    s = summary[summary["duration_s"] == 60.0]
    for v in ("WSC-TCP", *PARTS):
        g = s[s["variant"] == v].sort_values("loss")
        if g.empty:
            continue
        st = algorithm_style(v)
        ax.errorbar(
            g["loss"], g["gain_pct"], yerr=g["gain_ci_pct"], marker=st.marker, color=st.color,
            capsize=3, label=v,
        )  # fmt: skip
    ax.axhspan(7, 22, color="0.85", label="thesis: 7-22 %")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xlabel("per-attempt loss on each wireless hop")
    ax.set_ylabel("goodput gain over NewReno (%)")
    ax.set_title("WSC-TCP and its parts vs NewReno, 60 s, 95 % CI")
    ax.legend(fontsize=8)
    return save(fig, out / "gain_vs_loss.png")


def reproduce(
    out: Path,
    quick: bool,
    jobs: int | None,
    cluster: str | None = None,
    cluster_timeout: float | None = None,
    seeds: int | None = None,
) -> Path:
    """Runs the study (into ``out/store``, resumable), prints and writes our
    table beside the thesis' and the loss sweep's gains, and draws the sweep."""
    out.mkdir(parents=True, exist_ok=True)
    todo = cells(quick, seeds)
    # each run is counted where it ran; the store keeps only its counts
    study = {c.key: StudyRun(scenario(c), tables=False, reduce=REDUCE) for c in todo}
    done = run_runs("wsc-tcp", study, out, jobs, cluster, cluster_timeout)
    rows = pd.DataFrame([measure(c, done.reduced(c.key)) for c in todo])
    summary = summarise(rows)
    paper = beside_paper(summary)
    table = summary[summary["loss"].isin(TABLE_LOSSES)]
    md = (
        Markdown()
        .lines("# WSC-TCP vs NewReno (Srinivasan 2016, section 4)")
        .lines(
            "Aggregate goodput of the three measured flows (kbit/s) with the 95 % interval",
            "over the seeds; gain over NewReno (%), paired by seed, with its interval.",
        )
        .lines("## Beside the thesis' Tables 1-2 (4.8 s)")
        .table(paper, floatfmt=".3g")
        .lines("## Every variant")
        .table(table, floatfmt=".3g")
    )
    if not quick:
        sweep = summary[summary["duration_s"] == 60.0]
        md.lines("## Loss sweep (60 s)").table(sweep, floatfmt=".3g")
        sweep_figure(summary, out)
    tables = Tables(out)
    tables.csv("runs.csv", rows)
    tables.csv("summary.csv", summary)
    tables.csv("beside_thesis.csv", paper)
    tables.markdown("wsc_tcp.md", md)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("Beside the thesis (4.8 s, aggregate goodput in kbit/s; gain over NewReno in %)")
        print(table_text(paper, digits=3))
        print()
        cols = [
            "variant",
            "loss",
            "duration_s",
            "seeds",
            "goodput_kbps",
            "ci_kbps",
            "gain_pct",
            "gain_ci_pct",
            "fast_retransmits",
            "timeouts",
            "duplicate_segments",
        ]
        print(table_text(summary[cols], digits=3))
    return out
