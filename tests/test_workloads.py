"""Workloads of short transfers and the delay series through the Python
layer: the transfers table and its summary, the CLI's FCT block and
figures, files read relative to the scenario, the report, the round trip
through Parquet, and the errors a user meets."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import wavelab
from conftest import wavelab as cli
from wavelab import ScenarioFileError
from wavelab.analysis.transfers import transfer_summary
from wavelab.scenario import builtin_scenario

WEB = """
name = "web"
duration = "6s"
output = { delays = true }
[[links]]
between = ["s", "r"]
rate = "10Mbit/s"
delay = "20ms"
queue = "100pkt"
[[flows]]
name = "bulk"
from = "s"
to = "r"
cc = "cubic"
[[flows]]
name = "ping"
from = "s"
to = "r"
transport = "ping"
ping = { interval = "100ms" }
[[workloads]]
name = "short"
from = "s"
to = "r"
stop = "5s"
arrivals = { process = "poisson", rate = 10 }
sizes = { distribution = "fixed", size = "20kB" }
"""


def test_transfers_have_completion_times_slowdowns_and_a_summary_row() -> None:
    res = wavelab.run(wavelab.from_toml(WEB))
    t = res.transfers
    assert len(t) > 20
    # each is a flow after the scenario's own two, named after the workload
    assert list(t["flow_index"]) == list(range(2, 2 + len(t)))
    assert list(res.flows["name"].iloc[2:]) == [f"short/{k}" for k in range(len(t))]
    assert (t["size"] == 20_000).all()
    done = t.dropna(subset=["completion_time"])
    assert len(done) > 0
    assert (done["slowdown"] == done["completion_time"] / done["ideal"]).all()
    # the ideal: 2 x 40 ms + 20 kB at 10 Mbit/s
    assert t["ideal"].iloc[0] == pytest.approx(0.080 + 0.016)
    s = res.summary()
    assert list(s["flow"]) == ["bulk", "ping", "short"]
    row = s.set_index("flow").loc["short"]
    assert row["transfers"] == len(t) and row["completed"] == len(done)
    assert row["fct_p50_s"] == pytest.approx(done["completion_time"].median())
    assert row["slowdown_mean"] == pytest.approx(done["slowdown"].mean())
    # the delay series: the ping's RTT per interval, under the bulk flow's queue
    d = res.delays
    ping = d[(d["flow"] == 1) & d["rtt_mean"].notna()]
    assert len(ping) > 40 and (ping["rtt_mean"] >= 0.040).all()
    # the base RTT (40 ms) first, then the bulk flow's queue on top
    assert ping["rtt_mean"].iloc[0] < 0.041 and ping["rtt_mean"].iloc[-10:].min() > 0.060
    assert (ping["rtt_max"] >= ping["rtt_mean"]).all()
    assert len(res.owd_distribution) > 0


def test_a_transfers_summary_of_nothing_completed_has_nan_figures() -> None:
    t = pd.DataFrame(
        {
            "workload": ["w", "w"],
            "completion_time": [None, None],
            "slowdown": [None, None],
        }
    )
    s = transfer_summary(t).iloc[0]
    assert (s["transfers"], s["completed"]) == (2, 0)
    assert pd.isna(s["fct_mean_s"]) and pd.isna(s["slowdown_p99"])


def test_the_cli_prints_the_fct_block_and_draws_the_traffic_figures(tmp_path: Path) -> None:
    (tmp_path / "web.toml").write_text(WEB)
    res = cli("run", "web.toml", "--out", "o", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.lstrip().startswith("workload"))
    assert lines[head].split()[:4] == ["workload", "algorithm", "transfers", "completed"]
    assert lines[head + 1].split()[:2] == ["short", "newreno"]
    # the transfers are not rows of the per-flow blocks
    assert not any(line.lstrip().startswith("short/") for line in lines)
    for name in ("fct-cdf.png", "owd-cdf.png", "delays.png", "transfers.parquet"):
        assert (tmp_path / "o" / name).exists(), name
    again = wavelab.Results.read_parquet(tmp_path / "o")
    assert len(again.transfers) == len(again.flows) - 2
    assert list(again.delays.columns)[:3] == ["time", "flow", "packets"]
    page = cli("report", "o", "--out", "o/report.html", cwd=tmp_path)
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "o" / "report.html").read_text()
    assert "Transfers" in html and "fct-cdf" in html


def test_web_bulk_reads_its_size_cdf_beside_the_scenario() -> None:
    sc = builtin_scenario("web-bulk").with_changes({"duration": "8s", "workloads[0].stop": "7s"})
    assert Path(sc.normalized["workloads"][0]["sizes"]["file"]).is_file()
    res = wavelab.run(sc)
    assert len(res.transfers) > 5
    assert res.transfers["size"].between(200, 10_000_000).all()


def test_the_same_seed_draws_the_same_transfers_and_another_seed_others() -> None:
    def sizes(seed: int) -> list[float]:
        text = WEB.replace(
            'distribution = "fixed", size = "20kB"', 'distribution = "exponential", mean = "20kB"'
        )
        sc = wavelab.from_toml(text).with_changes({"seed": seed})
        return wavelab.run(sc).transfers["size"].tolist()

    assert sizes(3) == sizes(3)
    assert sizes(3) != sizes(4)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            'sizes = { distribution = "pareto", mean = "20kB", shape = 1.0 }',
            "workloads[0].sizes.shape: 1 is not above 1",
        ),
        (
            'sizes = { distribution = "weibull", mean = "20kB" }',
            "workloads[0].sizes.distribution",
        ),
        (
            'sizes = { distribution = "empirical", file = "nowhere.csv" }',
            "workloads[0].sizes.file: ",
        ),
    ],
)
def test_bad_workload_settings_name_the_field_and_value(change: str, message: str) -> None:
    text = WEB.replace('sizes = { distribution = "fixed", size = "20kB" }', change)
    with pytest.raises(ScenarioFileError) as e:
        wavelab.from_toml(text)
    assert message in str(e.value)


def test_a_bad_rate_and_a_bad_cdf_line_name_the_field_and_value(tmp_path: Path) -> None:
    with pytest.raises(ScenarioFileError) as e:
        wavelab.from_toml(WEB.replace("rate = 10 }", "rate = 0 }"))
    assert "workloads[0].arrivals.rate: 0 is not a rate above zero" in str(e.value)
    (tmp_path / "sizes.csv").write_text("size,cdf\n1000,0.5\n900,1\n")
    (tmp_path / "w.toml").write_text(
        WEB.replace(
            'sizes = { distribution = "fixed", size = "20kB" }',
            'sizes = { distribution = "empirical", file = "sizes.csv" }',
        )
    )
    with pytest.raises(ScenarioFileError) as e:
        wavelab.load_scenario(tmp_path / "w.toml")
    assert "workloads[0].sizes.file: " in str(e.value)
    assert "line 3: point (900, 1) is below the previous one (1000, 0.5)" in str(e.value)


def test_a_sweeps_metrics_keep_the_flows_figures_to_the_scenarios_own_flows(
    tmp_path: Path,
) -> None:
    from wavelab.analysis.metrics import flow_metrics, unit
    from wavelab.sweep.runs_table import run_dir_metrics

    res = wavelab.run(wavelab.from_toml(WEB))
    m = flow_metrics(res.flows, res.links, res.run, res.scenario.normalized)
    # the bulk flow and the ping; the transfers have figures of their own
    assert m["flows"] == 2 and "goodput_mbps:bulk" in m and "goodput_mbps:short/0" not in m
    res.to_parquet(tmp_path / "o")
    stored = run_dir_metrics(tmp_path / "o")
    done = res.transfers["completion_time"].dropna()
    assert stored["transfers"] == len(res.transfers)
    assert stored["transfers_completed"] == len(done)
    assert stored["fct_p50_s"] == pytest.approx(float(done.median()))
    assert stored["flows"] == 2
    assert unit("slowdown_p99") == "1" and unit("fct_p99_s") == "s"
