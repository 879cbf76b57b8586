"""Delay, loss and utilisation metrics, and seeds aggregated with their
confidence intervals (issue 28 item 1)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import wavelab
from conftest import LOSSY
from conftest import wavelab as cli
from wavelab.aggregate import aggregate, t975
from wavelab.metrics import flow_metrics

# one bulk flow through a 10 Mbit/s bottleneck with a 20-packet buffer
# behind a fast access link (no random loss): the queue fills, drops, drains
DUMBBELL = LOSSY.replace(
    'queue = "40pkt"\nloss = { model = "bernoulli", p = 0.01 }', 'queue = "20pkt"'
)
assert DUMBBELL != LOSSY


@pytest.fixture(scope="module")
def run() -> wavelab.Results:
    return wavelab.run(wavelab.from_toml(DUMBBELL))


def test_rtt_percentiles_come_from_every_sample_and_are_physical(run: wavelab.Results) -> None:
    f = run.flows.iloc[0]
    # every sample counted: an ACK's each, thousands in a 6 s bulk transfer
    assert f["rtt_samples"] > 1000
    base = f["min_rtt"]
    assert base == pytest.approx(2 * (0.001 + 0.020), abs=0.003)
    assert base <= f["rtt_p50"] <= f["rtt_p95"] <= f["rtt_p99"]
    assert base < f["rtt_mean"] < f["rtt_p99"]
    # the queue adds at most 20 packets of 1.2 ms each (and the delayed ACK
    # timer is the other term): p99 within base + 21 * 1.2 ms + 200 ms
    assert f["rtt_p99"] <= base + 21 * 0.0012 + 0.2
    # a lone flow: the run's pooled figures are the flow's
    for q in ("rtt_mean", "rtt_p50", "rtt_p95", "rtt_p99"):
        assert run.run[q] == pytest.approx(f[q], rel=1e-12)
    assert run.run["rtt_samples"] == f["rtt_samples"]


def test_the_series_rtts_lie_within_the_sampled_distribution(run: wavelab.Results) -> None:
    # the sampled series holds some of the same samples: their median is
    # near the histogram's (within 10 %)
    f = run.flows.iloc[0]
    sampled = run.series["rtt"].dropna()
    assert len(sampled) > 50
    assert float(np.median(sampled)) == pytest.approx(f["rtt_p50"], rel=0.1)


def test_queueing_delay_loss_and_utilisation_at_the_bottleneck(run: wavelab.Results) -> None:
    links = run.links.set_index(["link", "direction"])
    b = links.loc[("bottleneck", "forward")]
    tx = 1500 * 8 / 10e6  # one full packet at 10 Mbit/s
    # a packet waits for at most the 20 ahead of it (and the one in service)
    assert 0 < b["queue_delay_mean"] < b["queue_delay_p95"] <= b["queue_delay_p99"]
    assert b["queue_delay_p99"] <= 21 * tx * 1.01
    # the fast link queues only the sender's back-to-back packets (two or
    # three at 0.12 ms each), a tenth of the bottleneck's delay at most
    access = links.loc[("access", "forward"), "queue_delay_p99"]
    assert access < 4 * 1500 * 8 / 100e6 and access < b["queue_delay_p99"] / 10
    m = flow_metrics(run.flows, run.links, run.run, run.scenario.normalized)
    assert m["bottleneck"] == "bottleneck:forward"
    assert m["queue_delay_mean_ms"] == pytest.approx(b["queue_delay_mean"] * 1e3)
    assert m["queue_delay_p95_ms"] == pytest.approx(b["queue_delay_p95"] * 1e3)
    drops = b["dropped_queue"] + b["dropped_random"] + b["dropped_outage"]
    assert drops > 0 and m["loss_rate"] == pytest.approx(drops / b["arrived"])
    # a bulk flow keeps the link nearly busy after slow start; never above 1
    assert 0.85 < m["utilisation"] <= 1.0
    f = run.flows.iloc[0]
    assert m["retransmission_rate"] == pytest.approx(f["retransmissions"] / f["segments_sent"])
    assert m["rtt_p95_ms"] == pytest.approx(f["rtt_p95"] * 1e3)
    assert m["rtt_p95_ms:bulk"] == m["rtt_p95_ms"]


def test_utilisation_is_not_made_up_for_a_link_whose_rate_changes() -> None:
    varying = DUMBBELL.replace(
        'queue = "20pkt"', 'queue = "20pkt"\nschedule = [{ at = "4s", rate = "5Mbit/s" }]'
    )
    r = wavelab.run(wavelab.from_toml(varying))
    m = flow_metrics(r.flows, r.links, r.run, r.scenario.normalized)
    assert m["bottleneck"] == "bottleneck:forward" and math.isnan(m["utilisation"])
    assert m["queue_delay_p95_ms"] > 0


def test_t_quantiles() -> None:
    assert t975(1) == 12.706 and t975(30) == 2.042 and t975(120) == 1.980
    # between the table's rows, against the exact quantiles (2.0301, 1.9623)
    assert t975(35) == pytest.approx(2.0301, abs=5e-4)
    assert t975(1000) == pytest.approx(1.9623, abs=5e-4)
    assert math.isnan(t975(0))


def test_seeds_are_aggregated_with_a_95_percent_interval(tmp_path: Path) -> None:
    sweep = DUMBBELL.replace('duration = "6s"', 'duration = "3s"').replace(
        'queue = "20pkt"', 'queue = "20pkt"\nloss = { model = "bernoulli", p = 0.01 }'
    )
    sweep += '\n[sweep]\n"flows[0].cc" = ["newreno", "cubic"]\nseeds = 3\n'
    (tmp_path / "s.toml").write_text(sweep)
    res = cli("sweep", "s.toml", "--out", "out", "--quiet", "--jobs", "2", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    runs = pd.read_parquet(tmp_path / "out" / "runs.parquet")
    seeds = pd.read_parquet(tmp_path / "out" / "seeds.parquet")
    assert (tmp_path / "out" / "seeds.csv").exists()
    assert list(seeds.columns) == [
        "flows[0].cc", "metric", "n", "mean", "std", "ci95_low", "ci95_high"
    ]  # fmt: skip
    for cc in ("newreno", "cubic"):
        mine = runs[runs["flows[0].cc"] == cc]
        assert len(mine) == 3 and mine["seed"].tolist() == [1, 2, 3]
        for metric in ("goodput_mbps", "rtt_p95_ms", "queue_delay_p95_ms", "loss_rate"):
            row = seeds[(seeds["flows[0].cc"] == cc) & (seeds["metric"] == metric)].iloc[0]
            x = mine[metric].to_numpy(dtype=float)
            assert row["n"] == 3
            assert row["mean"] == pytest.approx(x.mean())
            assert row["std"] == pytest.approx(x.std(ddof=1))
            half = 4.303 * x.std(ddof=1) / math.sqrt(3)
            assert row["ci95_high"] - row["mean"] == pytest.approx(half)
            assert row["mean"] - row["ci95_low"] == pytest.approx(half)
        # the seeds differ, so the intervals have a width
        gp = seeds[(seeds["flows[0].cc"] == cc) & (seeds["metric"] == "goodput_mbps")].iloc[0]
        assert gp["ci95_high"] > gp["ci95_low"]


def test_unfinished_runs_are_left_out_of_the_aggregate() -> None:
    table = pd.DataFrame(
        {
            "seed": [1, 2, 3, 4],
            "status": ["ok", "ok", "failed", "pending"],
            "goodput_mbps": [1.0, 3.0, np.nan, np.nan],
        }
    )
    out = aggregate(table, ["seed"])
    assert out.to_dict("records") == [
        {
            "metric": "goodput_mbps",
            "n": 2,
            "mean": 2.0,
            "std": pytest.approx(math.sqrt(2)),
            "ci95_low": pytest.approx(2.0 - 12.706 * math.sqrt(2) / math.sqrt(2)),
            "ci95_high": pytest.approx(2.0 + 12.706),
        }
    ]
