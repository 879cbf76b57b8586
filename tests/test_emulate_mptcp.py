"""Multipath TCP on real packets: Linux's MPTCP through the emulator's two
access links (the multi-homed end gets an address per link, announced or
used by the kernel's path manager; the wire thread routes each subflow over
its link), the subflows' TCP_INFO in the flows table and the subflows table.

Needs root, /dev/net/tun and an MPTCP kernel (``CONFIG_MPTCP``), as
``test_emulate.py``; two emulations of 8 and 12 s. Asserted only what load
cannot change: which subflow carries data, and a connection that moves more
than one access link could.
"""

from __future__ import annotations

import pytest

from test_emulate import machine  # noqa: F401  (the fixture)
from wavelab.emulator import emulate
from wavelab.scenario import builtin_scenario

pytestmark = pytest.mark.realtime

ONE_LINK_PAYLOAD = 10e6 * 1448 / 1500
"""What one 10 Mbit/s access link carries of payload (bit/s)."""


def test_two_subflows_share_two_equal_links(machine: None) -> None:  # noqa: F811
    sc = builtin_scenario(
        "mptcp-two-links",
        emulation=True,
        changes={"duration": "8s", "flows[0].cc": "cubic"},
    )
    res = emulate(sc)
    assert res.complete and res.run["emulation"]["errors"] == []
    f = res.flows.set_index("name")
    assert list(f.index) == ["mp/wlan", "mp/cell"]
    sub = res.subflows.set_index("link")
    assert list(sub["connection"]) == ["mp", "mp"] and not sub["backup"].any()
    # both subflows carry a real share of the data
    mapped = sub["mapped"].astype(float)
    assert (mapped > 0.25 * mapped.sum()).all(), mapped
    # each link's packets cross only that link: both are counted at the wire
    assert (f["packets_received"] > 1000).all()
    # together more than one access link can carry
    assert float(sub["conn_goodput"].iloc[0]) > 1.2 * ONE_LINK_PAYLOAD


def test_the_backup_subflow_waits_for_the_primary_to_break(machine: None) -> None:  # noqa: F811
    sc = builtin_scenario(
        "mptcp-backup-handoff",
        emulation=True,
        changes={"duration": "12s", "flows[0].cc": "cubic"},
    )
    res = emulate(sc)
    assert res.complete and res.run["emulation"]["errors"] == []
    sub = res.subflows.set_index("link")
    assert bool(sub.loc["cell", "backup"]) and not bool(sub.loc["wlan", "backup"])
    s = res.series
    cell = s[s["flow"] == int(sub.loc["cell", "flow"])].set_index("time")["bytes_sent"]
    wlan = s[s["flow"] == int(sub.loc["wlan", "flow"])].set_index("time")["bytes_sent"]
    # nothing on the backup while the WLAN works (the handoff breaks it at 8 s)
    assert float(cell.asof(7.9)) == 0.0
    assert float(wlan.asof(7.9)) > 0.0
    # then the backup carries the connection
    assert float(cell.iloc[-1]) > 100_000
