"""Sweep files: expansion of grids, ranges, seeds and linked paths; errors
named before anything runs; the per-run table; the same results as single
runs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import wavelab
from conftest import TINY_SWEEP as SWEEP
from conftest import wavelab as wavelab_cli
from wavelab.sweep import SweepError, expand_range, from_sweep_dict, load_sweep, parse_path
from wavelab.sweep.plan import plan_sweep
from wavelab.sweep.runs_table import TIMINGS

BASE = {
    "name": "base",
    "duration": "3s",
    "links": [
        {"name": "access", "between": ["a", "r"], "rate": "100Mbit/s", "delay": "1ms"},
        {
            "name": "bottleneck",
            "between": ["r", "b"],
            "rate": "10Mbit/s",
            "delay": "10ms",
            "queue": "20pkt",
            "loss": {"model": "bernoulli", "p": 0.01},
        },
    ],
    "flows": [{"name": "f", "from": "a", "to": "b"}],
}


def sweep_of(table: dict[str, object], base: dict[str, object] | None = None) -> object:
    return from_sweep_dict({**(base or BASE), "sweep": table}, Path("s.toml"))


def error_of(table: dict[str, object], base: dict[str, object] | None = None) -> str:
    with pytest.raises(SweepError) as e:
        sweep_of(table, base)
    return str(e.value)


def test_grid_is_the_product_in_file_order_last_key_fastest() -> None:
    s = sweep_of({"flows[0].cc": ["reno", "cubic"], "seeds": 3})
    assert s.size == 6
    assert [s.params(i) for i in range(6)] == [
        {"flows[0].cc": c, "seed": k} for c in ("reno", "cubic") for k in (1, 2, 3)
    ]
    p = s.point(4)
    assert p.scenario.normalized["flows"][0]["cc"]["algorithm"] == "cubic"
    assert p.scenario.normalized["seed"] == 2


def test_ranges_with_units_counts_and_integers() -> None:
    assert expand_range("k", {"from": "20s", "to": "40s", "step": "5s"}) == [
        "20s",
        "25s",
        "30s",
        "35s",
        "40s",
    ]
    assert expand_range("k", {"from": "0.5s", "to": "1.1s", "step": "0.2s"}) == [
        "0.5s",
        "0.7s",
        "0.9s",
        "1.1s",
    ]
    assert expand_range("k", {"from": 1, "to": 7, "step": 3}) == [1, 4, 7]
    assert expand_range("k", {"from": 0.0, "to": 0.02, "count": 3}) == [0.0, 0.01, 0.02]
    assert expand_range("k", {"from": "2Mbit/s", "to": "8Mbit/s", "count": 4}) == [
        "2Mbit/s",
        "4Mbit/s",
        "6Mbit/s",
        "8Mbit/s",
    ]
    assert expand_range("k", {"from": "40s", "to": "30s", "step": "-5s"}) == ["40s", "35s", "30s"]


def test_linked_paths_vary_together_and_seeds_take_a_list() -> None:
    s = sweep_of(
        {
            "links[1].rate,links[1].delay": [["2Mbit/s", "30ms"], ["8Mbit/s", "240ms"]],
            "seeds": [7, 9],
        }
    )
    assert s.param_names == ["links[1].rate", "links[1].delay", "seed"]
    assert s.params(3) == {"links[1].rate": "8Mbit/s", "links[1].delay": "240ms", "seed": 9}


def test_values_may_be_tables_and_missing_tables_are_created() -> None:
    s = sweep_of(
        {
            "flows[0].cc": [{"algorithm": "cubic", "hystart": True}, "reno"],
            "flows[0].tcp.sack": [True, False],
        }
    )
    sc = s.point(1).scenario
    assert sc.normalized["flows"][0]["tcp"]["sack"] is False
    assert sc.normalized["flows"][0]["cc"]["algorithm"] == "cubic"


def test_unknown_parameters_are_named_before_anything_runs() -> None:
    assert error_of({"links[1].rat": ["8Mbit/s"]}) == (
        's.toml: sweep."links[1].rat": unknown parameter: links[1].rat: unknown field `rat`, '
        "expected one of `preset`, `name`, `between`, `rate`, `delay`, `queue`, `qdisc`, `loss`, "
        "`forward`, `reverse`, `schedule`, `outages`, `handovers`, `arq`, `outage_process`, `leo`"
    )
    msg = error_of({"flows[0].tcp.sak": [True]})
    assert 'sweep."flows[0].tcp.sak": unknown parameter' in msg and "`sak`" in msg
    msg = error_of({"links[5].rate": ["1Mbit/s"]})
    assert msg == (
        's.toml: sweep."links[5].rate": links[5].rate: links has 2 entries, no [5] '
        "(indices 0 to 1); the scenario must have the entry the sweep changes"
    )
    msg = error_of({"links[1].handovers[0].at": ["5s"]})
    assert "the scenario has no links[1].handovers, so there is no links[1].handovers[0]" in msg
    assert ": not a field path ('' is not a field name)" in error_of({"flows[0]..cc": ["reno"]})
    assert "unknown parameter" in error_of({"colour": ["red"]})


def test_empty_and_malformed_grids_are_refused() -> None:
    assert error_of({"flows[0].cc": []}) == (
        's.toml: sweep."flows[0].cc": the grid is empty; give at least one value'
    )
    assert error_of({}) == "s.toml: the [sweep] table is empty: nothing to vary"
    assert 'a single value "reno" is not a grid; write a list, e.g. ["reno"]' in error_of(
        {"flows[0].cc": "reno"}
    )
    assert "never gets from" in error_of({"duration": {"from": "1s", "to": "3s", "step": "-1s"}})
    assert "must have the same unit" in error_of(
        {"duration": {"from": "1s", "to": "3000ms", "step": "1s"}}
    )
    assert "either step or count" in error_of({"duration": {"from": "1s", "to": "3s"}})
    assert "seeds = 0 must be at least 1" in error_of({"seeds": 0})
    assert "is varied twice" in error_of({"seed": [1, 2], "seeds": 2})
    assert "not a list of 2 values" in error_of({"links[1].rate,links[1].delay": [["1Mbit/s"]]})
    with pytest.raises(SweepError, match="has no \\[sweep\\] table"):
        from_sweep_dict(BASE, Path("s.toml"))


def test_a_bad_value_is_named_with_its_key_and_position() -> None:
    msg = error_of({"links[1].rate": ["2Mbit/s", "8 Mbps/s"]})
    assert msg == (
        's.toml: sweep."links[1].rate" value 1 ("8 Mbps/s"): links[1].rate: "8 Mbps/s" is '
        'not a rate, write e.g. "8Mbit/s"'
    )


def test_a_point_that_is_invalid_only_in_combination_is_named() -> None:
    base = {
        **BASE,
        "links": [
            BASE["links"][0],  # type: ignore[index]
            {
                **BASE["links"][1],  # type: ignore[index]
                "handovers": [{"at": "1s", "outage": "0.5s", "rate": "2Mbit/s"}],
            },
        ],
    }
    s = sweep_of({"duration": ["3s", "2s"], "links[1].handovers[0].at": ["1s", "2.5s"]}, base)
    with pytest.raises(SweepError) as e:
        plan_sweep(s)  # type: ignore[arg-type]
    assert str(e.value).startswith(
        's.toml: point 3 (duration = "2s", links[1].handovers[0].at = "2.5s"): '
        "links[1].handovers[0].at:"
    )


def test_parse_path() -> None:
    assert parse_path("links[1].handovers[0].at") == ["links", 1, "handovers", 0, "at"]


def test_a_scenario_file_with_a_sweep_table_points_to_wavelab_sweep(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_text('duration = "1s"\nlinks = []\nflows = []\n[sweep]\nseeds = 2\n')
    with pytest.raises(wavelab.ScenarioFileError, match="it is a sweep file; run it with"):
        wavelab.load_scenario(p)


def test_the_shipped_sweep_expands_with_baselines() -> None:
    s = load_sweep("handover-grid")
    plan = plan_sweep(s)
    assert len(plan.points) == 108
    assert plan.baselines == 36  # 2 directions x 3 flow counts x 3 TCPs x 2 seeds


def test_sweep_writes_a_table_resumes_and_matches_single_runs(tmp_path: Path) -> None:
    f = tmp_path / "tiny.toml"
    f.write_text(SWEEP)
    out = tmp_path / "out"
    res = wavelab_cli("sweep", str(f), "--out", str(out), "--jobs", "2")
    assert res.returncode == 0, res.stderr
    assert "tiny: 4 points: 4 runs, 0 already in" in res.stderr
    assert "tiny: 4/4 runs (100%)" in res.stderr and "runs/s" in res.stderr
    assert "ETA" in res.stderr
    table = pd.read_parquet(out / "runs.parquet")
    assert list(table["flows[0].cc"]) == ["reno", "reno", "cubic", "cubic"]
    assert list(table["seed"]) == [1, 2, 1, 2]
    assert set(table["status"]) == {"ok"}
    for col in ["goodput_mbps", "retransmissions", "rto_expiries", "goodput_mbps:f", "run"]:
        assert col in table, col
    assert (table["retransmissions"] > 0).all()
    assert pd.read_csv(out / "runs.csv")["run"].tolist() == table["run"].tolist()
    assert (out / "sweep.toml").read_text() == SWEEP

    # every run equals the same point run alone
    for row in table.itertuples():
        sc = load_sweep(f).point(int(row.point)).scenario
        alone = wavelab.run(sc)
        stored = wavelab.Results.read_parquet(out / "runs" / str(row.run))
        pd.testing.assert_frame_equal(alone.series, stored.series)
        pd.testing.assert_frame_equal(alone.flows, stored.flows)
        assert alone.flows["retransmissions"][0] == row.retransmissions

    again = wavelab_cli("sweep", str(f), "--out", str(out), "--jobs", "2")
    assert again.returncode == 0, again.stderr
    assert "4 runs, 4 already in" in again.stderr and "0 to run" in again.stderr
    assert "0 runs ran, 4 reused" in again.stderr
    pd.testing.assert_frame_equal(
        pd.read_parquet(out / "runs.parquet").drop(columns=list(TIMINGS)),
        table.drop(columns=list(TIMINGS)),
    )


def test_sweep_cli_errors_are_one_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(SWEEP.replace('"flows[0].cc"', '"flows[0].ccc"'))
    res = wavelab_cli("sweep", str(f), "--out", str(tmp_path / "o"))
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert res.stderr.startswith(f'error: {f}: sweep."flows[0].ccc": unknown parameter')
    assert not (tmp_path / "o").exists(), "nothing ran, nothing was written"
    empty = tmp_path / "empty.toml"
    empty.write_text(SWEEP.replace('["reno", "cubic"]', "[]"))
    res = wavelab_cli("sweep", str(empty), "--out", str(tmp_path / "o"))
    assert res.returncode == 2
    assert (
        res.stderr
        == f'error: {empty}: sweep."flows[0].cc": the grid is empty; give at least one value\n'
    )
    res = wavelab_cli("sweep", str(f))
    assert res.returncode == 2 and "error:" in res.stderr
    listing = wavelab_cli("sweep", str(tmp_path / "tiny.toml"))
    assert listing.returncode == 2 and "no such file" in listing.stderr


def test_sweep_list_prints_points_without_running(tmp_path: Path) -> None:
    f = tmp_path / "tiny.toml"
    f.write_text(SWEEP)
    res = wavelab_cli("sweep", str(f), "--list")
    assert res.returncode == 0, res.stderr
    assert "4 points, 4 distinct runs" in res.stdout
    assert res.stdout.count("cubic") == 2


def test_a_point_that_is_another_points_baseline_is_one_run_kept_as_a_point() -> None:
    handover = [{"at": "1s", "outage": "0.5s", "rate": "10Mbit/s"}]
    s = sweep_of({"links[1].handovers": [handover, []]})
    plan = plan_sweep(s)  # type: ignore[arg-type]
    with_handover, without = plan.points
    assert with_handover.baseline == without.key and without.baseline is None
    assert plan.runs == {with_handover.key: (0, False), without.key: (1, False)}
    assert plan.baselines == 0
