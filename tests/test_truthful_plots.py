"""Plots that tell the truth: goodput averaged over a
window in the PNGs and the report alike, capacity lines that follow every
change of the bottleneck, outages shaded on every time axis, and a release
after a long hole drawn off scale instead of flattening the plot."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import wavelab
from conftest import ROOT
from wavelab import report
from wavelab.analysis import RATE_WINDOW, goodput_and_send_rate, rate_ceiling, windowed_rate
from wavelab.plot import figure_files
from wavelab.plot import run_plots as plots


def test_a_window_spreads_a_hole_fill_release() -> None:
    # 1 Mbit/s arriving every 0.1 s, held for 0.4 s by a hole, then released
    t = np.round(np.arange(0, 3.01, 0.1), 6)
    arrived = t * 1e6 / 8
    delivered = arrived.copy()
    held = (t >= 1.0) & (t < 1.4)
    delivered[held] = arrived[t == 1.0][0]
    raw = np.diff(delivered) * 8 / np.diff(t)
    assert raw.max() == pytest.approx(4e6)  # the release reads as 4 Mbit/s
    w = windowed_rate(t, delivered, 1.0)
    assert np.isnan(w[t < 1.0 - 1e-9]).all() and not np.isnan(w[t >= 1.0 - 1e-9]).any()
    stalled = w[(t > 1.0 + 1e-9) & (t < 1.4 - 1e-9)]
    assert len(stalled) == 3 and (stalled < 1e6 - 1).all()
    # a window that holds the stall and the release reads the arrival rate
    whole = w[(t >= 1.4 - 1e-9) & (t <= 2.0 + 1e-9)]
    assert whole == pytest.approx(np.full(len(whole), 1e6))
    # one that starts inside the stall counts 1.3 s of data in 1 s: the
    # peak is 1.3 Mbit/s where the raw series shows 4
    assert np.nanmax(w) == pytest.approx(1.3e6)
    # at arbitrary instants: the counts are interpolated between samples
    assert windowed_rate(t, delivered, 1.0, np.array([2.55]))[0] == pytest.approx(1e6)


def test_the_ceiling_keeps_the_capacity_in_view() -> None:
    assert rate_ceiling(8e6, np.array([1e6, 51e6])) == pytest.approx(10e6)
    assert rate_ceiling(8e6, np.array([1e6, 11e6])) is None  # within 1.5 x
    assert rate_ceiling(0.0, np.array([1e6])) is None
    assert rate_ceiling(8e6, np.array([np.nan])) is None


@pytest.fixture(scope="module")
def handover_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("handover") / "run"
    res = wavelab.run(wavelab.load_scenario(ROOT / "scenarios" / "dcnet2016-handover.toml"))
    res.to_parquet(out)
    return out


def _figures(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Catches every figure the plots save, by file name."""
    caught: dict[str, Any] = {}

    def save(fig: Any, path: Path, dpi: int | None = None) -> Path:
        caught[path.name] = fig
        return path

    # every plot writes through figure_files.write_figure, which saves with this
    monkeypatch.setattr(figure_files, "save_figure", save)
    monkeypatch.setattr(plots.plt, "close", lambda fig: None)
    return caught


def test_rate_png_follows_the_handover_and_shades_the_outage(
    handover_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    res = wavelab.Results.read_parquet(handover_dir)
    figs = _figures(monkeypatch)
    plots.plot_all(res, tmp_path)
    goodput_ax, send_ax = figs["rate.png"].axes
    cap = [ln for ln in goodput_ax.lines if str(ln.get_label()).startswith("capacity")]
    assert len(cap) == 1 and cap[0].get_label() == "capacity (bottleneck:forward)"
    xs, ys = cap[0].get_xdata(), cap[0].get_ydata()
    # 2 Mbit/s until the handover at 30 s, nothing during its 2 s outage, then 8
    assert sorted(set(np.round(ys, 6))) == [0.0, 2.0, 8.0]
    assert ys[np.searchsorted(xs, 10.0)] == 2.0 and ys[-1] == 8.0
    assert min(x for x, y in zip(xs, ys, strict=True) if y == 8.0) == pytest.approx(32.0)
    # the old figure's line sat at the links table's final (8 Mbit/s) rate throughout
    assert ys[0] == 2.0
    # the release of 6.3 MB after 27 s of stalled delivery is off scale, marked
    assert goodput_ax.get_ylim()[1] == pytest.approx(10.0)
    off = [ln for ln in goodput_ax.lines if str(ln.get_label()).startswith("off scale")]
    assert len(off) == 1 and "51.3 Mbit/s" in str(off[0].get_label())
    # the sending rate never exceeds the capacity so much: its axis is free
    assert send_ax.get_ylim()[1] < 10.0
    # the outage is shaded on every plot against time
    for name in ("rate.png", "sequence.png", "cwnd.png", "rtt.png", "queue.png"):
        for ax in figs[name].axes:
            spans = [p for p in ax.patches if p.get_label() == "link down"]
            assert len(spans) == 1, name
            x0 = spans[0].get_x() if hasattr(spans[0], "get_x") else None
            corners = spans[0].get_xy() if x0 is None else None
            lo = x0 if x0 is not None else float(np.min(np.asarray(corners)[:, 0]))
            assert lo == pytest.approx(30.0), name


def test_the_report_draws_what_the_png_draws(handover_dir: Path) -> None:
    data = report.run_data(handover_dir)
    res = wavelab.Results.read_parquet(handover_dir)
    rates = goodput_and_send_rate(res.series)
    f = data["flows"][0]
    # the same averaging: at every instant the report keeps, the PNG's value
    at = pd.Series(rates["goodput"].to_numpy() / 1e6, index=rates["time"].to_numpy())
    for t, g in zip(f["t"], f["goodput"], strict=True):
        if g is None:
            assert math.isnan(at.loc[t])
        else:
            assert g == pytest.approx(at.loc[t], abs=1e-4)
    assert max(g for g in f["goodput"] if g is not None) < 60  # not 1,008 Mbit/s
    assert data["rate_window"] == RATE_WINDOW and data["rate_ceiling"] == pytest.approx(10.0)
    cap = data["capacity"]
    assert cap["name"] == "bottleneck:forward"
    assert sorted(set(cap["y"])) == [0.0, 2.0, 8.0]
    assert [(e["start"], e["end"]) for e in data["events"]] == [(30.0, 32.0)]


def test_a_link_outage_is_shaded_and_cuts_the_capacity(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    res = wavelab.run(wavelab.demo_scenario())
    figs = _figures(monkeypatch)
    plots.plot_all(res, tmp_path)
    for name, fig in figs.items():
        for ax in fig.axes:
            if (ax.get_visible() and ax.get_xlabel() == "time (s)") or name == "rate.png":
                assert any(p.get_label() == "link down" for p in ax.patches), name
    (cap,) = [
        ln for ln in figs["rate.png"].axes[0].lines if str(ln.get_label()).startswith("capacity")
    ]
    ys = np.asarray(cap.get_ydata())
    assert sorted(set(np.round(ys, 6))) == [0.0, 10.0]
    # 10 Mbit/s: the demo's goodput over 1 s stays near it (18.1 over 100 ms)
    top = float(np.nanmax(goodput_and_send_rate(res.series)["goodput"])) / 1e6
    assert 9.0 < top < 11.0
    assert float(np.nanmax(res.goodput()["goodput"])) / 1e6 > 15.0


def _sweep_dir(tmp_path: Path, rows: list[dict[str, Any]], axes: list[str]) -> Path:
    """A sweep's folder with only what the throughput-delay plot reads."""
    import json

    d = tmp_path / "sweep"
    d.mkdir()
    frame = pd.DataFrame(rows)
    frame["status"] = "ok"
    frame.to_parquet(d / "runs.parquet")
    (d / "sweep.json").write_text(json.dumps({"name": "t", "axes": [{"paths": [a]} for a in axes]}))
    return d


def _drawn(ax: Any) -> dict[str, Any]:
    """Per legend label, the errorbar container drawn with it."""
    from matplotlib.container import ErrorbarContainer

    return {c.get_label(): c for c in ax.containers if isinstance(c, ErrorbarContainer)}


def test_no_interval_from_fewer_than_three_seeds(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    from wavelab.plot.throughput_delay import plot_throughput_delay

    rows = [
        {"cc": cc, "seed": s, "rtt_p95_ms": 50.0 + s, "goodput_mbps": g}
        for cc, gs in (("cubic", (0.1, 9.0)), ("bbr", (5.0, 5.5, 6.0)))
        for s, g in enumerate(gs)
    ]
    fig = plot_throughput_delay(_sweep_dir(tmp_path, rows, ["cc", "seed"]))
    ax = fig.axes[0]
    drawn = _drawn(ax)
    # two cubic seeds: each run drawn, no bar; three bbr seeds: their mean with an interval
    cubic, bbr = drawn["cc=cubic"], drawn["cc=bbr"]
    assert cubic.has_yerr is False and len(cubic.lines[0].get_xdata()) == 2
    assert bbr.has_yerr is True and list(bbr.lines[0].get_ydata()) == [5.5]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "no interval: fewer than 3 seeds, each run drawn" in labels
    assert "else each run" in ax.get_title()
    plt.close(fig)


def test_an_interval_stops_at_zero(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    from wavelab.plot.throughput_delay import plot_throughput_delay

    # three seeds spread so widely that mean - t * s / sqrt(n) is below zero
    rows = [
        {"cc": "wave", "seed": s, "rtt_p95_ms": d, "goodput_mbps": g}
        for s, (d, g) in enumerate([(10.0, 0.1), (12.0, 0.2), (300.0, 9.0)])
    ]
    fig = plot_throughput_delay(_sweep_dir(tmp_path, rows, ["cc", "seed"]))
    bars = _drawn(fig.axes[0])["cc=wave"]
    for segments in bars.lines[2]:  # the x bars, then the y bars
        low = min(float(np.min(seg[:, i])) for seg in segments.get_segments() for i in (0, 1))
        assert low >= 0.0
    plt.close(fig)


def test_the_delay_axis_is_logarithmic_when_delays_span_decades(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    from wavelab.plot.throughput_delay import plot_throughput_delay

    def rows(far: float) -> list[dict[str, Any]]:
        return [
            {"cc": cc, "rtt_p95_ms": d, "goodput_mbps": 5.0}
            for cc, d in (("cubic", 40.0), ("bbr", 60.0), ("wave", far))
        ]

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    spread = plot_throughput_delay(_sweep_dir(tmp_path / "a", rows(76_000.0), ["cc"]))
    narrow = plot_throughput_delay(_sweep_dir(tmp_path / "b", rows(90.0), ["cc"]))
    assert spread.axes[0].get_xscale() == "log" and narrow.axes[0].get_xscale() == "linear"
    # better is to the right: the axis stays inverted either way
    assert spread.axes[0].xaxis_inverted() and narrow.axes[0].xaxis_inverted()
    plt.close(spread)
    plt.close(narrow)


def test_points_take_their_algorithms_colour_whatever_is_varied_first(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    from wavelab.plot.style import algorithm_style
    from wavelab.plot.throughput_delay import plot_throughput_delay

    rows = [
        {"rate": r, "flows[0].cc": cc, "rtt_p95_ms": 40.0 + i, "goodput_mbps": 2.0 + i}
        for i, (r, cc) in enumerate([("5Mbit/s", "cubic"), ("5Mbit/s", "bbr"), ("9Mbit/s", "bbr")])
    ]
    fig = plot_throughput_delay(_sweep_dir(tmp_path, rows, ["rate", "flows[0].cc"]))
    drawn = _drawn(fig.axes[0])
    assert set(drawn) == {"flows[0].cc=cubic", "flows[0].cc=bbr"}
    for cc in ("cubic", "bbr"):
        line = drawn[f"flows[0].cc={cc}"].lines[0]
        assert to_hex(line.get_color()) == algorithm_style(cc).color.lower()
        assert line.get_marker() == algorithm_style(cc).marker
    plt.close(fig)


def test_no_figure_keeps_matplotlibs_old_colours() -> None:
    # every figure takes its colours from wavelab.plot.style (Okabe-Ito, a
    # fixed colour per algorithm); matplotlib's tab10 set red and green apart
    # only for readers without deuteranopia
    from wavelab.experiments import mobiwac2009
    from wavelab.plot.style import algorithm_style

    tab10 = ("tab:", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")
    package = ROOT / "python" / "wavelab"
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8").lower()
        assert not any(c in text for c in tab10), path
    assert mobiwac2009.COLOURS["Wave"] == algorithm_style("wave").color
    assert mobiwac2009.COLOURS["regular"] == algorithm_style("newreno").color
