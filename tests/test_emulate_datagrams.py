"""UDP and ping flows on real packets: real UDP sockets in the namespaces
send the simulator's datagrams (the same sizes at the same instants), the
wire thread counts every flow's data packets as a simulation counts them
at the network (sent, received, lost, one-way delay, jitter, late), and a
ping's answers give its round-trip times; TCP flows get the same network
statistics.

Needs root and /dev/net/tun, as ``test_emulate.py``; three emulations of
3-4 s. Only what load cannot change is asserted: counts, and delays that
cannot be shorter than the path (a busy machine makes them longer).
"""

from __future__ import annotations

import numpy as np
import pytest

from test_emulate import machine, run  # noqa: F401  (the fixture)
from wavelab.emulator.compare import compare, simulation_of
from wavelab.runner import run as simulate
from wavelab.scenario import from_toml

pytestmark = pytest.mark.realtime

HISTOGRAM_ERROR = 0.008
"""How far below a sample a percentile of the delay histograms can be
(crates/model/src/histogram.rs: 64 buckets per power of two)."""

PATH = """
name = "datagrams"
duration = "{duration}"
[[links]]
name = "path"
between = ["a", "b"]
rate = "10Mbit/s"
delay = "20ms"
queue = "200pkt"
{link}
"""

VOICE_AND_PING = """
[[flows]]
name = "voice"
from = "a"
to = "b"
transport = "udp"
udp = {{ pattern = "voice", playout_deadline = "{deadline}" }}
[[flows]]
name = "ping"
from = "a"
to = "b"
transport = "ping"
ping = {{ interval = "100ms", size = "56B" }}
start = "500ms"
"""


def test_voice_and_ping_cross_an_idle_path_whole(machine: None) -> None:  # noqa: F811
    toml = PATH.format(duration="3s", link="") + VOICE_AND_PING.format(deadline="10ms")
    res = run(toml)
    f = res.flows.set_index("name")
    voice, ping = f.loc["voice"], f.loc["ping"]
    assert voice["algorithm"] == "udp-voice" and ping["algorithm"] == "ping"
    # 50 datagrams a second for 3 s; nothing on an idle path is lost
    assert 140 <= voice["packets_sent"] <= 151
    assert voice["packets_lost"] == 0
    # (a datagram written in the last instants may still be on its way)
    assert voice["packets_received"] >= voice["packets_sent"] - 2
    # 160 bytes of payload each, 188 on the wire
    assert voice["wire_bytes_sent"] == 188 * voice["packets_sent"]
    assert voice["bytes_delivered"] == 160 * voice["packets_received"]
    # the one-way delay is at least the path's: 20 ms and 188 bytes at 10
    # Mbit/s (a percentile is within 0.8 % of a sample: the histogram's
    # 64 buckets per power of two)
    floor = (0.020 + 188 * 8 / 10e6) * (1 - HISTOGRAM_ERROR)
    assert voice["owd_p50"] >= floor
    # every packet arrives past the 10 ms playout deadline
    assert voice["packets_late"] == voice["packets_received"]
    # the ping: an answer per request, each at least two path delays
    assert ping["packets_lost"] == 0
    assert ping["rtt_samples"] >= ping["packets_sent"] - 2
    assert ping["min_rtt"] >= 2 * (0.020 + 84 * 8 / 10e6) - 1e-9
    assert ping["rtt_p50"] >= ping["min_rtt"] * (1 - HISTOGRAM_ERROR)


def test_link_loss_takes_its_share_of_the_datagrams(machine: None) -> None:  # noqa: F811
    link = 'forward = { loss = { model = "bernoulli", p = 0.2 } }'
    toml = PATH.format(duration="4s", link=link) + VOICE_AND_PING.format(deadline="1s")
    res = run(toml)
    voice = res.flows.set_index("name").loc["voice"]
    n, lost = int(voice["packets_sent"]), int(voice["packets_lost"])
    # Bernoulli(0.2) over ~200 datagrams: within four standard deviations
    sd = np.sqrt(n * 0.2 * 0.8)
    assert abs(lost - 0.2 * n) <= 4 * sd, (lost, n)
    assert voice["packets_received"] + lost <= n
    # none late past 1 s on a 20 ms path
    assert voice["packets_late"] == 0


def test_a_tcp_flow_gets_network_statistics_and_compare_shows_them(machine: None) -> None:  # noqa: F811
    toml = (
        PATH.format(duration="3s", link="")
        + VOICE_AND_PING.format(deadline="50ms")
        + """
[[flows]]
name = "bulk"
from = "a"
to = "b"
cc = "cubic"
start = "1s"
"""
    )
    sc = from_toml(toml, emulation=True)
    emu = run(toml)
    bulk = emu.flows.set_index("name").loc["bulk"]
    # every data segment the kernel sent was counted at the wire; what was
    # neither delivered nor dropped was still in flight at the end
    assert bulk["packets_sent"] > 500
    assert bulk["packets_received"] + bulk["packets_lost"] <= bulk["packets_sent"]
    assert bulk["owd_p50"] >= 0.020 * (1 - HISTOGRAM_ERROR)
    table = compare(simulate(simulation_of(sc)), emu).table.set_index(["flow", "figure"])
    for flow in ("voice", "ping", "bulk"):
        row = table.loc[(flow, "owd_p50_ms")]
        least = 20 * (1 - HISTOGRAM_ERROR)
        assert row["simulation"] >= least and row["emulation"] >= least, row
    # a UDP flow has no TCP figures to compare
    assert ("voice", "retransmissions") not in table.index
