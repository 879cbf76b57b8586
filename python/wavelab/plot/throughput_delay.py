"""Plots of a sweep: the throughput-delay plot.

``throughput-delay.png``: mean goodput against the 95th percentile of the
RTT, as Pantheon (Yan et al., USENIX ATC 2018) draws its runs, the delay
axis inverted so that better is up and to the right. One point per run, or,
when the sweep varies the seed, one point per parameter point at the mean
over its seeds with its 95 % confidence intervals as error bars in both
directions (``seeds.parquet``, :mod:`wavelab.analysis.seeds`). Points are
coloured by the first varied parameter (when it is an algorithm, each takes
its colour and marker of :mod:`wavelab.plot.style`) and, up to 16 points,
labelled with the others (one path per axis: the paths of an axis vary
together). The
delay is ``rtt_p95_ms`` (every RTT sample of every flow); ``delay`` picks
another column, e.g. ``queue_delay_p95_ms`` (the bottleneck's queue alone).
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from wavelab.errors import WavelabError
from wavelab.plot.figure_files import save_figure
from wavelab.plot.spec import FIGURES, is_algorithm_path
from wavelab.plot.style import PALETTE, algorithm_style

GOODPUT = "goodput_mbps"
MAX_LABELS = 16
"""Points are labelled with their other parameters up to this many points."""


def _label(row: pd.Series, params: list[str]) -> str:
    return ", ".join(f"{p}={row[p]}" for p in params)


def _points(
    runs: pd.DataFrame, seeds: pd.DataFrame | None, params: list[str], delay: str
) -> tuple[pd.DataFrame, list[str]]:
    """The points (columns x, y, xerr, yerr and the parameters shown) and
    the parameters that tell them apart; no errors for single runs."""
    if seeds is not None and len(seeds):
        by = [p for p in params if p in seeds.columns]
        x, y = (seeds[seeds["metric"] == m] for m in (delay, GOODPUT))
        if by:
            x, y = x.set_index(by), y.set_index(by)
        else:
            x, y = x.reset_index(drop=True), y.reset_index(drop=True)
        out = pd.DataFrame(
            {
                "x": x["mean"],
                "y": y["mean"],
                "xerr": x["ci95_high"] - x["mean"],
                "yerr": y["ci95_high"] - y["mean"],
            }
        )
        return out.reset_index() if by else out, by
    ok = runs[runs["status"] == "ok"]
    out = pd.DataFrame({"x": ok[delay], "y": ok[GOODPUT], "xerr": None, "yerr": None})
    for p in params:
        out[p] = ok[p]
    return out, params


def plot_throughput_delay(
    directory: str | Path,
    path: str | Path | None = None,
    delay: str = "rtt_p95_ms",
    *,
    ax: Axes | None = None,
) -> Figure:
    """Draws the throughput-delay plot of the sweep in ``directory`` (its
    ``runs.parquet``, and ``seeds.parquet`` if there) into ``ax`` (or a
    figure of its own) and writes it to ``path`` if given; returns the
    figure."""
    d = Path(directory)
    try:
        runs = pd.read_parquet(d / "runs.parquet")
    except (OSError, ValueError) as e:
        raise WavelabError(f"{d}: no sweep table here (runs.parquet: {e})") from None
    if delay not in runs or GOODPUT not in runs:
        raise WavelabError(
            f"{d}: runs.parquet has no {delay} column; run the sweep again with this "
            "version (its stored runs are reused, the metrics recomputed)"
        )
    try:
        meta = json.loads((d / "sweep.json").read_text(encoding="utf-8"))
        axes, name = meta["axes"], str(meta.get("name") or d.name)
    except (OSError, ValueError, KeyError):
        axes, name = [], d.name
    # one path per axis (the paths of one axis vary together)
    params = [a["paths"][0] for a in axes if a["paths"][0] in runs and a["paths"][0] != "seed"]
    seeds = pd.read_parquet(d / "seeds.parquet") if (d / "seeds.parquet").exists() else None
    pts, shown = _points(runs, seeds, params, delay)
    if not len(pts):
        raise WavelabError(f"{d}: no finished run to plot")
    colour_by = shown[0] if shown else None
    rest = shown[1:]
    own = ax is None
    if ax is None:
        # three quarters of the style's width, or all of a narrow (paper) one
        width = float(plt.rcParams["figure.figsize"][0])
        width = width * 0.75 if width > 5 else width
        fig, ax = plt.subplots(figsize=(width, width * 0.73))
    else:
        parent = ax.get_figure()
        assert isinstance(parent, Figure)
        fig = parent
    groups = pts.groupby(colour_by, sort=False) if colour_by else [("runs", pts)]
    by_algorithm = colour_by is not None and is_algorithm_path(colour_by)
    for i, (key, g) in enumerate(groups):
        has_err = g["xerr"].notna().any()
        if by_algorithm:
            st = algorithm_style(str(key))
            colour, marker = st.color, st.marker
        else:
            colour, marker = PALETTE[i % len(PALETTE)], "o"
        ax.errorbar(
            g["x"],
            g["y"],
            xerr=g["xerr"].astype(float) if has_err else None,
            yerr=g["yerr"].astype(float) if has_err else None,
            fmt=marker,
            color=colour,
            capsize=3,
            label=f"{colour_by}={key!s}" if colour_by else None,
        )
        if rest and len(pts) <= MAX_LABELS:
            for _, row in g.iterrows():
                ax.annotate(
                    _label(row, rest), (row["x"], row["y"]), fontsize="x-small",
                    xytext=(4, 4), textcoords="offset points",
                )  # fmt: skip
    ax.invert_xaxis()
    spec = FIGURES["throughput-delay"]
    ax.set_xlabel(f"{delay.removesuffix('_ms').replace('_', ' ')} {spec['x']}")
    ax.set_ylabel(spec["y"])
    how = "mean over seeds, 95 % CI" if seeds is not None and len(seeds) else "one point per run"
    ax.set_title(f"{name}: {spec['title']}\n({how})")  # two lines: one column is narrow
    if colour_by:
        ax.legend()
    if own:
        fig.tight_layout()
    if path is not None:
        save_figure(fig, Path(path))
        if own:
            plt.close(fig)
    return fig


__all__ = ["plot_throughput_delay"]
