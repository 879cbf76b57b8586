"""Plots of a sweep: the throughput-delay plot.

``throughput-delay.png``: mean goodput against the 95th percentile of the
RTT, as Pantheon (Yan et al., USENIX ATC 2018) draws its runs, the delay
axis inverted so that better is up and to the right. One point per run, or,
when the sweep varies the seed, one point per parameter point at the mean
over its seeds with its 95 % confidence intervals as error bars in both
directions (as ``seeds.parquet``, :mod:`wavelab.analysis.seeds`), clipped at
zero; a point with fewer than three seeds is drawn as its runs, without an
interval, and the legend says so. The delay axis is logarithmic when the
delays span more than two decades. Points take the colour and marker of
their algorithm (:mod:`wavelab.plot.style`) when the sweep varies one,
else the colour of the first varied parameter, and, up to 16 points, are
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

from wavelab.analysis.seeds import mean_ci
from wavelab.errors import WavelabError
from wavelab.plot.figure_files import write_figure
from wavelab.plot.spec import FIGURES, LOG_SPAN, MIN_SEEDS, is_algorithm_path
from wavelab.plot.style import PALETTE, algorithm_style

GOODPUT = "goodput_mbps"
MAX_LABELS = 16
"""Points are labelled with their other parameters up to this many points."""


def _label(row: pd.Series, params: list[str]) -> str:
    return ", ".join(f"{p}={row[p]}" for p in params)


def _points(runs: pd.DataFrame, params: list[str], delay: str) -> pd.DataFrame:
    """The points to draw: per parameter point with at least
    :data:`MIN_SEEDS` finished runs, their mean with its 95 % interval
    (clipped at zero: no negative goodput or delay); otherwise each run on
    its own, without an interval. Columns ``x``, ``y``, the interval's
    extents ``xlo``, ``xhi``, ``ylo``, ``yhi`` (NaN without one), ``n``
    (runs behind the point) and the parameters."""
    ok = runs[(runs["status"] == "ok") & runs[delay].notna() & runs[GOODPUT].notna()]
    groups = ok.groupby(params, sort=False, dropna=False) if params else [((), ok)]
    rows: list[dict[str, object]] = []
    for keys, g in groups:
        key = dict(zip(params, keys if isinstance(keys, tuple) else (keys,), strict=True))
        if len(g) < MIN_SEEDS:
            for _, r in g.iterrows():
                rows.append({"x": r[delay], "y": r[GOODPUT], "n": 1, **key})
            continue
        row: dict[str, object] = {"n": len(g), **key}
        for axis, col in (("x", delay), ("y", GOODPUT)):
            mean, half = mean_ci(g[col].to_numpy(dtype=float))
            row[axis] = mean
            row[f"{axis}lo"] = mean - max(mean - half, 0.0)  # neither goes below zero
            row[f"{axis}hi"] = half
        rows.append(row)
    out = pd.DataFrame(rows, columns=["x", "y", "xlo", "xhi", "ylo", "yhi", "n", *params])
    return out.astype({c: float for c in ("x", "y", "xlo", "xhi", "ylo", "yhi")})


def _errors(g: pd.DataFrame, axis: str) -> object:
    """The asymmetric error bars of ``axis`` for points ``g``, or None."""
    lo, hi = g[f"{axis}lo"], g[f"{axis}hi"]
    if lo.isna().all():
        return None
    return [lo.fillna(0).to_numpy(), hi.fillna(0).to_numpy()]


def uses_log_delay(x: pd.Series) -> bool:
    """Whether delays ``x`` span more than :data:`LOG_SPAN` (all positive)."""
    x = x.dropna()
    return bool(len(x)) and float(x.min()) > 0 and float(x.max()) > LOG_SPAN * float(x.min())


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
    pts = _points(runs, params, delay)
    if not len(pts):
        raise WavelabError(f"{d}: no finished run to plot")
    # colour and marker by algorithm whenever one is varied; the other
    # parameters label the points
    algorithm = [p for p in params if is_algorithm_path(p)]
    colour_by = (algorithm or params or [None])[0]
    rest = [p for p in params if p != colour_by]
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
        if by_algorithm:
            st = algorithm_style(str(key))
            colour, marker = st.color, st.marker
        else:
            colour, marker = PALETTE[i % len(PALETTE)], "o"
        ax.errorbar(
            g["x"],
            g["y"],
            xerr=_errors(g, "x"),  # type: ignore[arg-type]
            yerr=_errors(g, "y"),  # type: ignore[arg-type]
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
    if uses_log_delay(pts["x"]):
        ax.set_xscale("log")
    ax.invert_xaxis()
    spec = FIGURES["throughput-delay"]
    ax.set_xlabel(f"{delay.removesuffix('_ms').replace('_', ' ')} {spec['x']}")
    ax.set_ylabel(spec["y"])
    means, single = pts["xlo"].notna(), pts["xlo"].isna()
    if means.all():
        how = "mean over seeds, 95 % CI"
    elif not means.any():
        how = "one point per run"
    else:
        how = f"mean and 95 % CI where {MIN_SEEDS}+ seeds, else each run"
    ax.set_title(f"{name}: {spec['title']}\n({how})")  # two lines: one column is narrow
    seeded = (d / "seeds.parquet").exists() or any(a["paths"][0] == "seed" for a in axes)
    few = seeded and bool(single.any())
    if few:
        # the legend says why some points have no interval
        ax.plot([], [], " ", label=f"no interval: fewer than {MIN_SEEDS} seeds, each run drawn")
    if colour_by or few:
        ax.legend()
    if own:
        fig.tight_layout()
    write_figure(fig, path, own)
    return fig


__all__ = ["plot_throughput_delay"]
