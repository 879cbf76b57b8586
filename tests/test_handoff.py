"""Handoffs of multi-homed nodes through the Python API and the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

import wavelab
from wavelab import ScenarioFileError
from wavelab.results import Results
from wavelab.scenario import builtin_scenario


def test_the_shipped_handoff_scenario_moves_both_flows(tmp_path: Path) -> None:
    sc = builtin_scenario("mobiwac-handoff").with_changes({"duration": "12s"})
    res = wavelab.run(sc)
    h = res.handoffs
    assert list(h.columns) == [
        "node",
        "from",
        "to",
        "kind",
        "time",
        "disconnection",
        "held",
        "flows_moved",
    ]
    row = h.iloc[0]
    assert (row["node"], row["from"], row["to"]) == ("mobile", "hsdpa", "wlan")
    assert (row["kind"], row["time"], row["flows_moved"]) == ("make-before-break", 10.0, 2)
    # the faster new path reorders: duplicate ACKs and out-of-order segments
    assert (res.flows["out_of_order_segments"] > 0).all()
    # the table is written and read back
    res.to_parquet(tmp_path)
    assert (tmp_path / "handoffs.parquet").exists()
    back = Results.read_parquet(tmp_path)
    assert back.handoffs.equals(h)


def test_a_run_without_handoffs_writes_no_handoffs_file(tmp_path: Path, small_toml: str) -> None:
    res = wavelab.run(wavelab.from_toml(small_toml))
    assert res.handoffs.empty
    res.to_parquet(tmp_path)
    assert not (tmp_path / "handoffs.parquet").exists()


def test_a_handoff_from_the_wrong_link_names_the_field() -> None:
    sc = builtin_scenario("mobiwac-handoff")
    with pytest.raises(
        ScenarioFileError,
        match=r"handoffs\[0\]\.from: .*\"bs1-wire\".* does not connect \"mobile\"",
    ):
        sc.with_changes({"handoffs[0].from": "bs1-wire"})
    with pytest.raises(
        ScenarioFileError, match=r"handoffs\[0\]\.disconnection: only a break-before-make"
    ):
        sc.with_changes({"handoffs[0].disconnection": "1s"})
