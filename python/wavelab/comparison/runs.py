"""The comparison of several entries (:mod:`wavelab.comparison.entries`):
the metric table and the figures, each drawn into a given ``ax``.

Each entry takes one colour of the palette (:data:`wavelab.plot.style.PALETTE`,
in the order given), whatever its algorithm, so two runs of one algorithm
stay apart; the flows of a run keep the line styles of
:data:`wavelab.plot.style.FLOW_DASHES`. An entry of several runs (a sweep's
seeds) is drawn in the series and CDF figures by its first run, and counts
in the table by the mean over its runs; the box plots show every run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from wavelab.analysis.rates import RATE_WINDOW, goodput_and_send_rate
from wavelab.analysis.rtt import one_way_delays, rtt_cdf
from wavelab.comparison.entries import Entry, labelled, resolve
from wavelab.errors import WavelabError
from wavelab.plot.run_plots import flow_mss, flow_names
from wavelab.plot.spec import FIGURES
from wavelab.plot.style import FLOW_DASHES, PALETTE, TOTAL
from wavelab.results.frames import Results
from wavelab.results.summary import RUN_COLUMNS

_RUN_METRICS = set(RUN_COLUMNS) - {"bottleneck"}

RUN_FLOW = "(run)"
"""The ``flow`` of the run's own figures in :meth:`Comparison.table`."""

_UNITS = {"_mbps": "Mbit/s", "_mb": "MB", "_ms": "ms", "_s": "s"}
_FRACTIONS = {"retransmission_rate", "loss_rate", "utilisation", "jain"}

SERIES = {
    "rate": (f"goodput over {RATE_WINDOW:g} s", "Mbit/s"),
    "cwnd": ("cwnd", "segments"),
    "rtt": ("srtt", "ms"),
    "queue": ("bottleneck queue", "packets"),
}
"""What :meth:`Comparison.plot_series` draws for each name, and its unit."""


def unit(metric: str) -> str:
    """The unit of a summary column, from its name's suffix (``fraction``
    for ratios, ``count`` for the counters)."""
    if metric in _FRACTIONS:
        return "fraction"
    for suffix, u in _UNITS.items():
        if metric.endswith(suffix):
            return u
    return "count"


def _flow_rows(res: Results) -> list[tuple[int, str, str, float]]:
    """(position, flow, metric, value) of every numeric figure of a run's
    summary: per flow, then the run's own figures once."""
    s = res.summary()
    run_cols = [c for c in s.columns if c in _RUN_METRICS]
    rows = []
    for i, (_, r) in enumerate(s.iterrows()):
        for c in s.columns:
            if c in ("flow", "algorithm", "bottleneck") or c in run_cols:
                continue
            rows.append((i, str(r["flow"]), c, _number(r[c])))
    if len(s):
        first = s.iloc[0]
        rows += [(-1, RUN_FLOW, c, _number(first[c])) for c in run_cols]
    return rows


def _number(x: object) -> float:
    try:
        return float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")


class Comparison:
    """Entries side by side (:func:`compare`)."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        if not entries:
            raise WavelabError("nothing to compare")
        self.entries: list[Entry] = list(entries)
        """The compared entries, the first being the reference."""

    @property
    def labels(self) -> list[str]:
        """The entries' labels, in order."""
        return [e.label for e in self.entries]

    def __repr__(self) -> str:
        return f"Comparison({', '.join(self.labels)})"

    def colour(self, i: int) -> str:
        """The colour of entry ``i``."""
        return PALETTE[i % len(PALETTE)]

    # ----- the table ------------------------------------------------------------------

    def table(self) -> pd.DataFrame:
        """One row per entry, flow and metric of the runs' summaries
        (:meth:`wavelab.Results.summary`; the run's own figures under flow
        ``(run)``): ``run`` (the label), ``flow``, ``metric``, ``unit``,
        ``value`` (the mean over the entry's runs), ``runs`` (how many),
        ``difference`` and ``ratio`` to the first entry's value of the same
        flow position and metric (NaN where it has none)."""
        return self._long().drop(columns="position")

    def _long(self) -> pd.DataFrame:
        """:meth:`table` with each row's flow position (-1: the run's)."""
        frames = []
        for e in self.entries:
            rows = [r for res in e.runs for r in _flow_rows(res)]
            f = pd.DataFrame(rows, columns=["position", "flow", "metric", "value"])
            f = f.groupby(["position", "metric"], sort=False, as_index=False).agg(
                flow=("flow", "first"), value=("value", "mean")
            )
            f.insert(0, "run", e.label)
            f["runs"] = len(e.runs)
            frames.append(f)
        t = pd.concat(frames, ignore_index=True)
        ref = frames[0].set_index(["position", "metric"])["value"]
        base = pd.Series(
            [ref.get((p, m), np.nan) for p, m in zip(t["position"], t["metric"], strict=True)],
            index=t.index,
            dtype=float,
        )
        t["unit"] = [unit(m) for m in t["metric"]]
        t["difference"] = t["value"] - base
        with np.errstate(divide="ignore", invalid="ignore"):
            t["ratio"] = np.where(base != 0, t["value"] / base, np.nan)
        cols = ["run", "position", "flow", "metric", "unit", "value", "runs", "difference"]
        return t[[*cols, "ratio"]]

    def short_labels(self) -> tuple[str, list[str]]:
        """The part the labels share (up to a ``:`` or ``,``: a store's
        selector) and each label without it, for column headers."""
        labels = self.labels
        common = ""
        if len(labels) > 1:  # characters, not path components: a selector's text
            shortest = min(labels, key=len)
            n = next(
                (i for i, ch in enumerate(shortest) if any(lab[i] != ch for lab in labels)),
                len(shortest),
            )
            common = shortest[:n]
        cut = max(common.rfind(":"), common.rfind(","))
        prefix = common[: cut + 1] if cut >= 0 else ""
        return prefix, [lab[len(prefix) :] for lab in labels]

    def wide(self) -> pd.DataFrame:
        """:meth:`table` for the terminal: one row per flow and metric (its
        unit in the name), a column per entry (headed by its label less the
        part all share, :meth:`short_labels`), then per later entry its
        difference and ratio to the first."""
        _, heads = self.short_labels()
        t = self._long()
        t["key"] = t["metric"] + " (" + t["unit"] + ")"
        out = t.drop_duplicates(["position", "key"])[["flow", "position", "key"]]
        out = out.reset_index(drop=True)
        keys = list(zip(out["position"], out["key"], strict=True))
        for n, label in enumerate(self.labels):
            part = t[t["run"] == label].set_index(["position", "key"])
            for col in ("value", "difference", "ratio") if n else ("value",):
                sign = {"value": "", "difference": " - ", "ratio": " / "}[col]
                name = heads[n] if col == "value" else f"{heads[n]}{sign}{heads[0]}"
                out[name] = [part[col].get(k, np.nan) for k in keys]
        return out.drop(columns="position").rename(columns={"key": "metric"})

    # ----- the figures ----------------------------------------------------------------

    def plot_series(self, what: str = "rate", *, ax: Axes | None = None) -> Figure:
        """Each entry's ``what`` against time (``rate``: goodput averaged over
        :data:`~wavelab.analysis.rates.RATE_WINDOW` as ``rate.png``, ``cwnd``,
        ``rtt``: smoothed RTT, ``queue``: the bottleneck's queue), every
        flow of its first run, one colour per entry."""
        if what not in SERIES:
            raise WavelabError(f"series {what!r}: choose from {', '.join(SERIES)}")
        fig, ax_ = _axes(ax)
        drawn = False
        for i, e in enumerate(self.entries):
            for n, (t, y, name) in enumerate(_series(e.runs[0], what)):
                ls = FLOW_DASHES[n % len(FLOW_DASHES)][0]
                lab = e.label if n == 0 and name is None else f"{e.label}, {name}"
                ax_.plot(t, y, lw=1, ls=ls, color=self.colour(i), label=lab)
                drawn = True
        name, u = SERIES[what]
        ax_.set_xlabel(FIGURES["rate"]["x"])
        ax_.set_ylabel(f"{name} ({u})")
        if drawn:
            ax_.legend(loc="best")
        else:
            _nothing(ax_, f"no {name} in these runs")
        return fig

    def has_queue(self) -> bool:
        """Whether a run has a bottleneck queue series to draw."""
        return any(_series(e.runs[0], "queue") for e in self.entries)

    def has_delay(self) -> bool:
        """Whether a run keeps a packet log to take one-way delays from."""
        return any(len(one_way_delays(e.runs[0].packets)) for e in self.entries)

    def plot_cdf(self, what: str = "rtt", *, ax: Axes | None = None) -> Figure:
        """The CDF over each entry's first run, all flows together, of every
        RTT sample (``rtt``; an emulation, which keeps no samples, by its
        smoothed RTT series, said in the legend) or of the one-way delay of
        every data segment sent once (``delay``, from the packet log of flows
        with ``log_packets = true``:
        :func:`~wavelab.analysis.rtt.one_way_delays`); a run without one is
        left out, and axes without any say so."""
        if what not in ("rtt", "delay"):
            raise WavelabError(f"cdf {what!r}: choose rtt or delay")
        fig, ax_ = _axes(ax)
        drawn = False
        for i, e in enumerate(self.entries):
            res = e.runs[0]
            dist = res.rtt_distribution
            lab = e.label
            if what == "delay":
                v = np.sort(one_way_delays(res.packets)) * 1e3
                x, y = v, np.arange(1, len(v) + 1) / max(len(v), 1)
            elif len(dist):
                c = rtt_cdf(dist)
                x, y = c["rtt"].to_numpy(float) * 1e3, c["cdf"].to_numpy(float)
            else:
                v = np.sort(res.series["srtt"].dropna().to_numpy(float)) * 1e3
                x, y = v, np.arange(1, len(v) + 1) / max(len(v), 1)
                lab = f"{e.label} (srtt)"
            if len(x):
                ax_.step(x, y, where="post", lw=1.2, color=self.colour(i), label=lab)
                drawn = True
        if not drawn:
            _nothing(ax_, "no run keeps a packet log (log_packets = true)")
            return fig
        ax_.set_ylim(0, 1.02)
        ax_.set_xlabel(FIGURES["rtt-cdf"]["x"] if what == "rtt" else "one-way delay (ms)")
        ax_.set_ylabel(FIGURES["rtt-cdf"]["y"])
        ax_.legend(loc="lower right")
        return fig

    def plot_box(self, metric: str = "goodput_mbps", *, ax: Axes | None = None) -> Figure:
        """A box per entry of ``metric`` (a summary column) over its runs,
        each run counting by its flows' mean, every run drawn as a point."""
        fig, ax_ = _axes(ax)
        values = []
        for e in self.entries:
            per_run = []
            for res in e.runs:
                s = res.summary()
                if metric not in s.columns:
                    raise WavelabError(
                        f"{metric!r} is not a summary metric; choose from "
                        + ", ".join(c for c in s.columns if c not in ("flow", "algorithm"))
                    )
                per_run.append(float(pd.to_numeric(s[metric], errors="coerce").mean()))
            values.append(per_run)
        pos = np.arange(1, len(values) + 1)
        box = ax_.boxplot(
            values,
            positions=pos,
            widths=0.5,
            patch_artist=True,
            medianprops={"color": TOTAL},
            showfliers=False,  # every run is drawn as a point
        )
        for i, patch in enumerate(box["boxes"]):
            patch.set_facecolor(self.colour(i))
            patch.set_alpha(0.35)
        for i, v in enumerate(values):
            ax_.plot(np.full(len(v), pos[i]), v, "o", ms=3, color=self.colour(i))
        ax_.set_xticks(pos, [f"{e.label}\n({len(e.runs)} runs)" for e in self.entries])
        ax_.set_ylabel(f"{metric} ({unit(metric)})")
        return fig


def _axes(ax: Axes | None) -> tuple[Figure, Axes]:
    if ax is not None:
        fig = ax.get_figure()
        assert isinstance(fig, Figure)
        return fig, ax
    fig, new = plt.subplots(1, 1)
    return fig, new


def _nothing(ax: Axes, why: str) -> None:
    ax.text(0.5, 0.5, why, ha="center", va="center", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def _series(res: Results, what: str) -> list[tuple[np.ndarray, np.ndarray, str | None]]:
    """(time, value, flow name) of each flow's ``what`` (the queue: one
    line, the bottleneck's)."""
    if what == "queue":
        q, links = res.queues, res.links
        busy = links[links["max_queue_packets"] > 0] if len(links) else links
        if not len(q) or not len(busy):
            return []
        d = busy.sort_values("max_queue_packets", ascending=False)["dir"].iloc[0]
        part = q[q["dir"] == d].sort_values("time")
        return [(part["time"].to_numpy(float), part["packets"].to_numpy(float), None)]
    names, mss = flow_names(res), flow_mss(res)
    frame = goodput_and_send_rate(res.series) if what == "rate" else res.series
    col, scale = {"rate": ("goodput", 1e-6), "cwnd": ("cwnd", 1.0), "rtt": ("srtt", 1e3)}[what]
    out = []
    for _, g in frame.groupby("flow", sort=True):
        g = g.sort_values("time")
        flow = int(g["flow"].iloc[0])
        y = g[col].to_numpy(float) * scale
        if what == "cwnd":
            y = y / mss[flow]
        out.append((g["time"].to_numpy(float), y, names[flow] if len(names) > 1 else None))
    return out


def compare(
    runs: Sequence[str | Path | Results], labels: Sequence[str] | None = None
) -> Comparison:
    """The comparison of ``runs``: run folders, stores with an optional
    selector (``"sweep-out:cc=cubic"``; a store whose runs differ in their
    algorithm gives one entry per algorithm), or :class:`~wavelab.Results`
    already loaded; labelled by their folders' names or by ``labels``."""
    entries: list[Entry] = []
    for r in runs:
        if isinstance(r, Results):
            entries.append(Entry(r.scenario.name, (r,), r.scenario.name))
        else:
            entries += resolve([r])
    return Comparison(labelled(entries, labels, "labels"))
