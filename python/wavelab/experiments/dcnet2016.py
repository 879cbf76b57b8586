"""DCNET 2016, "TCP Wave Resilience to Link Changes" (``wavelab reproduce dcnet2016``).

A vertical handover on the bottleneck of sender -- r1 -- r2 -- receiver: at T
the link drops everything in both directions for HT seconds and comes back as
the other link (L1 = 2 Mbit/s / 30 ms, L2 = 8 Mbit/s / 240 ms, 100-packet
buffer). Table 1 of the paper is the recovery time of Wave, Reno, NewReno,
Tahoe and Westwood+ for HT = 0.5, 2 and 10 s in both directions; we add CUBIC
and BBR rows. Figures 2-5 are the sequence numbers around the handover
(NewReno and Wave, HT = 2 s), Figures 6-7 the sender's rate with time
normalised at the handover.

The recovery time is :func:`wavelab.analysis.recovery_time` on the receiver's
goodput (primary), on the bytes crossing the new bottleneck and on the
sender's transmissions; ``R_ss`` comes from a run on the new link alone of the
same length. The handover is at 30 s, or at 300 s for the window-based
variants on L2 -> L1 (they need that long to fill L2), as in the paper.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from wavelab._util.table_text import table_text
from wavelab.analysis import handover_recovery as analysis
from wavelab.experiments.figures import save
from wavelab.experiments.runs import run_runs
from wavelab.experiments.tables import Markdown, Tables
from wavelab.plot.style import OKABE_ITO, algorithm_style
from wavelab.results.frames import Results
from wavelab.scenario.builtin import builtin_scenario
from wavelab.scenario.loading import Scenario
from wavelab.sweep.study import StudyRun

PAPER_VARIANTS = ("Wave", "Reno", "NewReno", "Tahoe", "Westwood+")
"""The rows of the paper's Table 1."""
EXTRA_VARIANTS = (
    "CUBIC",
    "BBR",
    "Wave linux-4.12",
    "Wave netdev-2017",
    "Wave beta=inf",
    "NewReno impatient",
)
"""Rows we add: CUBIC and BBR (with SACK, as Linux runs them); TCP Wave as
the Linux module's revisions run it (``variant = "linux-4.12"`` and
``"netdev-2017"``: beta 150 ms, TxTime0 500 and 200 ms); two sensitivity
rows: TCP Wave without adjustment mode (beta so large it never triggers),
which shows what adjustment mode does after a path change, and NewReno with
RFC 6582's "impatient" timer instead of the study's "slow-but-steady" one."""
ALGORITHM = {
    "Wave": "wave",
    "Reno": "reno",
    "NewReno": "newreno",
    "Tahoe": "tahoe",
    "Westwood+": "westwood",
    "CUBIC": "cubic",
    "BBR": "bbr",
    "Wave linux-4.12": "wave",
    "Wave netdev-2017": "wave",
    "Wave beta=inf": "wave",
    "NewReno impatient": "newreno",
}
"""wavelab's algorithm name of each variant."""
CC_OVERRIDES: dict[str, dict[str, Any]] = {
    "Wave linux-4.12": {"algorithm": "wave", "variant": "linux-4.12"},
    "Wave netdev-2017": {"algorithm": "wave", "variant": "netdev-2017"},
    "Wave beta=inf": {"algorithm": "wave", "beta": "1h"},
}
"""Algorithm parameters of variants that are not the defaults."""
TCP_OVERRIDES: dict[str, dict[str, Any]] = {
    "CUBIC": {"sack": True},
    "BBR": {"sack": True},
    "NewReno impatient": {"partial_ack_timer": "impatient"},
}
"""TCP settings of variants that differ from the scenario's (the paper's
ns-3.23 TCPs had no SACK)."""
SLUGS = {
    "Wave linux-4.12": "wave-linux412",
    "Wave netdev-2017": "wave-netdev2017",
    "Wave beta=inf": "wave-nobeta",
    "NewReno impatient": "newreno-impatient",
}
"""Run names of the variants that share an algorithm with another."""
HOLD = 10.0
"""Seconds the rate must stay recovered for the sustained recovery time."""
WINDOW_BASED = frozenset({"Reno", "NewReno", "Tahoe", "Westwood+", "CUBIC", "NewReno impatient"})
"""Variants whose L2 -> L1 handover is at 300 s (the paper's rule)."""
HTS = (0.5, 2.0, 10.0)
DIRECTIONS = ("L1L2", "L2L1")
LINKS: dict[str, dict[str, str]] = {
    "L1": {"rate": "2Mbit/s", "delay": "30ms"},
    "L2": {"rate": "8Mbit/s", "delay": "240ms"},
}
AFTER = 450.0
"""Seconds simulated after the handover starts (the horizon is AFTER - HT)."""
BOTTLENECK_DIR = 2
"""The bottleneck's forward direction (link 1) in the queue series."""
FIGURE_HT = 2.0
"""The handover time of Figures 2-7 (the paper's baseline)."""
FIGURE_SPAN = {"L1L2": 12.0, "L2L1": 22.0}
"""Seconds after T + HT that Figures 2-5 show (the paper's figures' span)."""


@dataclass(frozen=True)
class Cell:
    """One cell of Table 1."""

    variant: str
    ht: float
    direction: str

    @property
    def algorithm(self) -> str:
        return ALGORITHM[self.variant]

    @property
    def slug(self) -> str:
        return SLUGS.get(self.variant, self.algorithm)

    @property
    def key(self) -> str:
        return f"{self.slug}-{self.direction}-ht{self.ht:g}"

    @property
    def handover_at(self) -> float:
        """T: 300 s for window-based variants on L2 -> L1, else 30 s."""
        return 300.0 if self.direction == "L2L1" and self.variant in WINDOW_BASED else 30.0

    @property
    def t0(self) -> float:
        """When the new link comes up, T + HT."""
        return self.handover_at + self.ht

    @property
    def old(self) -> str:
        return self.direction[:2]

    @property
    def new(self) -> str:
        return self.direction[2:]

    @property
    def baseline_key(self) -> str:
        return f"baseline-{self.slug}-{self.new}-{self.handover_at + AFTER:g}s"


def cells(quick: bool) -> list[Cell]:
    """The table's cells: all 42, or Wave and NewReno at HT = 2 s for --quick."""
    if quick:
        return [Cell(v, FIGURE_HT, d) for v in ("Wave", "NewReno") for d in DIRECTIONS]
    return [
        Cell(v, ht, d) for v in PAPER_VARIANTS + EXTRA_VARIANTS for ht in HTS for d in DIRECTIONS
    ]


def _link(name: str) -> dict[str, str]:
    return LINKS[name]


def _flow_changes(cell: Cell) -> dict[str, Any]:
    changes: dict[str, Any] = {"flows[0].cc": CC_OVERRIDES.get(cell.variant, cell.algorithm)}
    for key, value in TCP_OVERRIDES.get(cell.variant, {}).items():
        changes[f"flows[0].tcp.{key}"] = value
    return changes


def cell_scenario(cell: Cell, duration: float | None = None, log: bool = False) -> Scenario:
    """The handover run of a cell (``duration`` defaults to T + AFTER)."""
    base = builtin_scenario("dcnet2016-handover")
    old = _link(cell.old)
    handover = {"at": f"{cell.handover_at:g}s", "outage": f"{cell.ht:g}s", **_link(cell.new)}
    changes: dict[str, Any] = {
        "name": f"dcnet2016-{cell.key}",
        "duration": f"{duration if duration is not None else cell.handover_at + AFTER:g}s",
        "links[1].rate": old["rate"],
        "links[1].delay": old["delay"],
        "links[1].handovers": [handover],
        **_flow_changes(cell),
    }
    if log:
        changes["flows[0].log_packets"] = True
    return base.with_changes(changes)


def baseline_scenario(cell: Cell) -> Scenario:
    """The run on the new link alone, as long as the cell's run: gives R_ss."""
    new = _link(cell.new)
    return builtin_scenario("dcnet2016-handover").with_changes(
        {
            "name": f"dcnet2016-{cell.baseline_key}",
            "duration": f"{cell.handover_at + AFTER:g}s",
            "links[1].rate": new["rate"],
            "links[1].delay": new["delay"],
            "links[1].handovers": [],
            **_flow_changes(cell),
        }
    )


def figure_cells() -> list[Cell]:
    """The cells of Figures 2-5 (NewReno and Wave, HT = 2 s, both directions)."""
    return [Cell(v, FIGURE_HT, d) for d in DIRECTIONS for v in ("NewReno", "Wave")]


def figure_key(cell: Cell) -> str:
    return f"trace-{cell.key}"


def scenarios(quick: bool) -> dict[str, Scenario]:
    """Every run: the cells, their baselines, and the packet-logged runs of
    Figures 2-5 (the cells' scenarios cut short after the handover: runs are
    deterministic, so their first seconds are the cells' own)."""
    out: dict[str, Scenario] = {}
    for c in cells(quick):
        out[c.key] = cell_scenario(c)
        out.setdefault(c.baseline_key, baseline_scenario(c))
    for c in figure_cells():
        out[figure_key(c)] = cell_scenario(c, duration=c.t0 + FIGURE_SPAN[c.direction], log=True)
    return out


def paper_table() -> pd.DataFrame:
    """Table 1 of the paper (variant, ht_s, direction, recovery_s, note)."""
    text = (
        resources.files("wavelab.experiments")
        .joinpath("data/dcnet2016_table1.csv")
        .read_text(encoding="utf-8")
    )
    return pd.read_csv(io.StringIO(text), keep_default_na=False)


def _capacity(link: str, mss: float = 960.0) -> float:
    """Payload capacity (bit/s) of a link at 1000-byte packets."""
    rate = {"L1": 2e6, "L2": 8e6}[link]
    return rate * mss / (mss + 40)


def _rate_between(res: Results, a: float, b: float) -> float:
    s = res.series[res.series["flow"] == 0]
    t = s["time"].to_numpy(dtype=float)
    v = s["bytes_delivered"].to_numpy(dtype=float)
    ia = int(np.searchsorted(t, a + 1e-9, side="right")) - 1
    ib = int(np.searchsorted(t, b + 1e-9, side="right")) - 1
    return float((v[ib] - v[max(ia, 0)]) * 8 / (b - a))


def measure(runs: Mapping[str, Results], quick: bool) -> pd.DataFrame:
    """One row per cell: our recovery times beside the paper's."""
    paper = paper_table()
    rows = []
    for c in cells(quick):
        run, base = runs[c.key], runs[c.baseline_key]
        rec = analysis.recovery(run, base, c.t0, link_dir=BOTTLENECK_DIR)
        held = analysis.recovery(run, base, c.t0, link_dir=BOTTLENECK_DIR, hold=HOLD)
        r_ss = analysis.steady_rate(analysis.cumulative(base, "goodput"))
        match = paper[
            (paper["variant"] == c.variant)
            & (np.isclose(paper["ht_s"].astype(float), c.ht))
            & (paper["direction"] == c.direction)
        ]
        published = float(match["recovery_s"].iloc[0]) if len(match) else float("nan")
        ours = rec["goodput"].seconds
        rows.append(
            {
                "variant": c.variant,
                "ht_s": c.ht,
                "direction": c.direction,
                "handover_s": c.handover_at,
                "paper_s": published,
                "goodput_s": np.nan if ours is None else ours,
                "bottleneck_s": _secs(rec["bottleneck"]),
                "sender_s": _secs(rec["sender"]),
                "sustained_s": _secs(held["goodput"]),
                "horizon_s": rec["goodput"].horizon,
                "ratio": np.nan if ours is None or np.isnan(published) else ours / published,
                "r_ss_mbps": r_ss / 1e6,
                "before_mbps": _rate_between(run, c.handover_at - 5.0, c.handover_at) / 1e6,
                "old_capacity_mbps": _capacity(c.old) / 1e6,
            }
        )
    return pd.DataFrame(rows)


def _secs(r: analysis.Recovery) -> float:
    return np.nan if r.seconds is None else r.seconds


def _fmt(seconds: float, horizon: float) -> str:
    if np.isnan(seconds):
        return f">{horizon:.0f}"
    return f"{seconds:.1f}" if seconds < 100 else f"{seconds:.0f}"


def side_by_side(table: pd.DataFrame, column: str = "goodput_s") -> pd.DataFrame:
    """The paper's layout: a row per variant, a column per (HT, direction),
    each cell "ours / paper" in seconds (">N": not recovered within N s)."""
    out: dict[str, dict[str, str]] = {}
    for _, r in table.iterrows():
        col = f"HT={r['ht_s']:g} {r['direction']}"
        paper = "-" if np.isnan(r["paper_s"]) else f"{r['paper_s']:g}"
        out.setdefault(str(r["variant"]), {})[col] = f"{_fmt(r[column], r['horizon_s'])} / {paper}"
    frame = pd.DataFrame.from_dict(out, orient="index")
    order = [f"HT={ht:g} {d}" for ht in HTS for d in DIRECTIONS]
    frame = frame[[c for c in order if c in frame.columns]]
    frame.index.name = "variant"
    return frame


def disagreements(table: pd.DataFrame, factor: float = 2.0) -> pd.DataFrame:
    """Cells where ours and the paper's differ by more than ``factor`` (a cell
    not recovered counts only if its horizon alone is that far off)."""
    t = table[~table["paper_s"].isna()].copy()
    ours = t["goodput_s"].fillna(t["horizon_s"])
    off = (ours > factor * t["paper_s"]) | (ours < t["paper_s"] / factor)
    return t[off][["variant", "ht_s", "direction", "paper_s", "goodput_s", "horizon_s"]]


# ----- figures ---------------------------------------------------------------


def sequence_figure(res: Results, cell: Cell, title: str) -> Figure:
    """Sequence numbers (in segments) of the packets the sender sent and of the
    ACKs it received, around the handover; the outage is shaded."""
    mss = 960.0
    log = res.packets
    a, b = cell.handover_at - 1.0, cell.t0 + FIGURE_SPAN[cell.direction]
    log = log[(log["time"] >= a) & (log["time"] <= b)]
    ev = log["event"].astype(str)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for name, sel, style in [
        ("sent", ev == "send", dict(marker=".", ms=2, color=OKABE_ITO["blue"])),
        (
            "retransmitted",
            ev == "retransmit",
            dict(marker="x", ms=3, color=OKABE_ITO["vermillion"]),
        ),
        ("ACK received", ev == "ack", dict(marker=".", ms=1.5, color=OKABE_ITO["bluish green"])),
    ]:
        part = log[sel]
        ax.plot(part["time"], part["seq"] / mss, ls="none", label=name, **style)  # type: ignore[arg-type]
    ax.axvspan(
        cell.handover_at, cell.t0, color="grey", alpha=0.2, label=f"outage (HT={cell.ht:g} s)"
    )
    # the sender's data sets the scale; ACKs far below it (a hole from an
    # earlier loss still being repaired) are noted, not plotted
    data = log[(ev == "send") | (ev == "retransmit")]["seq"] / mss
    if len(data):
        lo, hi = float(data.min()), float(data.max())
        margin = max(10.0, 0.05 * (hi - lo))
        ax.set_ylim(lo - margin, hi + margin)
        acks = log[ev == "ack"]["seq"] / mss
        if len(acks) and float(acks.min()) < lo - margin:
            ax.text(
                0.99,
                0.02,
                f"cumulative ACKs as low as segment {acks.min():.0f} (below the plot)",
                transform=ax.transAxes,
                ha="right",
                fontsize=8,
            )
    ax.set(xlabel="time (s)", ylabel="sequence number (segments)", title=title)
    ax.legend(loc="upper left", markerscale=4, fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def sender_rate(res: Results, step: float = 0.5) -> pd.Series:
    """The sender's transmission rate (bit/s, retransmissions included) over
    consecutive ``step``-second bins, indexed by the bin's end."""
    c = analysis.cumulative(res, "sender")
    t = c.index.to_numpy(dtype=float)
    edges = np.arange(0.0, t[-1] + 1e-9, step)
    i = np.searchsorted(t, edges + 1e-9, side="right") - 1
    v = c.to_numpy(dtype=float)[np.clip(i, 0, None)]
    return pd.Series(np.diff(v) * 8 / step, index=edges[1:])


def rate_figure(runs: Mapping[str, Results], direction: str, title: str) -> Figure:
    """Figures 6-7: the sender's rate of NewReno and Wave (HT = 2 s) against
    time since the handover; the whole horizon above, its first 20 s below."""
    fig, (top, zoom) = plt.subplots(2, 1, figsize=(9, 6.5))
    for variant in ("NewReno", "Wave"):
        cell = Cell(variant, FIGURE_HT, direction)
        if cell.key not in runs:
            continue
        r = sender_rate(runs[cell.key])
        x = r.index.to_numpy() - cell.handover_at
        for ax in (top, zoom):
            colour = algorithm_style(variant).color
            ax.plot(x, r.to_numpy() / 1e6, lw=0.9, label=variant, color=colour)
    new = direction[2:]
    for ax, (lo, hi) in [(top, (-10.0, AFTER - FIGURE_HT)), (zoom, (-3.0, 20.0))]:
        ax.axvspan(0, FIGURE_HT, color="grey", alpha=0.2)
        ax.axhline(_capacity(new) / 1e6, ls="--", color="grey", lw=0.8)
        ax.set(xlim=(lo, hi), xlabel="time since the handover (s)", ylabel="Mbit/s")
        ax.grid(alpha=0.3)
    top.set_title(title)
    top.legend()
    return fig


def figures(runs: Mapping[str, Results], out: Path) -> list[Path]:
    """Figures 2-7 of the paper, from our runs."""
    files = []
    titles = {
        ("NewReno", "L1L2"): ("fig2_newreno_l1l2.png", "Fig. 2: NewReno, handover L1 -> L2"),
        ("Wave", "L1L2"): ("fig3_wave_l1l2.png", "Fig. 3: TCP Wave, handover L1 -> L2"),
        ("NewReno", "L2L1"): ("fig4_newreno_l2l1.png", "Fig. 4: NewReno, handover L2 -> L1"),
        ("Wave", "L2L1"): ("fig5_wave_l2l1.png", "Fig. 5: TCP Wave, handover L2 -> L1"),
    }
    for c in figure_cells():
        name, title = titles[(c.variant, c.direction)]
        fig = sequence_figure(runs[figure_key(c)], c, title + f" (HT = {c.ht:g} s)")
        files.append(save(fig, out / name))
    for num, d in ((6, "L1L2"), (7, "L2L1")):
        fig = rate_figure(runs, d, f"Fig. {num}: sender rate, handover {d[:2]} -> {d[2:]}")
        files.append(save(fig, out / f"fig{num}_rate_{d.lower()}.png"))
    return files


def reproduce(
    out: Path,
    quick: bool,
    jobs: int | None,
    cluster: str | None = None,
    cluster_timeout: float | None = None,
) -> Path:
    """Runs the study (into ``out/store``, resumable), prints and writes our
    table beside the paper's, and draws Figures 2-7."""
    out.mkdir(parents=True, exist_ok=True)
    study = {k: StudyRun(sc) for k, sc in scenarios(quick).items()}
    # every run is read back from the store when it is needed, one at a
    # time: holding the 92 runs' tables took 1.1 GB (docs/performance.md)
    runs = run_runs("dcnet2016", study, out, jobs, cluster, cluster_timeout).results
    table = measure(runs, quick)
    wide = side_by_side(table)
    held = side_by_side(table, "sustained_s")
    off = disagreements(table)
    md = (
        Markdown()
        .lines(
            "# DCNET 2016 Table 1: recovery time (s), ours / paper",
        )
        .lines(
            "Receiver goodput over a 1 s window first reaching 0.9 R_ss after T + HT;",
            "'>N': not recovered within the N s simulated after T + HT.",
        )
        .table(wide, index=True)
        .lines(f"## Sustained: the same, and staying there for {HOLD:g} s")
        .table(held, index=True)
        .lines("## Every cell")
        .table(table, floatfmt=".3g")
        .lines(f"## Cells that differ from the paper by more than 2x ({len(off)})")
    )
    if len(off):
        md.table(off, floatfmt=".3g")
    else:
        md.lines("(none)")
    tables = Tables(out)
    tables.csv("recovery.csv", table)
    tables.markdown("table1.md", md)
    tables.csv("table1.csv", wide, index=True)
    figures(runs, out)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("Recovery time (s), ours / paper ('>N': not recovered within N s)")
        print(table_text(wide.reset_index()))
        print(f"\nSustained for {HOLD:g} s, ours / paper")
        print(table_text(held.reset_index()))
        print()
        cols = [
            "variant",
            "ht_s",
            "direction",
            "paper_s",
            "goodput_s",
            "ratio",
            "sustained_s",
            "bottleneck_s",
            "sender_s",
            "r_ss_mbps",
        ]
        # a recovery time that never came: NaN in the table, "not reached" here
        recovery = ["goodput_s", "sustained_s", "bottleneck_s", "sender_s"]
        print(table_text(table[cols], digits=3, not_reached=recovery))
    return out
