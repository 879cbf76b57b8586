"""The emulator's queue disciplines and ECN on real packets: CoDel marks the
kernel's ECN-capable packets CE in their real IP headers (the checksum kept
valid) and drops the packets that are not, and ``tcp.ecn`` makes the
sender's kernel request ECN (``net.ipv4.tcp_ecn = 1``), so Linux's own
response to the marks is measured.

Needs root and /dev/net/tun, as ``test_emulate.py``; two emulations of 4 s.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from test_emulate import machine, one_link, run  # noqa: F401  (the fixture)

pytestmark = pytest.mark.realtime

SENDER = bytes([10, 0, 0, 1])
CWR, ECE = 0x80, 0x40


def codel_flow(ecn: bool) -> str:
    """A CUBIC flow with or without ECN through CoDel (ECN marking on) on a
    10 Mbit/s, 20 ms link with a 1,000-packet buffer (bufferbloat-codel's)."""
    return one_link(
        "10Mbit/s",
        "20ms",
        duration="4s",
        flow=f"tcp = {{ sack = true, ecn = {str(ecn).lower()} }}",
        link='qdisc = "codel"',
        queue="1000pkt",
    )


def ip_packets(path: Path) -> Iterator[bytes]:
    """The IPv4 packets of a pcap file (LINKTYPE_RAW)."""
    data = path.read_bytes()
    i = 24
    while i + 16 <= len(data):
        incl = struct.unpack("<IIII", data[i : i + 16])[2]
        yield data[i + 16 : i + 16 + incl]
        i += 16 + incl


def checksum_ok(ip: bytes) -> bool:
    header = ip[: (ip[0] & 0x0F) * 4]
    total = sum(struct.unpack(f">{len(header) // 2}H", header))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return total == 0xFFFF


def census(path: Path) -> Counter[str]:
    """Per side (``data`` from the sender, ``ack`` from the receiver): the
    packets of each ECN codepoint, and the TCP segments with CWR or ECE."""
    c: Counter[str] = Counter()
    for ip in ip_packets(path):
        side = "data" if ip[12:16] == SENDER else "ack"
        c[f"{side} ecn={ip[1] & 3}"] += 1
        assert checksum_ok(ip), "every header's checksum is valid"
        flags = ip[(ip[0] & 0x0F) * 4 + 13]
        c[f"{side} cwr"] += bool(flags & CWR)
        c[f"{side} ece"] += bool(flags & ECE)
    return c


def test_codel_marks_real_packets_and_the_kernel_responds(machine: None, tmp_path: Path) -> None:  # noqa: F811
    seen = {}
    for ecn in (True, False):
        link = tmp_path / f"link-{ecn}.pcap"
        res = run(codel_flow(ecn), captures={"link:path": link})
        links = res.links.set_index("dir")
        flows = res.flows
        seen[ecn] = (links, flows, census(link))
        print(
            f"ecn={ecn}: marked {links.loc[0, 'marked']}, dropped_aqm "
            f"{links.loc[0, 'dropped_aqm']}, retransmissions "
            f"{flows['retransmissions'].iloc[0]}, {dict(seen[ecn][2])}"
        )
    links, flows, c = seen[True]
    marked = int(links.loc[0, "marked"])
    assert marked > 0, "CoDel marked the ECN flow"
    # nothing lost to the discipline or the buffer
    assert int(links.loc[0, "dropped_aqm"]) == 0
    assert int(links.loc[0, "dropped_queue"]) == 0
    # the kernel sent its data ECT(0) (RFC 3168), the link set CE on as many
    # as the model marked, the receiver echoed them, the sender answered
    assert c["data ecn=2"] > 1000
    assert c["data ecn=3"] == marked
    assert c["ack ece"] > 0 and c["data cwr"] > 0
    # the same flow without ECN: its packets are Not-ECT, so CoDel drops
    links_off, flows_off, off = seen[False]
    assert int(links_off.loc[0, "marked"]) == 0
    assert int(links_off.loc[0, "dropped_aqm"]) > 0
    assert off["data ecn=2"] == off["data ecn=3"] == off["data cwr"] == 0
    assert int(flows_off["retransmissions"].iloc[0]) > int(flows["retransmissions"].iloc[0])
