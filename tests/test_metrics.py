"""Delay, loss and utilisation metrics, and seeds aggregated with their
confidence intervals."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import wavelab
from conftest import LOSSY, ROOT
from conftest import wavelab as cli
from wavelab.analysis.metrics import flow_metrics
from wavelab.analysis.seeds import aggregate, t975

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


def test_utilisation_follows_a_rate_schedule() -> None:
    varying = DUMBBELL.replace(
        'queue = "20pkt"', 'queue = "20pkt"\nschedule = [{ at = "4s", rate = "5Mbit/s" }]'
    )
    r = wavelab.run(wavelab.from_toml(varying))
    m = flow_metrics(r.flows, r.links, r.run, r.scenario.normalized)
    assert m["bottleneck"] == "bottleneck:forward" and m["queue_delay_p95_ms"] > 0
    end = float(r.run["simulated"])
    b = r.links.set_index(["link", "direction"]).loc[("bottleneck", "forward")]
    capacity = 10e6 * 4 + 5e6 * (end - 4)  # bits the link could carry
    assert m["capacity_mb"] == pytest.approx(capacity / 8e6, rel=1e-12)
    assert m["up_s"] == pytest.approx(end)
    assert m["utilisation"] == pytest.approx(b["delivered_bytes"] * 8 / capacity, rel=1e-12)
    # a bulk flow fills the link before and after the change: the old
    # definition (the final rate times the run) would give far more than 1
    assert 0.85 < m["utilisation"] <= 1.0
    assert b["delivered_bytes"] * 8 / (5e6 * end) > 1.2


def test_utilisation_counts_only_the_time_the_link_was_up() -> None:
    r = wavelab.run(wavelab.load_scenario(ROOT / "scenarios" / "dcnet2016-handover.toml"))
    m = flow_metrics(r.flows, r.links, r.run, r.scenario.normalized, r.handovers, r.handoffs)
    end = float(r.run["simulated"])
    assert m["bottleneck"] == "bottleneck:forward"
    # 2 Mbit/s until the handover at 30 s, down 2 s, then 8 Mbit/s
    assert m["up_s"] == pytest.approx(end - 2.0)
    assert m["capacity_mb"] == pytest.approx((2e6 * 30 + 8e6 * (end - 32)) / 8e6)
    assert 0 < m["utilisation"] <= 1.0


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
        "flows[0].cc", "metric", "unit", "n", "mean", "std", "ci95_low", "ci95_high"
    ]  # fmt: skip
    units = dict(zip(seeds["metric"], seeds["unit"], strict=False))
    assert units["rtt_p95_ms"] == "ms" and units["goodput_mbps"] == "Mbit/s"
    assert units["loss_rate"] == "1" and units["retransmissions"] == ""
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
            "unit": "Mbit/s",
            "n": 2,
            "mean": 2.0,
            "std": pytest.approx(math.sqrt(2)),
            "ci95_low": pytest.approx(2.0 - 12.706 * math.sqrt(2) / math.sqrt(2)),
            "ci95_high": pytest.approx(2.0 + 12.706),
        }
    ]


def test_parameters_are_typed_and_units_are_in_the_parquet_fields(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    sweep = DUMBBELL.replace('duration = "6s"', 'duration = "2s"')
    sweep += '\n[sweep]\n"links[1].rate" = ["5Mbit/s", "10Mbit/s"]\nduration = ["1500ms", "2s"]\n'
    (tmp_path / "s.toml").write_text(sweep)
    res = cli("sweep", "s.toml", "--out", "out", "--quiet", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    path = tmp_path / "out" / "runs.parquet"
    runs = pd.read_parquet(path)
    # the text as written, and beside it the number in the base unit
    assert runs["links[1].rate"].tolist() == ["5Mbit/s", "5Mbit/s", "10Mbit/s", "10Mbit/s"]
    assert runs["links[1].rate_bps"].tolist() == [5e6, 5e6, 10e6, 10e6]
    assert runs["duration_s"].tolist() == [1.5, 2.0, 1.5, 2.0]
    cols = list(runs.columns)
    assert cols.index("links[1].rate_bps") == cols.index("links[1].rate") + 1
    schema = pq.read_schema(path)

    def unit_of(name: str) -> str | None:
        meta = schema.field(name).metadata
        return None if meta is None else meta[b"unit"].decode()

    assert unit_of("links[1].rate_bps") == "bit/s" and unit_of("duration_s") == "s"
    assert unit_of("rtt_p95_ms") == "ms" and unit_of("goodput_mbps") == "Mbit/s"
    assert unit_of("utilisation") == "1" and unit_of("retransmissions") is None
    # the faster link carries more in the same time: the typed column sorts as numbers
    fast = runs.sort_values("links[1].rate_bps")["goodput_mbps"].to_numpy()
    assert fast[-1] > fast[0]


@pytest.mark.parametrize("name", ["dcnet2016-handover", "mobiwac-handoff", "wlan-arq", "demo"])
def test_the_metrics_from_native_columns_are_those_from_frames(name: str) -> None:
    # a sweep's worker computes a run's metrics from the native columns (no
    # DataFrames); they must be the figures the DataFrame path gives, name
    # for name, type for type: a handover with an outage, a break-before-make
    # handoff with a transfer, a wireless hop, two flows through an outage
    from wavelab import _native
    from wavelab.analysis.metrics import handoff_metrics
    from wavelab.results import table_columns, table_to_frame
    from wavelab.scenario import builtin_scenario

    sc = builtin_scenario(name)
    sim = _native.Simulation(sc.to_json())
    sim.run_until(sim.end)
    native, run = sim.results(), dict(sim.run_stats())

    def metrics(table: object) -> dict[str, object]:
        t = {k: table(native[k]) for k in ("flows", "links", "handovers", "handoffs")}  # type: ignore[operator]
        return {
            **flow_metrics(
                t["flows"], t["links"], run, sc.normalized, t["handovers"], t["handoffs"]
            ),
            **handoff_metrics(t["handoffs"]),
        }

    frames, columns = metrics(table_to_frame), metrics(table_columns)
    assert list(columns) == list(frames)
    assert "utilisation" in frames and "rtt_p95_ms" in frames
    for k, v in frames.items():
        assert type(columns[k]) is type(v), k
        same = columns[k] == v or (
            isinstance(v, float) and math.isnan(v) and math.isnan(columns[k])
        )  # type: ignore[arg-type]
        assert same, (k, v, columns[k])


def test_counters_the_kernel_does_not_keep_are_missing_not_an_error(run: wavelab.Results) -> None:
    """An emulated flow's table has missing counters (the kernel keeps no
    fast-retransmission count): its summary names them NaN, per flow."""
    flows = run.flows.copy()
    flows["fast_retransmits"] = pd.array([pd.NA] * len(flows), dtype="Int64")
    m = flow_metrics(flows)
    name = str(flows["name"].iloc[0])
    assert math.isnan(m[f"fast_retransmits:{name}"])
    assert m[f"retransmissions:{name}"] == int(flows["retransmissions"].iloc[0])


def test_an_mptcp_connection_is_one_flow_for_jain() -> None:
    from wavelab.analysis.metrics import connection_goodputs

    normalized = {
        "flows": [
            {"name": "mp", "from": "s", "to": "m", "count": 1, "mptcp": {"paths": "full-mesh"}},
            {"name": "tcp", "from": "s", "to": "m", "count": 1},
        ],
        "links": [
            {"between": ["s", "r"]},
            {"between": ["r", "m"]},
            {"between": ["r", "m"]},
        ],
    }
    # rows: mp's first subflow, tcp, mp's second subflow
    got = connection_goodputs([3.0, 5.0, 2.0], [True, True, True], normalized)
    assert sorted(got) == [5.0, 5.0]
    # a row whose goodput is unknown stays unknown; a UDP row is left out
    got = connection_goodputs([3.0, float("nan"), 2.0], [True, True, False], normalized)
    assert got[0] == 3.0 and math.isnan(got[1]) and len(got) == 2
