"""The plot API and the figures' look: every plot draws into the axes it is
given and returns its figure; one colour and marker per algorithm in every
plot and in the report; the ``paper`` style's one-column size and fonts."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

import wavelab
from conftest import LOSSY
from conftest import wavelab as wavelab_cli
from wavelab import report
from wavelab.cli.main import main
from wavelab.plot import run_plots, throughput_delay
from wavelab.plot.style import (
    ALGORITHM_STYLES,
    OKABE_ITO,
    STYLES,
    algorithm_style,
    flow_styles,
    style,
)

# LOSSY's path (without its flow) carrying three flows: two CUBIC, one BBR
THREE = LOSSY.split("[[flows]]")[0].replace('"lossy"', '"three"').replace('"6s"', '"3s"') + "".join(
    f'[[flows]]\nname = "{name}"\nfrom = "s"\nto = "d"\ncc = "{cc}"\n\n'
    for name, cc in (("a", "cubic"), ("b", "bbr"), ("c", "cubic"))
)


@pytest.fixture(scope="module")
def three_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("three")
    (d / "three.toml").write_text(THREE)
    out = d / "run"
    wavelab.run(wavelab.load_scenario(d / "three.toml")).to_parquet(out)
    return out


@pytest.fixture(scope="module")
def three(three_dir: Path) -> wavelab.Results:
    return wavelab.Results.read_parquet(three_dir)


def _colour(line: Any) -> str:
    return to_hex(line.get_color()).lower()


def _builtin_algorithms() -> list[str]:
    """The algorithms a fresh process knows (other tests in this one
    register algorithms of their own)."""
    code = "from wavelab import _native; print(' '.join(_native.algorithms()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_every_builtin_algorithm_has_its_own_palette_colour_and_marker() -> None:
    palette = {c.lower() for c in OKABE_ITO.values()}
    pairs = set()
    names = _builtin_algorithms()
    assert {"cubic", "bbr", "wave", "newreno"} <= set(names)
    for name in names:
        st = algorithm_style(name)
        assert st.color.lower() in palette, name
        pairs.add((st.color, st.marker))
        assert algorithm_style(name.upper()) == st  # case does not change it
    # a marker each; a colour each as far as the nine colours go
    builtin = len(names)
    assert len({m for _, m in pairs}) == builtin
    assert len({c for c, _ in pairs}) == min(builtin, len(OKABE_ITO))
    # the CUBIC / BBR pair that red and green used to carry
    assert ALGORITHM_STYLES["cubic"].color == OKABE_ITO["blue"]
    assert ALGORITHM_STYLES["bbr"].color == OKABE_ITO["vermillion"]
    # an unknown algorithm keeps one style from call to call
    assert algorithm_style("my-vegas") == algorithm_style("my-vegas")
    # two flows of one algorithm: one colour, two line styles
    a, b, c = flow_styles(["cubic", "bbr", "cubic"])
    assert a.color == c.color != b.color and a.linestyle != c.linestyle


def test_an_algorithm_has_its_colour_in_every_plot_and_in_the_report(
    three: wavelab.Results, three_dir: Path
) -> None:
    cubic, bbr = ALGORITHM_STYLES["cubic"].color.lower(), ALGORITHM_STYLES["bbr"].color.lower()
    rate = run_plots.plot_rate(three)
    cdf = run_plots.plot_rtt_cdf(three)
    assert cdf is not None
    for fig in (rate, cdf):
        lines = {str(ln.get_label()): _colour(ln) for ln in fig.axes[0].lines}
        assert lines["a"] == lines["c"] == cubic and lines["b"] == bbr, lines
        plt.close(fig)
    rtt = run_plots.plot_rtt(three)
    assert _colour(next(ln for ln in rtt.axes[0].lines if ln.get_label() == "b srtt")) == bbr
    plt.close(rtt)
    # the report: each flow carries its algorithm's colour, and the page's spec too
    data = report.run_data(three_dir)
    assert [f["color"].lower() for f in data["flows"]] == [cubic, bbr, cubic]
    assert data["flows"][0]["dash"] != data["flows"][2]["dash"]
    html = report.render(report.build_page(three_dir))
    payload = re.search(
        r'<script id="report-data" type="application/json">(.*?)</script>', html, re.S
    )
    assert payload is not None
    spec = json.loads(payload.group(1))["spec"]
    assert spec["algorithms"]["cubic"]["color"].lower() == cubic
    assert spec["algorithms"]["bbr"]["symbol"] == "square"
    assert spec["palette"][0].lower() == OKABE_ITO["blue"].lower()


def test_a_plot_draws_into_the_axes_it_is_given(three: wavelab.Results) -> None:
    fig, (left, right) = plt.subplots(1, 2)
    got = run_plots.plot_rtt_cdf(three, ax=right)
    assert got is fig
    assert not left.lines and len(right.lines) >= 4  # three flows and all of them
    assert right.get_xlabel() == "RTT (ms)"
    # a plot of two panels given one axes draws its first panel there
    fig2, ax = plt.subplots()
    assert run_plots.plot_rate(three, ax=ax) is fig2
    assert {"a", "b", "c", "all flows"} <= {str(ln.get_label()) for ln in ax.lines}
    assert len(fig2.axes) == 1
    # ... and given two, both
    fig3, axes = plt.subplots(2, 1)
    run_plots.plot_rate(three, ax=axes)
    assert all(a.lines for a in axes) and axes[1].get_title().startswith("sending rate")
    for f in (fig, fig2, fig3):
        plt.close(f)


def test_every_public_plot_takes_ax_and_returns_its_figure(
    three: wavelab.Results, tmp_path: Path
) -> None:
    public = [
        f
        for name, f in inspect.getmembers(run_plots, inspect.isfunction)
        if name.startswith("plot_") and name != "plot_all" and f.__module__ == run_plots.__name__
    ]
    assert len(public) == 9
    for f in [*public, throughput_delay.plot_throughput_delay]:
        assert "ax" in inspect.signature(f).parameters, f.__name__
    for f in public:
        fig, ax = plt.subplots()
        got = f(three, ax=ax)
        if got is None:  # nothing to draw (no queue, no algorithm variable)
            assert not ax.lines, f.__name__
        else:
            assert got is fig and ax.lines, f.__name__
        plt.close(fig)
    # with a path, the figure is written too
    out = tmp_path / "rate.svg"
    assert isinstance(run_plots.plot_rate(three, out), Figure)
    assert out.read_text().lstrip().startswith("<?xml")


def test_the_paper_style_is_one_column_with_readable_text(three: wavelab.Results) -> None:
    assert plt.rcParams["figure.figsize"][0] != 3.5
    with style("paper"):
        fig = run_plots.plot_rate(three)
        width, _ = fig.get_size_inches()
        sizes = {
            t.get_text(): t.get_fontsize()
            for t in fig.findobj(matplotlib.text.Text)
            if t.get_text() and t.get_visible()
        }
        plt.close(fig)
    assert width == pytest.approx(3.5)
    titles = [fig.axes[0].get_title("left"), fig.axes[0].get_ylabel(), "three: rate"]
    assert all(8 <= sizes[t] <= 9 for t in titles), sizes
    # ticks and legends one point smaller, never below 7 pt
    assert min(sizes.values()) >= 7, sizes
    assert STYLES["paper"]["legend.fontsize"] == 7
    # the style is registered with matplotlib under its name too
    assert plt.style.library["wavelab-paper"]["font.size"] == 8
    # outside the block, the user's settings again
    assert plt.rcParams["figure.figsize"][0] != 3.5


def test_wavelab_plot_takes_the_paper_style(
    three: wavelab.Results, three_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the command passes --style to the plots (drawing all of them takes seconds)
    seen: dict[str, Any] = {}

    def plot_all(*args: Any) -> list[Path]:
        seen["style"] = args[-1]
        return []

    monkeypatch.setattr(run_plots, "plot_all", plot_all)
    assert main(["plot", str(three_dir), "--style", "paper", "--out", str(tmp_path)]) == 0
    assert seen == {"style": "paper"}
    bad = wavelab_cli("plot", str(three_dir), "--style", "poster")
    assert bad.returncode == 2 and "--style" in bad.stderr and "paper" in bad.stderr
    # a paper SVG is one column wide: 3.5 in, 252 pt
    out = tmp_path / "rate.svg"
    with style("paper"):
        run_plots.plot_rate(three, out)
    svg = out.read_text()
    assert re.search(r'<svg[^>]* width="252pt"', svg), svg[:400]
