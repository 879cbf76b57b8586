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
        "notify_delay",
        "notified",
        "transfer_packets",
        "transfers_done",
        "transfer_time",
    ]
    row = h.iloc[0]
    assert (row["node"], row["from"], row["to"]) == ("mobile", "hsdpa", "wlan")
    assert (row["kind"], row["time"], row["flows_moved"]) == ("make-before-break", 10.0, 2)
    assert (row["notify_delay"], row["notified"]) == (0.006, 2)
    # what each sender was told, 6 ms after the switch
    n = res.notifications
    assert list(n["flow"]) == [0, 1]
    assert list(n["time"]) == [10.006, 10.006]
    assert list(n["kind"]) == ["handoff", "handoff"]
    assert list(n["old_rate"]) == [2e6, 2e6] and list(n["new_rate"]) == [54e6, 54e6]
    assert list(n["old_delay"]) == [0.05, 0.05] and list(n["new_delay"]) == [0.002, 0.002]
    assert list(n["flows"]) == [2, 2]
    # the faster new path reorders: duplicate ACKs and out-of-order segments
    assert (res.flows["out_of_order_segments"] > 0).all()
    # the table is written and read back
    res.to_parquet(tmp_path)
    assert (tmp_path / "handoffs.parquet").exists()
    assert (tmp_path / "notifications.parquet").exists()
    back = Results.read_parquet(tmp_path)
    assert back.handoffs.equals(h)
    assert back.notifications.equals(n)


def test_a_run_without_handoffs_writes_no_handoffs_file(tmp_path: Path, small_toml: str) -> None:
    res = wavelab.run(wavelab.from_toml(small_toml))
    assert res.handoffs.empty and res.notifications.empty
    res.to_parquet(tmp_path)
    assert not (tmp_path / "handoffs.parquet").exists()
    assert not (tmp_path / "notifications.parquet").exists()


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


def test_notification_samples_add_series_rows_at_the_notification() -> None:
    sc = builtin_scenario("mobiwac-handoff").with_changes(
        {"duration": "11s", "output.notification_samples": True, "flows[0].log_packets": True}
    )
    res = wavelab.run(sc)
    at = res.series[res.series["time"] == 10.006]
    assert list(at["flow"]) == [0, 1]
    log = res.packets
    notify = log[log["event"] == "notify"]
    assert list(notify["time"]) == [10.006, 10.006]
    assert list(notify["link"]) == [8, 8]  # the WLAN's forward direction
