"""MobiWac 2009, "The Performance of Multiple TCP Flows with Vertical Handoff"
(``wavelab reproduce mobiwac2009``).

Daniel and Kojo's topology (section 4.1): a server, an access router and two
base stations on 100 Mbit/s, 2 ms links, and a mobile node behind both base
stations on two access links, each with a router buffer of max(BDP, 5)
packets; 1, 2 or 4 bulk flows from the server to the mobile node with
1500-byte packets. The mobile node hands off from the old access link to
the new one, make-before-break or break-before-make (1 s disconnection), at
one of 200 instants (every 100 ms over the first 20 s of the flows); the
metric is the time from the handoff until the slowest flow has 100 packets
(500 for Figures 15 and 19) more acknowledged. The 16 handoffs are the
paper's Figures 4-19 (``data/mobiwac2009_scenarios.csv``, from
``../shared/reference``), each run with regular TCP (TCP with SACK), ETCPv0
and ETCPv1, and with TCP Wave and CUBIC, which the paper does not have.

The study is a sweep (16 handoffs x 200 instants x 3 flow counts x 5 TCPs =
48,000 runs) run by the sweep machinery: the results store under
``OUT/sweep`` (resumable: the same command again runs only what is
missing), all local cores or a Dask cluster, a progress bar. The transfer
time is the handoff's own measurement (``handoffs[0].transfer``, the
``transfer_s`` column of the runs table), and a run ends as soon as its
slowest flow has its packets (``stop = true``).

Set-up choices where the paper is silent (docs/experiments/mobiwac2009.md):
the notification reaches the sender at the route switch for a
make-before-break handoff (the mobility signalling that switches the
server's route carries it) and ``disconnection`` + the new path's one-way
delay after it for a break-before-make one (sent when the new link comes
up); ns-2's 200 ms minimum RTO (the paper's simulator; RFC 6298 says 1 s),
an ACK for every segment (ns-2's SACK sink), RFC 3390's initial window of 3
segments and no receiver-window limit, for every TCP.
"""

from __future__ import annotations

import csv
import io
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from wavelab._util.table_text import table_text
from wavelab.errors import WavelabError
from wavelab.experiments.figures import save
from wavelab.experiments.runs import backend_for
from wavelab.experiments.tables import Markdown, Tables
from wavelab.plot.style import algorithm_style
from wavelab.scenario.toml_text import parse_toml
from wavelab.sweep.backends import Backend
from wavelab.sweep.grid import Sweep, from_sweep_dict
from wavelab.sweep.runner import run_sweep, summary_line

PACKET = 1500
"""Bytes per packet, headers included (section 4.1)."""
MSS = PACKET - 40
FIXED_DELAY_S = 0.004
"""One way from the server to a base station: two 2 ms links."""
INSTANT_STEP = 0.1
INSTANTS = 200
"""Handoffs every 100 ms over the first 20 s of the flows (section 4.1)."""
FLOWS = (1, 2, 4)
TCPS: dict[str, str] = {
    "regular": "newreno",
    "ETCPv0": "etcpv0",
    "ETCPv1": "etcpv1",
    "Wave": "wave",
    "CUBIC": "cubic",
}
"""The rows: the paper's three TCPs (regular TCP is TCP with SACK, RFC 6675
recovery; wavelab's NewReno with SACK on), then TCP Wave and CUBIC."""
PAPER_TCPS = ("regular", "ETCPv0", "ETCPv1")
MIN_RTO = "200ms"
"""ns-2's minrto_ (the paper's simulator); see the module description."""
INITIAL_CWND = 3
"""RFC 3390's initial window for 1460-byte segments."""
TCP: dict[str, Any] = {
    "mss": MSS,
    "initial_cwnd": INITIAL_CWND,
    "min_rto": MIN_RTO,
    "delayed_ack": False,
}
"""Every flow's TCP settings: ns-2's SACK sink acknowledges every segment
(no delayed ACKs); SACK and DSACK on (wavelab's defaults); no receiver
limit (64 MiB)."""
AFTER_S = 120.0
"""Longest a run continues after the last handoff instant (it normally ends
when its transfers are measured)."""
QUICK_FIGURES = (6, 9, 13, 17)
"""--quick: one handoff of each kind and direction, where the paper's
mechanisms act (Figure 1's window cut, Figure 2 twice, Figure 3)."""
QUICK_INSTANTS = 20
"""--quick: a handoff every second."""


@dataclass(frozen=True)
class Handoff:
    """One of the paper's 16 handoffs (a row of the CSV)."""

    figure: int
    direction: str
    kind: str
    old: tuple[int, int]
    """Rate (kbit/s) and one-way delay (ms) of the old access link."""
    new: tuple[int, int]
    disconnection: float
    packets: int
    reported: str

    @property
    def label(self) -> str:
        k = "MBB" if self.kind == "make-before-break" else "BBM"
        return f"Fig. {self.figure}: {k} {self.old[0]}/{self.old[1]} -> {self.new[0]}/{self.new[1]}"

    @property
    def notify_delay(self) -> float:
        """When the sender learns of the handoff, after the switch (seconds)."""
        if self.kind == "make-before-break":
            return 0.0
        return self.disconnection + self.new[1] / 1000 + FIXED_DELAY_S


def bdp_packets(kbps: int, delay_ms: int) -> float:
    """An access link's BDP as the paper counts it: rate x 2 x its delay, in
    1500-byte packets (200 kbit/s and 300 ms: "10 packets")."""
    return kbps * 1000 * 2 * delay_ms / 1000 / 8 / PACKET


def buffer_packets(kbps: int, delay_ms: int) -> int:
    """The router buffer of an access link: max(BDP, 5) packets (rounded)."""
    return max(round(bdp_packets(kbps, delay_ms)), 5)


def handoffs() -> list[Handoff]:
    """The 16 handoffs of the paper, in figure order."""
    text = (
        resources.files("wavelab.experiments")
        .joinpath("data/mobiwac2009_scenarios.csv")
        .read_text(encoding="utf-8")
    )
    out = []
    for r in csv.DictReader(io.StringIO(text)):
        out.append(
            Handoff(
                figure=int(r["figure"]),
                direction=r["class"],
                kind=r["handoff"],
                old=(int(r["old_kbps"]), int(r["old_delay_ms"])),
                new=(int(r["new_kbps"]), int(r["new_delay_ms"])),
                disconnection=float(r["disconnect_s"]),
                packets=int(r["packets_after"]),
                reported=r["reported"],
            )
        )
    return out


def _q(v: Any) -> str:
    """A TOML value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_q(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_q(x) for x in v) + "]"
    raise TypeError(v)


def _secs(s: float) -> str:
    return f"{round(s, 6):g}s"


def handoff_table(h: Handoff, at: float) -> dict[str, Any]:
    """The ``handoffs[0]`` entry of a handoff at ``at`` seconds."""
    d: dict[str, Any] = {
        "node": "mobile",
        "at": _secs(at),
        "from": "old",
        "to": "new",
        "kind": h.kind,
    }
    if h.kind == "break-before-make":
        d["disconnection"] = _secs(h.disconnection)
    d["notify"] = {"delay": _secs(h.notify_delay)}
    d["transfer"] = {"packets": h.packets, "stop": True}
    return d


def _link_values(h: Handoff) -> list[Any]:
    return [
        f"{h.old[0]}kbit/s",
        f"{h.old[1]}ms",
        f"{buffer_packets(*h.old)}pkt",
        f"{h.new[0]}kbit/s",
        f"{h.new[1]}ms",
        f"{buffer_packets(*h.new)}pkt",
    ]


HANDOFF_KEY = (
    "description,links[3].rate,links[3].delay,links[3].queue,"
    "links[4].rate,links[4].delay,links[4].queue,handoffs[0]"
)
"""The sweep key that sets a handoff of the paper: its label (the
``description`` column of the runs table), both access links and the
handoff entry."""


def scenario_text(h: Handoff, at: float = 10.0, flows: int = 1, tcp: str = "regular") -> str:
    """The scenario of one run, as TOML (without a sweep)."""
    first = _link_values(h)
    lines = [
        'name = "mobiwac2009"',
        f"description = {_q(h.label)}",
        f"duration = {_q(_secs(INSTANTS * INSTANT_STEP + AFTER_S))}",
        "seed = 1",
        "",
        "[output]",
        'interval = "1s"',
        "queues = false",
        "",
    ]
    links = [
        ("wired", ["server", "router"], "100Mbit/s", "2ms", None),
        ("bs1-wire", ["router", "bs1"], "100Mbit/s", "2ms", None),
        ("bs2-wire", ["router", "bs2"], "100Mbit/s", "2ms", None),
        ("old", ["bs1", "mobile"], first[0], first[1], first[2]),
        ("new", ["bs2", "mobile"], first[3], first[4], first[5]),
    ]
    for name, between, rate, delay, queue in links:
        lines += ["[[links]]", f"name = {_q(name)}", f"between = {_q(between)}"]
        lines += [f"rate = {_q(rate)}", f"delay = {_q(delay)}"]
        if queue:
            lines.append(f"queue = {_q(queue)}")
        lines.append("")
    lines += [
        "[[flows]]",
        'name = "bulk"',
        'from = "server"',
        'to = "mobile"',
        f"cc = {_q(TCPS[tcp])}",
        f"count = {flows}",
        f"tcp = {_q(TCP)}",
        "",
        "[[handoffs]]",
    ]
    lines += [f"{k} = {_q(v)}" for k, v in handoff_table(h, at).items()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Grid:
    """What a run of the study covers."""

    figures: tuple[int, ...]
    instants: tuple[float, ...]
    flows: tuple[int, ...] = FLOWS
    tcps: tuple[str, ...] = tuple(TCPS)

    @property
    def runs(self) -> int:
        return len(self.figures) * len(self.instants) * len(self.flows) * len(self.tcps)


def full_grid() -> Grid:
    """The paper's grid: every figure, 200 instants."""
    return Grid(
        tuple(h.figure for h in handoffs()),
        tuple(round(INSTANT_STEP * k, 6) for k in range(1, INSTANTS + 1)),
    )


def quick_grid() -> Grid:
    """Four handoffs, an instant every second."""
    return Grid(QUICK_FIGURES, tuple(float(k) for k in range(1, QUICK_INSTANTS + 1)))


def sweep_text(grid: Grid) -> str:
    """The study as a sweep file (``wavelab sweep`` runs it too)."""
    chosen = [h for h in handoffs() if h.figure in grid.figures]
    if not chosen:
        raise WavelabError(f"no figure of the paper among {list(grid.figures)}")
    rows = [[h.label, *_link_values(h), handoff_table(h, 10.0)] for h in chosen]
    at = [_secs(t) for t in grid.instants]
    sweep = [
        "[sweep]",
        f'"{HANDOFF_KEY}" = [',
        *(f"  {_q(r)}," for r in rows),
        "]",
        f'"handoffs[0].at" = {_q(at)}',
        f'"flows[0].count" = {_q(list(grid.flows))}',
        f'"flows[0].cc" = {_q([TCPS[t] for t in grid.tcps])}',
    ]
    # the base scenario is the same for every grid (the first handoff of the
    # paper; the sweep sets each point's own), so that --quick and the full
    # study share one store
    return scenario_text(handoffs()[0]) + "\n" + "\n".join(sweep) + "\n"


def study_sweep(grid: Grid) -> Sweep:
    """The sweep of ``grid``."""
    text = sweep_text(grid)
    return from_sweep_dict(
        parse_toml(text, "mobiwac2009: ", WavelabError), Path("mobiwac2009.toml"), text
    )


# ----- the metric ---------------------------------------------------------------


TCP_OF = {v: k for k, v in TCPS.items()}


def quartiles(x: np.ndarray) -> list[float]:
    """Lower quartile, median and upper quartile of transfer times, where a
    run whose flows did not all get their packets (NaN) counts as longer than
    any that did: a quartile that falls among those is NaN ("not reached
    within the run"), not the quartile of the runs that finished."""
    if not len(x):
        return [math.nan] * 3
    s = np.sort(np.where(np.isnan(x), np.inf, x))
    out = []
    for p in (0.25, 0.5, 0.75):
        # linear interpolation between the order statistics (numpy's default)
        pos = p * (len(s) - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        if math.isinf(s[hi]):
            out.append(math.nan)
        else:
            out.append(float(s[lo] + (s[hi] - s[lo]) * (pos - lo)))
    return out


def cells(table: pd.DataFrame) -> pd.DataFrame:
    """The runs table (one row per run) reduced to one row per figure, TCP
    and flow count: the quartiles of the slowest flow's transfer time over
    the handoff instants, and the mean counters per run."""
    by_label = {h.label: h for h in handoffs()}
    t = table[table["status"] == "ok"].copy()
    t["figure"] = [by_label[d].figure for d in t["description"]]
    t["tcp"] = [TCP_OF[c] for c in t["flows[0].cc"]]
    t["flows"] = t["flows[0].count"].astype(int)
    rows = []
    for (fig, tcp, n), g in t.groupby(["figure", "tcp", "flows"], sort=False):
        x = g["transfer_s"].to_numpy(dtype=float)
        q = quartiles(x)
        rows.append(
            {
                "figure": fig,
                "tcp": tcp,
                "flows": n,
                "runs": len(g),
                "unfinished": int(np.isnan(x).sum()),
                "q1_s": q[0],
                "median_s": q[1],
                "q3_s": q[2],
                "retransmissions": g["retransmissions"].mean(),
                "spurious": g["spurious_retransmissions"].mean(),
                "fast_retransmits": g["fast_retransmits"].mean(),
                "rtos": g["rto_expiries"].mean(),
            }
        )
    out = pd.DataFrame(rows)
    order = {t: i for i, t in enumerate(TCPS)}
    out["_o"] = out["tcp"].map(order)
    return out.sort_values(["figure", "flows", "_o"]).drop(columns="_o").reset_index(drop=True)


def floor_s(h: Handoff, flows: int) -> float:
    """The least transfer time the new link allows: the disconnection, then
    ``flows`` x ``packets`` 1500-byte packets at its rate (the slowest of
    ``flows`` flows sharing it fairly). Packets already in flight when the
    handoff happens can make a measured time a little shorter."""
    return h.disconnection + flows * h.packets * PACKET * 8 / (h.new[0] * 1000)


def reductions(c: pd.DataFrame) -> pd.DataFrame:
    """Per figure and flow count: the floor of :func:`floor_s`, each TCP's
    median beside regular TCP's, and its reduction of regular TCP's median
    (percent; positive = faster)."""
    by_fig = {h.figure: h for h in handoffs()}
    rows = []
    for (fig, n), g in c.groupby(["figure", "flows"], sort=True):
        med = dict(zip(g["tcp"], g["median_s"], strict=True))
        reg = med.get("regular", math.nan)
        row: dict[str, Any] = {
            "figure": fig,
            "flows": n,
            "floor_s": floor_s(by_fig[int(str(fig))], int(str(n))),
        }
        for tcp in TCPS:
            if tcp in med:
                row[f"{tcp}_s"] = med[tcp]
                if tcp != "regular":
                    row[f"{tcp}_%"] = 100 * (1 - med[tcp] / reg) if reg > 0 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


# ----- the paper's statements ---------------------------------------------------

ALL = FLOWS


@dataclass(frozen=True)
class Claim:
    """One statement of the paper about a figure, checkable on our medians."""

    text: str
    tcp: str
    flows: tuple[int, ...]
    kind: str
    """``about`` (a reduction of about ``lo`` %), ``range`` (``lo``-``hi`` %),
    ``more`` (more than ``lo`` %), ``equal`` (within 15 %), ``worse``
    (slower than ``than``), ``fewer-spurious`` (fewer spurious
    retransmissions than regular TCP)."""
    lo: float = 0.0
    hi: float = 0.0
    than: str = "regular"


TOLERANCE = 15.0
"""Percentage points of reduction within which "about X %" agrees; a range
agrees within 10 points of its ends, "more than X %" from X - 10; "equal"
means within 15 % of regular TCP's median."""

CLAIMS: dict[int, list[Claim]] = {
    4: [
        Claim("1 flow: ETCPv1 about 40 % less", "ETCPv1", (1,), "about", 40),
        Claim("1 flow: ETCPv0 about 40 % less", "ETCPv0", (1,), "about", 40),
        Claim("2 flows: similar (about 40 % less)", "ETCPv1", (2,), "about", 40),
        Claim("4 flows: ETCPv1 about equal to regular TCP", "ETCPv1", (4,), "equal"),
        Claim("4 flows: ETCPv0 worse than regular TCP", "ETCPv0", (4,), "worse"),
        Claim("4 flows: ETCPv0 worse than ETCPv1", "ETCPv0", (4,), "worse", than="ETCPv1"),
    ],
    5: [
        Claim("1 flow: ETCPv1 about 40 % less", "ETCPv1", (1,), "about", 40),
        Claim("1 flow: ETCPv0 about 40 % less", "ETCPv0", (1,), "about", 40),
        Claim("2 and 4 flows: ETCPv1 up to 30 % less", "ETCPv1", (2, 4), "range", 0, 30),
    ],
    6: [
        Claim("1 flow: ETCPv1 about 60 % less", "ETCPv1", (1,), "about", 60),
        Claim("1 flow: ETCPv0 about 60 % less", "ETCPv0", (1,), "about", 60),
        Claim("2 flows: ETCPv1 about 50 % less", "ETCPv1", (2,), "about", 50),
        Claim("4 flows: ETCPv1 about 50 % less", "ETCPv1", (4,), "about", 50),
        Claim("4 flows: ETCPv0 about 35 % less", "ETCPv0", (4,), "about", 35),
    ],
    7: [Claim("ETCPv1 20-40 % less, 1 to 4 flows", "ETCPv1", ALL, "range", 20, 40)],
    8: [
        Claim("1 flow: ETCPv1 about 40 % less", "ETCPv1", (1,), "about", 40),
        Claim("1 flow: ETCPv0 about 40 % less", "ETCPv0", (1,), "about", 40),
        Claim("4 flows: ETCPv0 worse than regular TCP", "ETCPv0", (4,), "worse"),
        Claim("4 flows: ETCPv0 worse than ETCPv1", "ETCPv0", (4,), "worse", than="ETCPv1"),
    ],
    9: [Claim("marked improvement of ETCPv1 (taken as > 20 %)", "ETCPv1", ALL, "more", 20)],
    10: [Claim("ETCPv1 about 50 % less, all flow counts", "ETCPv1", ALL, "about", 50)],
    11: [Claim("ETCPv1 20-40 % less, all flow counts", "ETCPv1", ALL, "range", 20, 40)],
    12: [
        Claim("transfer times about equal", "ETCPv1", ALL, "equal"),
        Claim("ETCPv1 has fewer unnecessary retransmissions", "ETCPv1", ALL, "fewer-spurious"),
    ],
    13: [
        Claim("1 and 2 flows: ETCPv1 about 30 % less", "ETCPv1", (1, 2), "about", 30),
        Claim("4 flows: comparable", "ETCPv1", (4,), "equal"),
    ],
    14: [Claim("more than 50 % less, all flow counts", "ETCPv1", ALL, "more", 50)],
    15: [Claim("about 30 % less (500 packets)", "ETCPv1", ALL, "about", 30)],
    16: [
        Claim("equal (no timeout in the 1 s disconnection)", "ETCPv1", ALL, "equal"),
        Claim("ETCPv0 equal too", "ETCPv0", ALL, "equal"),
    ],
    17: [Claim("nearly 50 % less", "ETCPv1", ALL, "about", 50)],
    18: [Claim("about 50 % less, all flow counts", "ETCPv1", ALL, "about", 50)],
    19: [Claim("over 50 % less, all flow counts (500 packets)", "ETCPv1", ALL, "more", 50)],
}
"""The CSV's ``reported`` column, statement by statement."""


def _float(x: Any) -> float:
    return float(x)


def _check(claim: Claim, c: pd.DataFrame, fig: int, n: int) -> tuple[str, bool] | None:
    """Our figure for one flow count of a claim, and whether it agrees (None
    when the cells are missing)."""
    g = c[(c["figure"] == fig) & (c["flows"] == n)].set_index("tcp")
    if claim.tcp not in g.index or claim.than not in g.index:
        return None
    ours = _float(g.at[claim.tcp, "median_s"])
    base = _float(g.at[claim.than, "median_s"])
    if not (ours > 0 and base > 0):
        return f"{n}: no median", False
    red = 100 * (1 - ours / base)
    if claim.kind == "about":
        return f"{n}: {red:+.0f} %", abs(red - claim.lo) <= TOLERANCE
    if claim.kind == "range":
        return f"{n}: {red:+.0f} %", claim.lo - 10 <= red <= claim.hi + 10
    if claim.kind == "more":
        return f"{n}: {red:+.0f} %", red >= claim.lo - 10
    if claim.kind == "equal":
        return f"{n}: {red:+.0f} %", abs(red) <= TOLERANCE
    if claim.kind == "worse":
        return f"{n}: {ours:.2f} s vs {base:.2f} s", ours > 1.05 * base
    if claim.kind == "fewer-spurious":
        s, b = _float(g.at[claim.tcp, "spurious"]), _float(g.at["regular", "spurious"])
        return f"{n}: {s:.1f} vs {b:.1f} per run", s < b
    raise ValueError(claim.kind)


def verdicts(c: pd.DataFrame) -> pd.DataFrame:
    """Each statement of the paper with our figures and whether they agree;
    per figure, ``agrees`` if all its statements do, ``partly`` if some do,
    ``differs`` if none."""
    rows = []
    for fig in sorted(set(c["figure"])):
        for claim in CLAIMS.get(int(fig), []):
            checks = [r for n in claim.flows if (r := _check(claim, c, int(fig), n)) is not None]
            if not checks:
                continue
            ok = sum(a for _, a in checks)
            rows.append(
                {
                    "figure": int(fig),
                    "paper": claim.text,
                    "ours (reduction of regular TCP's median, by flow count)": "; ".join(
                        t for t, _ in checks
                    ),
                    "agrees": "yes" if ok == len(checks) else ("partly" if ok else "no"),
                }
            )
    v = pd.DataFrame(rows)
    if v.empty:
        return v
    per_fig = v.groupby("figure")["agrees"].agg(
        lambda s: "agrees" if (s == "yes").all() else ("differs" if (s == "no").all() else "partly")
    )
    v["figure verdict"] = v["figure"].map(per_fig)
    return v


# ----- figures ------------------------------------------------------------------

COLOURS = {tcp: algorithm_style(cc).color for tcp, cc in TCPS.items()}
"""Each row's colour: its algorithm's in every wavelab figure (regular TCP
is NewReno's)."""


def draw(c: pd.DataFrame, h: Handoff, ax: Any) -> None:
    """One of the paper's Figures 4-19: per flow count and TCP, the median
    transfer time with bars from the lower to the upper quartile."""
    g = c[c["figure"] == h.figure]
    tcps = [t for t in TCPS if t in set(g["tcp"])]
    width = 0.8 / max(len(tcps), 1)
    for i, tcp in enumerate(tcps):
        s = g[g["tcp"] == tcp].sort_values("flows")
        x = np.arange(len(s)) + (i - (len(tcps) - 1) / 2) * width
        med = s["median_s"].to_numpy(dtype=float)
        err = np.vstack([med - s["q1_s"].to_numpy(float), s["q3_s"].to_numpy(float) - med])
        ax.errorbar(
            x,
            med,
            yerr=err,
            fmt="o" if tcp in PAPER_TCPS else "s",
            ms=4,
            capsize=3,
            color=COLOURS[tcp],
            label=tcp,
            mfc="white" if tcp not in PAPER_TCPS else COLOURS[tcp],
        )
    flows = sorted(set(g["flows"]))
    ax.set_xticks(range(len(flows)), [str(n) for n in flows])
    ax.set_xlabel("flows")
    ax.set_ylabel(f"time to transfer {h.packets} packets (s)")
    ax.set_title(h.label, fontsize=9)
    # the scale of the paper's TCPs (and CUBIC): a row far above it (TCP
    # Wave's runs that never finish) is cut off and its median written at
    # the top, so that it does not flatten the rows the paper compares
    near = g[g["tcp"] != "Wave"]["q3_s"].to_numpy(dtype=float)
    near = near[np.isfinite(near)]
    if len(near):
        top = 1.15 * float(near.max())
        ax.set_ylim(0, top)
        if "Wave" in tcps:
            s = g[g["tcp"] == "Wave"].sort_values("flows")
            i = tcps.index("Wave")
            for k, med in enumerate(s["median_s"].to_numpy(dtype=float)):
                if not med <= top:
                    xpos = k + (i - (len(tcps) - 1) / 2) * width
                    label = "Wave:\nnot\nreached" if np.isnan(med) else f"Wave:\n{med:.3g} s"
                    ax.annotate(
                        label,
                        (xpos, top),
                        xytext=(0, -3),
                        textcoords="offset points",
                        ha="center",
                        va="top",
                        fontsize=6,
                        color=COLOURS["Wave"],
                    )
    else:
        ax.set_ylim(bottom=0)
    ax.grid(axis="y", alpha=0.3)


def figures(c: pd.DataFrame, out: Path) -> list[Path]:
    """``figNN.png`` for each figure, and ``figures.png`` with all of them."""
    files = []
    present = [h for h in handoffs() if h.figure in set(c["figure"])]
    for h in present:
        fig, ax = plt.subplots(figsize=(5, 3.6))
        draw(c, h, ax)
        ax.legend(fontsize=7)
        files.append(save(fig, out / f"fig{h.figure:02d}.png"))
    cols = 4
    rows = math.ceil(len(present) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax, h in zip(axes.flat, present, strict=False):
        draw(c, h, ax)
    for ax in list(axes.flat)[len(present) :]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(labels))
    return [*files, save(fig, out / "figures.png", dpi=90, rect=(0, 0, 1, 0.97))]


# ----- the study ----------------------------------------------------------------


def run_study(
    grid: Grid,
    out: Path,
    backend: Backend,
    progress: bool = True,
) -> pd.DataFrame:
    """Runs (or resumes) the grid's sweep in ``out/sweep``; returns its runs
    table."""
    outcome = run_sweep(study_sweep(grid), out / "sweep", backend, progress=progress, tables=False)
    print(summary_line(outcome), file=sys.stderr)
    if outcome.stopped:
        raise WavelabError(outcome.stopped)
    return outcome.table


def write_scenarios(grid: Grid, out: Path) -> None:
    """``scenarios/figNN.toml``: each handoff at 10 s with one regular TCP
    flow, the packet log and fine sampling on, to run and inspect
    (``wavelab run out/scenarios/fig13.toml --set flows[0].cc=etcpv1``)."""
    d = out / "scenarios"
    d.mkdir(parents=True, exist_ok=True)
    files = Tables(d)
    for h in handoffs():
        if h.figure not in grid.figures:
            continue
        text = scenario_text(h).replace('interval = "1s"', 'interval = "50ms"')
        text = text.replace("queues = false", "queues = true")
        text = text.replace('to = "mobile"\n', 'to = "mobile"\nlog_packets = true\n', 1)
        files.text(f"fig{h.figure:02d}.toml", text)


def report(c: pd.DataFrame, out: Path) -> pd.DataFrame:
    """Writes ``cells.csv``, ``reductions.csv``, ``verdicts.csv`` and
    ``comparison.md`` and prints the comparison; returns the verdicts."""
    red = reductions(c)
    v = verdicts(c)
    by_fig = {h.figure: h for h in handoffs()}
    md = (
        Markdown()
        .lines(
            "# MobiWac 2009, Figures 4-19: time until the slowest flow has 100 (500) packets",
            "# acknowledged after the handoff",
        )
        .lines(
            "Median over the handoff instants (s), and each TCP's reduction of regular",
            "TCP's median (%; positive = faster). Wave and CUBIC are rows the paper",
            "does not have. `floor_s` is the least time the new link allows (the",
            "disconnection, then flows x packets at its rate): no TCP can cut regular",
            "TCP's median by more than 1 - floor / median.",
        )
    )
    for fig, g in red.groupby("figure"):
        h = by_fig[int(str(fig))]
        md.lines(f"## {h.label}").lines(f"Paper: {h.reported}")
        md.table(g.drop(columns="figure"), floatfmt=".3g")
        fv = v[v["figure"] == fig] if not v.empty else v
        if len(fv):
            md.table(fv.drop(columns=["figure", "figure verdict"]))
            md.lines(f"Verdict: **{fv['figure verdict'].iloc[0]}**")
    tables = Tables(out)
    tables.csv("cells.csv", c)
    tables.csv("reductions.csv", red)
    tables.csv("verdicts.csv", v)
    tables.markdown("comparison.md", md)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print("Median transfer time (s) and reduction of regular TCP's median (%)")
        # a median transfer time that is NaN: more than half never finished
        medians = [c for c in red.columns if str(c).endswith("_s") and c != "floor_s"]
        print(table_text(red, digits=3, not_reached=medians))
        if not v.empty:
            print()
            summary = v.groupby("figure")["figure verdict"].first()
            print("Verdicts: " + ", ".join(f"Fig. {f} {s}" for f, s in summary.items()))
    return v


def reproduce(
    out: Path,
    quick: bool,
    jobs: int | None,
    cluster: str | None = None,
    cluster_timeout: float | None = None,
    grid: Grid | None = None,
) -> Path:
    """Runs the study (``quick``: :func:`quick_grid`; else the paper's
    grid), prints and writes our table beside the paper's statements, with a
    verdict per figure, and draws Figures 4-19."""
    out.mkdir(parents=True, exist_ok=True)
    grid = grid or (quick_grid() if quick else full_grid())
    backend = backend_for(jobs, cluster, cluster_timeout)
    try:
        table = run_study(grid, out, backend)
    finally:
        backend.close()
    c = cells(table)
    report(c, out)
    figures(c, out)
    write_scenarios(grid, out)
    return out


__all__: Sequence[str] = [
    "CLAIMS",
    "TCPS",
    "Grid",
    "Handoff",
    "cells",
    "full_grid",
    "handoffs",
    "quick_grid",
    "reproduce",
    "scenario_text",
    "study_sweep",
    "sweep_text",
    "verdicts",
]
