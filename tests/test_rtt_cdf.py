"""The RTT CDF: from every sample each sender took (the
run's rtt_distribution table: its RTT histogram), in rtt-cdf.png and in the
report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import wavelab
from wavelab import report
from wavelab.analysis import rtt_cdf
from wavelab.plot.run_plots import plot_all


@pytest.fixture(scope="module")
def demo() -> wavelab.Results:
    return wavelab.run(wavelab.demo_scenario())


def test_the_distribution_holds_every_sample(demo: wavelab.Results) -> None:
    dist = demo.rtt_distribution
    assert list(dist.columns) == ["flow", "rtt_low", "rtt_high", "count"]
    for f, row in demo.flows.iterrows():
        mine = dist[dist["flow"] == f]
        assert int(mine["count"].sum()) == int(row["rtt_samples"]) > 1000
        # buckets in order, each at most 1/64 of its lower edge wide
        assert (mine["rtt_low"].diff().dropna() > 0).all()
        assert ((mine["rtt_high"] - mine["rtt_low"]) <= mine["rtt_low"] / 64 + 1e-12).all()
        # nothing below the flow's smallest RTT
        assert mine["rtt_high"].iloc[0] > row["min_rtt"] >= mine["rtt_low"].iloc[0] - 1e-9


def test_the_cdf_agrees_with_the_flows_percentiles(demo: wavelab.Results) -> None:
    for f, row in demo.flows.iterrows():
        c = rtt_cdf(demo.rtt_distribution, int(f))
        assert c["cdf"].iloc[0] == 0.0 and c["cdf"].iloc[-1] == pytest.approx(1.0)
        assert (np.diff(c["cdf"]) > 0).all() and (np.diff(c["rtt"]) > 0).all()
        for q, level in (("rtt_p50", 0.5), ("rtt_p95", 0.95), ("rtt_p99", 0.99)):
            # the percentile (its bucket's midpoint) lies in the bucket
            # where the CDF first reaches its level
            i = int(np.argmax(c["cdf"].to_numpy() >= level - 1e-12))
            assert c["rtt"].iloc[i - 1] <= row[q] < c["rtt"].iloc[i], q
    # all flows together: the run's pooled samples
    both = rtt_cdf(demo.rtt_distribution)
    assert both["cdf"].iloc[-1] == pytest.approx(1.0)
    i = int(np.argmax(both["cdf"].to_numpy() >= 0.95))
    assert both["rtt"].iloc[i - 1] <= demo.run["rtt_p95"] < both["rtt"].iloc[i]


def test_rtt_cdf_png_and_the_report(demo: wavelab.Results, tmp_path: Path) -> None:
    files = plot_all(demo, tmp_path / "plots")
    assert (tmp_path / "plots" / "rtt-cdf.png") in files
    assert (tmp_path / "plots" / "rtt-cdf.png").stat().st_size > 10_000
    demo.to_parquet(tmp_path / "run")
    back = pd.read_parquet(tmp_path / "run" / "rtt_distribution.parquet")
    pd.testing.assert_frame_equal(back, demo.rtt_distribution)
    data = report.run_data(tmp_path / "run")
    for f, flow in enumerate(data["flows"]):
        c = rtt_cdf(demo.rtt_distribution, f)
        assert flow["rtt_cdf"][-1] == 1.0 and len(flow["rtt_cdf"]) == len(c)
        assert flow["rtt_cdf_ms"] == pytest.approx((c["rtt"] * 1e3).tolist(), abs=1e-3)


def test_no_samples_no_cdf() -> None:
    empty = pd.DataFrame({"flow": [], "rtt_low": [], "rtt_high": [], "count": []})
    assert rtt_cdf(empty).empty
