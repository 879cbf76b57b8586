"""The run summary's delay, loss, utilisation and fairness figures:
the sweep metrics' figures, checked against the run's own tables."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import wavelab
from conftest import LOSSY
from conftest import wavelab as cli
from wavelab import _native
from wavelab.analysis.metrics import flow_metrics
from wavelab.results import RUN_COLUMNS, table_columns
from wavelab.results.native_files import run_files
from wavelab.scenario import builtin_scenario


@pytest.fixture(scope="module")
def demo() -> wavelab.Results:
    # two flows through a bottleneck with an outage
    return wavelab.run(builtin_scenario("demo"))


def test_each_flows_rtt_and_retransmission_rate_are_its_senders(demo: wavelab.Results) -> None:
    s, f = demo.summary(), demo.flows
    assert list(s["flow"]) == list(f["name"]) and len(s) == 2
    for q in ("rtt_mean", "rtt_p50", "rtt_p95", "rtt_p99"):
        assert s[f"{q}_ms"].tolist() == pytest.approx((f[q] * 1e3).tolist(), abs=0.005)
    rate = f["retransmissions"] / f["segments_sent"]
    assert (rate > 0).all()
    assert s["retransmission_rate"].tolist() == pytest.approx(rate.tolist(), abs=5e-6)
    assert (s["min_rtt_ms"] <= s["rtt_p50_ms"]).all()
    assert (s["rtt_p50_ms"] <= s["rtt_p95_ms"]).all() and (s["rtt_p95_ms"] <= s["rtt_p99_ms"]).all()


def test_the_runs_figures_are_the_bottlenecks_and_the_sweep_tables(demo: wavelab.Results) -> None:
    s = demo.summary()
    # the run's figures are on every flow's row, and the same
    for c in RUN_COLUMNS:
        assert s[c].nunique(dropna=False) == 1, c
    row = s.iloc[0]
    # the bottleneck: where packets waited longest, from the links table
    links = demo.links
    b = links.loc[links["queue_delay_mean"].idxmax()]
    assert row["bottleneck"] == f"{b['link']}:{b['direction']}" == "bottleneck:forward"
    assert row["queue_delay_mean_ms"] == pytest.approx(b["queue_delay_mean"] * 1e3, abs=0.005)
    assert row["queue_delay_p95_ms"] == pytest.approx(b["queue_delay_p95"] * 1e3, abs=0.005)
    assert row["queue_delay_p95_ms"] > row["queue_delay_mean_ms"] > 0
    dropped = b["dropped_queue"] + b["dropped_random"] + b["dropped_outage"]
    assert dropped > 0
    assert row["loss_rate"] == pytest.approx(dropped / b["arrived"], abs=5e-6)
    # Jain's index of the goodputs, computed here
    g = demo.flows["goodput"].to_numpy(dtype=float)
    assert row["jain"] == pytest.approx(g.sum() ** 2 / (len(g) * (g * g).sum()), abs=5e-5)
    assert 0.5 < row["jain"] < 1
    # every figure is the sweep table's (flow_metrics), rounded
    m = flow_metrics(
        demo.flows, demo.links, demo.run, demo.scenario.normalized, demo.handovers, demo.handoffs
    )
    assert 0.5 < m["utilisation"] <= 1
    rounding = {"queue_delay_mean_ms": 0.005, "queue_delay_p95_ms": 0.005, "loss_rate": 5e-6}
    for c in RUN_COLUMNS[1:]:
        assert row[c] == pytest.approx(m[c], abs=rounding.get(c, 5e-5)), c
    for name, r in zip(s["flow"], s.itertuples(), strict=True):
        assert r.rtt_p99_ms == pytest.approx(m[f"rtt_p99_ms:{name}"], abs=0.005)
        assert r.retransmission_rate == pytest.approx(m[f"retransmission_rate:{name}"], abs=5e-6)


def test_summary_csv_is_the_summary_on_both_write_paths(demo: wavelab.Results) -> None:
    # Results.to_files (DataFrames) and the native columns (a sweep's worker)
    mine = demo.to_files()["summary.csv"]
    sc = builtin_scenario("demo")
    sim = _native.Simulation(sc.to_json())
    sim.run_until(sim.end)
    tables, run = sim.results(), dict(sim.run_stats())
    native, _ = run_files(sc, tables, run, True)
    # and with the metrics a sweep's worker computed from the native columns
    t = {k: table_columns(tables[k]) for k in ("flows", "links", "handovers", "handoffs")}
    m = flow_metrics(t["flows"], t["links"], run, sc.normalized, t["handovers"], t["handoffs"])
    worker, _ = run_files(sc, tables, run, True, m)
    assert worker["summary.csv"] == native["summary.csv"]
    frame = pd.read_csv(io.BytesIO(mine))
    assert list(frame.columns)[-len(RUN_COLUMNS) :] == list(RUN_COLUMNS)
    assert frame["rtt_p95_ms"].tolist() == demo.summary()["rtt_p95_ms"].tolist()
    # the same run, the same figures (run.json differs only in wall time)
    assert native["summary.csv"] == mine


def test_a_lone_flow_has_no_jain_and_the_cli_prints_the_runs_line(tmp_path: Path) -> None:
    (tmp_path / "one.toml").write_text(LOSSY)
    res = cli("run", "one.toml", "--out", "out", "--no-plots", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert len(summary) == 1 and math.isnan(summary["jain"].iloc[0])
    row = summary.iloc[0]
    lines = res.stdout.splitlines()
    run_line = next(line for line in lines if line.startswith("run: bottleneck "))
    assert "jain" not in run_line
    assert f"queue_delay_p95_ms {row['queue_delay_p95_ms']:.2f}" in run_line
    assert f"utilisation {row['utilisation']:.4f}" in run_line
    # the RTT block: one header, then the flow's figures as in the CSV
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["flow", "min_rtt_ms"])
    figures = [float(x) for x in lines[header + 1].split()[1:]]
    want = row[["min_rtt_ms", "rtt_mean_ms", "rtt_p50_ms", "rtt_p95_ms", "rtt_p99_ms"]]
    assert figures == pytest.approx(np.asarray(want, dtype=float).tolist())


def test_each_flows_network_statistics_are_in_the_summary(demo: wavelab.Results) -> None:
    s, f = demo.summary(), demo.flows
    for c in ("owd_mean", "owd_p50", "owd_p95", "owd_p99", "jitter"):
        assert s[f"{c}_ms"].tolist() == pytest.approx((f[c] * 1e3).tolist(), abs=0.0005)
    # the demo's bottleneck drops: every drop of a data packet is a flow's
    # network loss; what is neither received nor lost is in flight at the end
    assert (s["packets_lost"] > 0).all()
    assert (f["packets_received"] + f["packets_lost"] <= f["packets_sent"]).all()
    lost = int(f["packets_lost"].sum())
    dropped = demo.links[["dropped_queue", "dropped_random", "dropped_outage"]].to_numpy().sum()
    assert lost <= dropped
    # one-way delay is at least the path's propagation, below the RTT
    assert (s["owd_p50_ms"] <= s["rtt_p50_ms"]).all()
    assert (s["owd_p50_ms"] <= s["owd_p95_ms"]).all() and (s["owd_p95_ms"] <= s["owd_p99_ms"]).all()
