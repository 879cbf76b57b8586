"""`wavelab report`: one self-contained HTML file, checked in Debian's
headless Chromium: it loads from a file without any network request, without
console errors, and shows its plots with data; a click selects another run."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from browser import Browser
from conftest import require_tool, wavelab
from wavelab.sweep import from_sweep_dict
from wavelab.sweep.backends import LocalPool
from wavelab.sweep.runner import run_sweep

SWEEP = """
name = "report-test"
duration = "12s"

[[links]]
name = "access"
between = ["s", "r"]
rate = "100Mbit/s"
delay = "1ms"

[[links]]
name = "bottleneck"
between = ["r", "d"]
rate = "2Mbit/s"
delay = "30ms"
queue = "50pkt"
loss = { model = "bernoulli", p = 0.005 }
handovers = [{ at = "5s", outage = "1s", rate = "8Mbit/s", delay = "100ms" }]

[[flows]]
name = "f"
from = "s"
to = "d"
log_packets = true
count = 2

[sweep]
"flows[0].cc" = ["newreno", "wave"]
seeds = 2
"""


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import tomllib

    out = tmp_path_factory.mktemp("report") / "sweep"
    sweep = from_sweep_dict(tomllib.loads(SWEEP), Path("report-test.toml"), SWEEP)
    o = run_sweep(sweep, out, LocalPool(2), progress=False, log=lambda m: None)
    assert o.stopped is None and not o.failed
    return out


@pytest.fixture(scope="module")
def sweep_report(sweep_dir: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The sweep's report, written once by `wavelab report`, and that command."""
    res = wavelab("report", str(sweep_dir))
    return sweep_dir / "report.html", res


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    binary = require_tool("chromium", "chromium-browser", "google-chrome")
    with Browser(binary, width=1400, height=1000) as b:
        yield b


def open_report(b: Browser, html: Path) -> None:
    b.events.clear()
    b.open(html.as_uri())
    b.wait_for("window.wavelabReport && window.wavelabReport.plots() >= 4", timeout=60)
    # the runs overlaid, where the page has two runs or more, drawn too
    b.wait_for(
        "!document.getElementById('overlay-select') || document.body.hasAttribute('data-overlaid')",
        timeout=60,
    )


def plot_points(b: Browser) -> dict[str, list[int]]:
    """Points per trace of every plot on the page."""
    value: dict[str, list[int]] = b.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".map(g => [g.id, g.data.map(t => (t.x || []).length)]))"
    )
    return value


def assert_clean(b: Browser, html: Path) -> None:
    assert b.problems() == []
    # the figures are data: URLs inside the file; nothing else is fetched
    outside = {u for u in b.requests() if not u.startswith("data:image/png;base64,")}
    assert outside == {html.as_uri()}, "no request beyond the file itself"


def test_sweep_report_loads_offline_and_shows_its_plots(
    sweep_dir: Path,
    sweep_report: tuple[Path, subprocess.CompletedProcess[str]],
    browser: Browser,
    tmp_path: Path,
) -> None:
    html, res = sweep_report
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"wrote {html} (")
    text = html.read_text()
    # nothing is loaded from elsewhere
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|<img[^>]+src=\"http", text)
    open_report(browser, html)
    assert_clean(browser, html)
    # on a wide screen, plotly's mode bar (zoom, pan, export) on each plot
    assert browser.evaluate("document.querySelectorAll('.modebar-btn').length") > 0
    points = plot_points(browser)
    for plot in (
        "plot-rate", "plot-window", "plot-rtt", "plot-sequence", "plot-rtt-cdf", "plot-scatter",
        "plot-throughput-delay",
    ):  # fmt: skip
        assert plot in points and sum(points[plot]) > 0, (plot, points)
    # two flows: a goodput and a sending-rate trace each, with data, and the
    # bottleneck's capacity: 2 Mbit/s, nothing during the handover's outage, 8
    assert len(points["plot-rate"]) == 5 and min(points["plot-rate"][:4]) > 50
    # the RTT CDF of each flow, from every sample, ending at 1
    cdf = browser.evaluate("document.getElementById('plot-rtt-cdf').data.map(t => t.y)")
    assert len(cdf) == 2 and all(y[-1] == 1 and y[0] == 0 and len(y) > 20 for y in cdf)
    capacity = browser.evaluate("document.getElementById('plot-rate').data[4]")
    assert capacity["name"] == "capacity (bottleneck:forward)"
    assert sorted(set(capacity["y"])) == [0, 2, 8]
    # one marker per run, coloured by the algorithm; two seeds per point are
    # too few for an interval: no mean is drawn over them
    assert points["plot-scatter"] == [2, 2], "one trace per algorithm, no means"
    assert browser.evaluate("document.getElementById('scatter-color').value") == "flows[0].cc"
    assert (
        browser.evaluate("document.querySelectorAll('#plot-rate .scatterlayer .trace').length") == 5
    )
    # the throughput-delay plot: p95 RTT reversed, each run drawn (two
    # seeds: no interval; the means of three seeds are checked below)
    td = browser.evaluate(
        "(() => { const g = document.getElementById('plot-throughput-delay');"
        " return { range: g._fullLayout.xaxis.range,"
        " means: g.data.filter(t => t.error_x).length,"
        " runs: g.data.filter(t => !t.error_x).map(t => t.x.length) }; })()"
    )
    assert td["range"][0] > td["range"][1] and sum(td["runs"]) == 4 and td["means"] == 0
    first = browser.evaluate("document.body.getAttribute('data-plotted-run')")
    table_rows = browser.evaluate("document.querySelectorAll('tbody tr.clickable').length")
    assert table_rows == 4

    # selecting a Wave run from the table redraws the plots with its burst and TxTime
    browser.evaluate(
        "Array.from(document.querySelectorAll('tbody tr.clickable'))"
        ".find(r => r.textContent.includes('wave')).click()"
    )
    browser.wait_for(f"document.body.getAttribute('data-plotted-run') !== '{first}'")
    names = browser.evaluate(
        "document.getElementById('plot-window').data.map(t => t.name + '|' + (t.yaxis || 'y'))"
    )
    assert "f#0 burst (segments)|y" in names and "f#0 TxTime (ms)|y2" in names, names
    assert (
        browser.evaluate("document.querySelector('tbody tr.selected').textContent").find("wave")
        >= 0
    )
    retransmitted = browser.evaluate(
        "document.getElementById('plot-sequence').data"
        ".filter(t => t.name.endsWith('retransmitted')).map(t => t.x.length)"
    )
    assert retransmitted and sum(retransmitted) > 0, "the packet log's retransmissions"
    # the handover's outage is shaded on every plot
    assert browser.evaluate("document.getElementById('plot-rate').layout.shapes.length") == 1
    assert_clean(browser, html)
    shot = tmp_path / "report.png"
    browser.screenshot(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000


def test_the_report_is_usable_on_a_phone_in_the_algorithms_colours(
    sweep_dir: Path, sweep_report: tuple[Path, subprocess.CompletedProcess[str]], browser: Browser
) -> None:
    from wavelab.plot.style import ALGORITHM_STYLES, flow_styles

    html, res = sweep_report
    assert res.returncode == 0, res.stderr
    browser.viewport(400, 800, mobile=True)
    try:
        open_report(browser, html)
        assert_clean(browser, html)
        fit = browser.evaluate(
            "(() => ({ page: document.documentElement.scrollWidth,"
            " inner: window.innerWidth,"
            " plots: Array.from(document.querySelectorAll('.js-plotly-plot'))"
            ".map(g => [g.id, g.getBoundingClientRect().left, g.getBoundingClientRect().right]),"
            " controls: Array.from(document.querySelectorAll('select, input, .table-wrap'))"
            ".map(e => e.getBoundingClientRect().right) }))()"
        )
        # nothing wider than the screen: no sideways scrolling of the page
        assert fit["inner"] == 400 and fit["page"] <= 400, fit
        # the run's five, the metric plot, the throughput-delay plot, the four of runs overlaid
        assert len(fit["plots"]) == 11
        for name, left, right in fit["plots"]:
            assert left >= 0 and right <= 400 and right - left > 300, (name, left, right)
        assert max(fit["controls"]) <= 400, fit["controls"]
        # every plot still has its data, legends below the plot area
        assert all(sum(p) > 0 for p in plot_points(browser).values())
        legend = browser.evaluate(
            "document.getElementById('plot-rate')._fullLayout.legend.orientation"
        )
        assert legend == "h"
        # no mode bar over the titles (zoom by touch)
        assert browser.evaluate("document.querySelectorAll('.modebar-btn').length") == 0
        # the runs' flows in their algorithm's colour and line style, as in the PNGs
        traces = browser.evaluate(
            "document.getElementById('plot-rate').data.filter(t => t.name.endsWith(' goodput'))"
            ".map(t => [t.line.color, t.line.dash])"
        )
        run = browser.evaluate("document.body.getAttribute('data-plotted-run')")
        cc = pd.read_parquet(sweep_dir / "runs.parquet").set_index("run").loc[run, "flows[0].cc"]
        want = flow_styles([cc, cc])
        assert traces == [[s.color, s.dash] for s in want]
        # the throughput-delay plot coloured by algorithm: each one's colour and marker
        td = browser.evaluate(
            "document.getElementById('plot-throughput-delay').data"
            ".map(t => [t.name, t.marker.color, t.marker.symbol])"
        )
        for name, colour, symbol in td:
            algorithm = name.split("=")[1].split(" ")[0]
            st = ALGORITHM_STYLES[algorithm]
            assert (colour, symbol) == (st.color, st.symbol), name
    finally:
        browser.viewport(1400, 1000)


def _tabled_sweep(d: Path) -> Path:
    """A sweep's folder with its tables alone (no runs): CUBIC with three
    seeds at 40-50 ms, BBR with two, Wave with three whose p95 RTTs reach
    seconds and whose goodputs spread so widely that a 95 % interval would
    reach below zero."""
    import json

    from wavelab.analysis.seeds import aggregate

    points = {
        "cubic": [(40.0, 5.0), (45.0, 5.2), (50.0, 5.1)],
        "bbr": [(60.0, 6.0), (62.0, 6.1)],
        "wave": [(10_000.0, 0.1), (30_000.0, 0.2), (76_000.0, 4.0)],
    }
    rows = [
        {"point": f"{cc}-{s}", "run": f"{cc}-{s}", "status": "ok", "flows[0].cc": cc, "seed": s,
         "rtt_p95_ms": rtt, "goodput_mbps": g}
        for cc, runs in points.items() for s, (rtt, g) in enumerate(runs)
    ]  # fmt: skip
    d.mkdir()
    table = pd.DataFrame(rows)
    table.to_parquet(d / "runs.parquet")
    aggregate(table, ["flows[0].cc", "seed"]).to_parquet(d / "seeds.parquet")
    axes = [{"paths": ["flows[0].cc"]}, {"paths": ["seed"]}]
    (d / "sweep.json").write_text(json.dumps({"name": "tabled", "axes": axes}))
    return d


def test_the_sweep_plots_tell_the_truth(tmp_path: Path, browser: Browser) -> None:
    from wavelab.plot.style import ALGORITHM_STYLES
    from wavelab.report import write_report

    html = write_report(_tabled_sweep(tmp_path / "sweep"), tmp_path / "report.html")
    browser.events.clear()
    browser.open(html.as_uri())
    # no run's series embedded: the page is ready once its two sweep plots are drawn
    browser.wait_for(
        "window.wavelabReport && window.wavelabReport.ready"
        " && document.querySelectorAll('.js-plotly-plot').length === 2",
        timeout=60,
    )
    assert_clean(browser, html)

    def plot(name: str) -> dict[str, Any]:
        value: dict[str, Any] = browser.evaluate(
            f"(() => {{ const g = document.getElementById('{name}');"
            " return { x: g._fullLayout.xaxis.type, y: g._fullLayout.yaxis.type,"
            " traces: g.data.map(t => ({ name: t.name, n: t.x.length, colour: t.marker.color,"
            " symbol: t.marker.symbol, opacity: t.marker.opacity,"
            " y: t.y, down: t.error_y ? t.error_y.arrayminus : null,"
            " xdown: t.error_x ? t.error_x.arrayminus : null, x: t.x })) }; })()"
        )
        return value

    # the metric plot: goodput by algorithm, each in its colour and marker
    scatter = plot("plot-scatter")
    runs = [t for t in scatter["traces"] if t["down"] is None]
    assert [t["name"] for t in runs] == ["flows[0].cc=cubic", "flows[0].cc=bbr", "flows[0].cc=wave"]
    for t in runs:
        st = ALGORITHM_STYLES[t["name"].split("=")[1]]
        assert (t["colour"], t["symbol"]) == (st.color, st.symbol)
    # a mean with its interval for three seeds, none for BBR's two; Wave's
    # interval stops at zero goodput
    means = {t["name"].split("=")[1].split(" ")[0]: t for t in scatter["traces"] if t["down"]}
    assert sorted(means) == ["cubic", "wave"]
    wave = means["wave"]
    assert wave["y"][0] == pytest.approx(1.4333, abs=1e-3)
    assert wave["down"][0] == pytest.approx(wave["y"][0])
    # the p95 RTT from 40 ms to 76 s: a logarithmic axis
    browser.evaluate(
        "(() => { const s = document.getElementById('scatter-y'); s.value = 'rtt_p95_ms';"
        " s.dispatchEvent(new Event('change')); return true; })()"
    )
    assert plot("plot-scatter")["y"] == "log"
    # the throughput-delay plot: coloured by algorithm, the delay axis
    # logarithmic and reversed, means from three seeds only
    td = plot("plot-throughput-delay")
    assert td["x"] == "log"
    lo, hi = browser.evaluate(
        "document.getElementById('plot-throughput-delay')._fullLayout.xaxis.range"
    )
    assert lo > hi  # reversed: better is to the right
    means = {t["name"].split("=")[1].split(" ")[0]: t for t in td["traces"] if t["xdown"]}
    assert sorted(means) == ["cubic", "wave"]
    assert means["wave"]["down"][0] == pytest.approx(means["wave"]["y"][0])
    assert means["wave"]["xdown"][0] <= means["wave"]["x"][0]
    # the runs under a mean are faint, BBR's two (its only marks) are not
    opacity = {t["name"]: t["opacity"] for t in td["traces"] if not t["xdown"]}
    assert opacity["flows[0].cc=cubic"] == 0.35 and opacity["flows[0].cc=bbr"] == 0.85
    # a narrow spread keeps a linear axis
    browser.evaluate(
        "(() => { const s = document.getElementById('scatter-y'); s.value = 'goodput_mbps';"
        " s.dispatchEvent(new Event('change')); return true; })()"
    )
    assert plot("plot-scatter")["y"] != "log"


def test_run_and_reproduction_reports(tmp_path: Path, browser: Browser, small_file: Path) -> None:
    run_dir = tmp_path / "run"
    assert (
        wavelab("run", str(small_file), "--out", str(run_dir), "--quiet", "--no-plots").returncode
        == 0
    )
    assert wavelab("report", str(run_dir)).returncode == 0
    html = run_dir / "report.html"
    open_report(browser, html)
    assert_clean(browser, html)
    assert browser.evaluate("document.querySelector('h2').textContent") == "Summary"
    assert all(sum(p) > 0 for p in plot_points(browser).values())

    repro = tmp_path / "repro"
    res = wavelab("reproduce", "wave-page", "--quick", "--out", str(repro))
    assert res.returncode == 0, res.stderr
    out = tmp_path / "elsewhere" / "wave-page.html"
    assert wavelab("report", str(repro), "--out", str(out)).returncode == 0
    open_report(browser, out)
    assert_clean(browser, out)
    headings = browser.evaluate(
        "Array.from(document.querySelectorAll('h2')).map(h => h.textContent)"
    )
    assert headings[:2] == ["comparison.csv", "Figures"], headings
    assert browser.evaluate("document.querySelectorAll('figure img').length") == 8
    assert browser.evaluate("document.querySelectorAll('figure img')[0].naturalWidth") > 100
    assert browser.evaluate("document.querySelectorAll('#run-select option').length") == 4
    assert "one flow, 6 Mbit/s" in browser.evaluate("document.querySelector('table').textContent")


def test_a_report_of_several_runs_overlays_the_runs_chosen_on_a_phone(
    tmp_path: Path, browser: Browser
) -> None:
    import tomllib

    import wavelab as wl
    from conftest import SMALL
    from wavelab.plot.style import PALETTE

    dirs = []
    for cc in ("cubic", "bbr", "newreno"):
        data = tomllib.loads(SMALL)
        data["flows"][0]["cc"] = cc
        wl.run(wl.from_dict(data)).to_parquet(tmp_path / cc)
        dirs.append(str(tmp_path / cc))
    html = tmp_path / "compare.html"
    res = wavelab("report", *dirs, "--out", str(html))
    assert res.returncode == 0, res.stderr
    browser.viewport(400, 800, mobile=True)
    try:
        open_report(browser, html)
        assert_clean(browser, html)
        assert browser.evaluate("document.querySelector('h2').textContent") == "Metrics compared"
        # every run chosen at first, one palette colour each, in the order given
        traces = browser.evaluate(
            "document.getElementById('overlay-rate').data.map(t => [t.name, t.line.color])"
        )
        assert traces == [
            [f"{cc} goodput", PALETTE[i]] for i, cc in enumerate(("cubic", "bbr", "newreno"))
        ]
        assert all(n > 20 for n in plot_points(browser)["overlay-rtt-cdf"])
        # choosing two of them redraws the overlay with those two
        browser.evaluate(
            "(() => { const s = document.getElementById('overlay-select');"
            " s.options[1].selected = false; s.dispatchEvent(new Event('change')); })()"
        )
        browser.wait_for("document.body.getAttribute('data-overlaid') === 'cubic,newreno'")
        names = browser.evaluate("document.getElementById('overlay-rtt').data.map(t => t.name)")
        assert names == ["cubic srtt", "newreno srtt"]
        width = browser.evaluate("document.documentElement.scrollWidth")
        assert width <= 400
    finally:
        browser.viewport(1400, 1000)
    res = wavelab("report", dirs[0], str(tmp_path))
    assert res.returncode != 0 and res.stderr.count("\n") == 1
    assert "--out: give the HTML file" in res.stderr


def test_report_errors_are_one_line(tmp_path: Path) -> None:
    res = wavelab("report", str(tmp_path))
    assert res.returncode == 2
    assert res.stderr == (
        f"error: {tmp_path}: nothing to report: expected a sweep (sweep.json), a run "
        "(run.json) or a reproduction (store/runs/*/run.json)\n"
    )
    res = wavelab("report", str(tmp_path / "missing"))
    assert (
        res.returncode == 2 and res.stderr == f"error: {tmp_path / 'missing'}: no such directory\n"
    )
