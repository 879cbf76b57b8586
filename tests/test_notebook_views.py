"""How scenarios, sweeps and results show in a notebook and a terminal:
a text repr of one line, a short HTML view with every value escaped, and
progress bars that a Jupyter kernel shows though its stderr is no
terminal."""

from __future__ import annotations

import io
import sys
import tomllib
import types

import pytest

import wavelab
from conftest import SMALL, TINY_SWEEP
from wavelab._util import progress_bars
from wavelab.sweep import from_sweep_dict
from wavelab.sweep.progress import Progress


def test_a_scenario_is_one_line_and_two_small_tables() -> None:
    sc = wavelab.load_scenario("demo")
    assert repr(sc) == "Scenario('demo', 40s, 3 links, 2 flows of newreno, from demo.toml)"
    page = sc._repr_html_()
    assert page.startswith("<p><b>Scenario demo</b>: 40s simulated, seed 1")
    assert page.count("<table>") == 2
    assert "<td>bottleneck</td><td>router1 - router2</td><td>10Mbit/s</td>" in page
    assert "<td>second</td><td>sender -&gt; receiver</td><td>newreno</td>" in page


def test_a_scenarios_counts_and_text_are_its_own() -> None:
    data = tomllib.loads(SMALL)
    data["name"] = "<b>bold</b>"
    data["flows"][0]["count"] = 3
    data["flows"][0]["cc"] = "cubic"
    data["links"][0]["handovers"] = [{"at": "1s", "rate": "2Mbit/s"}]
    sc = wavelab.from_dict(data)
    assert repr(sc) == "Scenario('<b>bold</b>', 3s, 1 link, 3 flows of cubic)"
    page = sc._repr_html_()
    assert "<b>bold</b>" not in page.replace("<b>Scenario", "")
    assert "&lt;b&gt;bold&lt;/b&gt;" in page
    assert "<td>bernoulli p=0.01</td><td>1 handover</td>" in page


def test_a_sweep_shows_its_axes_under_their_short_names() -> None:
    data = tomllib.loads(TINY_SWEEP + '\n[sweep.names]\nalgorithm = "flows[0].cc"\n')
    sweep = from_sweep_dict(data)
    assert repr(sweep) == "Sweep('tiny', 4 points: algorithm (2) x seed (2))"
    page = sweep._repr_html_()
    assert "<p><b>Sweep tiny</b>: 4 points</p>" in page
    assert "<td>algorithm</td><td>flows[0].cc</td><td>2</td><td>reno, cubic</td>" in page
    assert "<td>seed</td><td>seed</td><td>2</td><td>1, 2</td>" in page


def test_many_values_are_cut_short() -> None:
    data = tomllib.loads(TINY_SWEEP)
    data["sweep"]["seeds"] = 12
    page = from_sweep_dict(data)._repr_html_()
    assert "<td>1, 2, 3, 4, 5, ... (12 in all)</td>" in page


def test_results_show_their_flows_summary() -> None:
    res = wavelab.run(wavelab.from_toml(SMALL))
    assert repr(res) == "Results('small', complete, 1 flow, 3 s simulated)"
    page = res._repr_html_()
    assert page.startswith("<p><b>Results small</b>: complete, 1 flow, 3 s simulated</p>")
    goodput = res.summary()["goodput_mbps"].iloc[0]
    assert f"<td>newreno</td><td>{goodput:.4g}</td>" in page
    assert page.count("</tr>") == 2  # the header and the flow


@pytest.fixture
def notebook(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process seen as a Jupyter kernel."""
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))


def test_a_run_shows_its_progress_in_a_notebook(
    notebook: None, capsys: pytest.CaptureFixture[str]
) -> None:
    wavelab.run(wavelab.from_toml(SMALL), progress=True)
    assert "sim s" in capsys.readouterr().err


def test_a_run_shows_no_bar_in_a_log(capsys: pytest.CaptureFixture[str]) -> None:
    wavelab.run(wavelab.from_toml(SMALL), progress=True)  # stderr: no terminal
    assert "sim s" not in capsys.readouterr().err


def test_a_sweeps_bar_shows_in_a_notebook(notebook: None) -> None:
    out = io.StringIO()
    bar = Progress(4, stream=out)
    bar.update(2)
    bar.close()
    assert "2/4" in out.getvalue()
    assert progress_bars.in_notebook()


def test_a_sweep_logs_lines_without_a_terminal_or_notebook() -> None:
    out = io.StringIO()
    bar = Progress(4, stream=out)
    assert bar.bar is None
    bar.update(4)
    bar.close()
    assert out.getvalue().startswith("runs: 4/4 runs (100%)")
