"""Multipath TCP through the Python layer: the shipped scenarios by name,
the subflows table and summary columns, and the scenario errors a user
meets (the protocol itself is tested in crates/sim/tests/mptcp.rs)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import wavelab
from conftest import wavelab as cli
from wavelab import ScenarioFileError

TWO_LINKS = """
duration = "3s"
[[links]]
name = "a"
between = ["s", "m"]
rate = "10Mbit/s"
delay = "10ms"
[[links]]
name = "b"
between = ["s", "m"]
rate = "10Mbit/s"
delay = "10ms"
[[flows]]
name = "mp"
from = "s"
to = "m"
mptcp = {}
"""


def test_each_subflow_is_a_flow_row_and_a_subflows_row() -> None:
    res = wavelab.run(wavelab.from_toml(TWO_LINKS))
    assert list(res.flows["name"]) == ["mp/a", "mp/b"]
    sub = res.subflows
    assert list(sub["connection"]) == ["mp", "mp"]
    assert list(sub["link"]) == ["a", "b"]
    assert list(sub["flow"]) == [0, 1]
    assert not sub["backup"].any()
    # the connection delivered what both subflows carried, in order
    assert sub["conn_delivered"].iloc[0] > 0
    assert sub["mapped"].sum() >= sub["conn_delivered"].iloc[0]
    s = res.summary()
    assert list(s["connection"]) == ["mp", "mp"]
    assert s["conn_goodput_mbps"].iloc[0] > s["goodput_mbps"].iloc[0]


def test_a_single_path_run_has_an_empty_subflows_table() -> None:
    text = TWO_LINKS.replace("mptcp = {}\n", "")
    res = wavelab.run(wavelab.from_toml(text))
    assert res.subflows.empty
    assert "connection" not in res.summary().columns


@pytest.mark.parametrize("name", ["mptcp-two-links", "mptcp-backup-handoff"])
def test_the_shipped_scenarios_run_by_name(tmp_path: Path, name: str) -> None:
    res = cli("run", name, "--set", "duration=10s", "--no-plots", "--out", "o", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    sub = pd.read_parquet(tmp_path / "o" / "subflows.parquet")
    assert len(sub) == 2
    summary = pd.read_csv(tmp_path / "o" / "summary.csv")
    assert set(summary["connection"]) == {"mp"}
    if name == "mptcp-backup-handoff":
        assert list(sub["backup"]) == [False, True]
        # the WLAN broke at 8 s: the backup took the data reinjected from it
        assert sub["reinjected"].iloc[1] > 0


def test_set_changes_the_scheduler(tmp_path: Path) -> None:
    res = cli(
        "run",
        "mptcp-two-links",
        "--set",
        "duration=2s",
        "--set",
        "flows[0].mptcp.scheduler=round-robin",
        "--no-plots",
        "--out",
        "o",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("mptcp = {}", 'mptcp = { scheduler = "fastest" }'),
            "flows[0].mptcp.scheduler: unknown variant `fastest`, expected one of "
            "`lowest-rtt`, `round-robin`, `redundant`",
        ),
        (
            ("mptcp = {}", 'mptcp = { coupled = "olia2" }'),
            "flows[0].mptcp.coupled: unknown variant `olia2`",
        ),
        (
            ("mptcp = {}", 'mptcp = { coupled = "lia" }\ncc = "cubic"'),
            'flows[0].mptcp.coupled: "lia" couples Reno-style windows (RFC 6356) and '
            'flows[0].cc is "cubic"',
        ),
        (
            ('between = ["s", "m"]\nrate = "10Mbit/s"\ndelay = "10ms"\n[[flows]]', ""),
            "",
        ),
        (
            ("mptcp = {}", 'mptcp = {}\ntransport = "udp"\nudp = { pattern = "voice" }'),
            "flows[0].mptcp: Multipath TCP runs over TCP",
        ),
        (
            ("mptcp = {}", 'mptcp = { failover = "notice" }'),
            'flows[0].mptcp.failover: "notice" acts on a handoff\'s cross-layer notice',
        ),
    ],
)
def test_bad_mptcp_fields_name_the_field(change: tuple[str, str], message: str) -> None:
    if not message:
        # the second link leads elsewhere: an end with two links, one of
        # which does not reach the other end
        text = TWO_LINKS.replace(
            'name = "b"\nbetween = ["s", "m"]', 'name = "b"\nbetween = ["m", "x"]'
        )
        message = 'flows[0].mptcp: no route between "s" and "m" over access link "b" of "m"'
    else:
        text = TWO_LINKS.replace(*change)
    with pytest.raises(ScenarioFileError) as e:
        wavelab.from_toml(text)
    assert message in str(e.value)


def test_mptcp_on_a_node_with_one_access_link_names_the_field_and_the_fix() -> None:
    one = TWO_LINKS.replace(
        '[[links]]\nname = "b"\nbetween = ["s", "m"]\nrate = "10Mbit/s"\ndelay = "10ms"\n', ""
    )
    with pytest.raises(ScenarioFileError) as e:
        wavelab.from_toml(one)
    assert (
        'flows[0].mptcp: neither "s" nor "m" has more than one access link: MPTCP needs a '
        'multi-homed end (connect "m" to a second link) or no `mptcp`'
    ) in str(e.value)
