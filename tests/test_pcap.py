"""Packet captures (`wavelab run --pcap`) read by Debian's tshark: every
packet parses, and tshark's TCP analysis finds exactly the retransmissions
our counters and packet log report."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from conftest import require_tool, wavelab


def tshark(tool: str, pcap: Path, *args: str) -> list[list[str]]:
    out = subprocess.run(
        [tool, "-r", str(pcap), *args], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return [line.split("\t") for line in out.stdout.splitlines()]


def frames(tool: str, pcap: Path, display_filter: str) -> set[tuple[float, int]]:
    """(time, relative sequence number) of the frames matching a filter."""
    rows = tshark(
        tool, pcap, "-Y", display_filter, "-T", "fields", "-e", "frame.time_epoch", "-e", "tcp.seq"
    )
    return {(round(float(t), 7), int(s)) for t, s in rows}


def run_with_captures(toml: Path, out: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    args = ["run", str(toml), "--out", str(out), "--no-plots"]
    for t in targets:
        args += ["--pcap", t]
    res = wavelab(*args)
    assert res.returncode == 0, res.stderr
    return res


@pytest.mark.parametrize(
    "cc,tcp",
    [
        ("newreno", "{ sack = true, timestamps = true }"),
        ("wave", "{ sack = false }"),
        ("cubic", "{ sack = false }"),
    ],
)
def test_tshark_finds_the_retransmissions_we_count(tmp_path: Path, cc: str, tcp: str) -> None:
    tool = require_tool("tshark")
    from conftest import LOSSY

    toml = tmp_path / "lossy.toml"
    toml.write_text(
        LOSSY.replace('"newreno"', f'"{cc}"').replace("{ sack = true, timestamps = true }", tcp)
    )
    out = tmp_path / "out"
    res = run_with_captures(toml, out, "flow:bulk")
    pcap = out / "flow-bulk.pcap"
    assert f"-> {pcap}" in res.stdout
    flows = pd.read_parquet(out / "flows.parquet")
    counter = int(flows.loc[0, "retransmissions"])
    assert counter > 20, "the scenario must lose packets"

    # every record parses as IPv4/TCP; nothing malformed
    records = tshark(tool, pcap, "-T", "fields", "-e", "frame.number", "-e", "tcp.srcport")
    written = json.loads((out / "run.json").read_text())["run"]["captures"][0]["packets"]
    assert len(records) == written
    assert all(port in ("10000", "5001") for _, port in records)
    assert not tshark(tool, pcap, "-Y", "_ws.malformed || _ws.expert.severity >= error")
    assert len(tshark(tool, pcap, "-Y", "tcp.flags.syn == 1")) == 2

    # the retransmissions of the packet log, keyed as tshark shows them
    log = pd.read_parquet(out / "packets.parquet")
    rtx = log[log["event"].astype(str) == "retransmit"]
    ours = {(round(float(t), 7), int(s) + 1) for t, s in zip(rtx["time"], rtx["seq"], strict=True)}
    assert len(ours) == counter
    flagged = frames(tool, pcap, "tcp.analysis.retransmission")
    # tshark calls a segment below the highest one sent "out-of-order" instead
    # when it leaves within one handshake RTT of that highest segment
    out_of_order = frames(tool, pcap, "tcp.analysis.out_of_order")
    assert flagged | out_of_order == ours
    assert not flagged & out_of_order
    assert len(flagged) >= counter // 2
    # and no new data is flagged
    assert not frames(tool, pcap, "tcp.analysis.spurious_retransmission")


def test_tshark_reads_sack_blocks_timestamps_and_window_scale(
    lossy_file: Path, tmp_path: Path
) -> None:
    tool = require_tool("tshark")
    out = tmp_path / "out"
    run_with_captures(lossy_file, out, "bulk")
    pcap = out / "bulk.pcap"
    sacks = tshark(tool, pcap, "-Y", "tcp.options.sack_le", "-T", "fields", "-e", "tcp.srcport")
    assert len(sacks) > 10 and {p for (p,) in sacks} == {"5001"}, "SACKs come from the receiver"
    ts = tshark(
        tool, pcap, "-Y", "tcp.options.timestamp.tsval", "-T", "fields", "-e", "frame.number"
    )
    total = tshark(tool, pcap, "-T", "fields", "-e", "frame.number")
    assert len(ts) == len(total), "timestamps on every segment"
    syn = tshark(
        tool,
        pcap,
        "-Y",
        "tcp.flags.syn == 1 && tcp.flags.ack == 0",
        "-T",
        "fields",
        "-e",
        "tcp.options.mss_val",
        "-e",
        "tcp.options.wscale.shift",
        "-e",
        "ip.src",
        "-e",
        "ip.dst",
        "-e",
        "ip.ttl",
    )
    assert syn == [["1460", "11", "10.0.0.1", "10.0.0.3", "64"]]
    # the IP header checksum verifies; IP total length covers the payload
    bad = tshark(tool, pcap, "-o", "ip.check_checksum:TRUE", "-Y", "ip.checksum.status == 0")
    assert not bad
    data = tshark(
        tool, pcap, "-Y", "tcp.len > 0", "-T", "fields", "-e", "ip.len", "-e", "tcp.len", "-c", "5"
    )
    assert all(int(ip) == int(tcp) + 20 + 32 for ip, tcp in data), data


def test_a_link_capture_holds_what_the_link_sent(lossy_file: Path, tmp_path: Path) -> None:
    tool = require_tool("tshark")
    out = tmp_path / "out"
    run_with_captures(lossy_file, out, "link:bottleneck:forward", "link:access")
    links = pd.read_parquet(out / "links.parquet")
    sent = dict(zip(links["dir"], links["sent_packets"], strict=True))
    forward = tshark(tool, out / "link-bottleneck-forward.pcap", "-T", "fields", "-e", "ip.ttl")
    assert len(forward) == sent[2]
    assert {ttl for (ttl,) in forward} == {"63"}, "one router crossed before the bottleneck"
    both = tshark(tool, out / "link-access.pcap", "-T", "fields", "-e", "ip.src")
    assert len(both) == sent[0] + sent[1]


def test_pcap_file_format_without_tshark(lossy_file: Path, tmp_path: Path) -> None:
    """The file header and records, read by hand (runs even without tshark)."""
    out = tmp_path / "out"
    run_with_captures(lossy_file, out, "bulk")
    data = (out / "bulk.pcap").read_bytes()
    magic, major, minor, _, _, snaplen, linktype = struct.unpack("<IHHiIII", data[:24])
    assert (magic, major, minor, linktype) == (0xA1B23C4D, 2, 4, 101)
    i, n = 24, 0
    while i < len(data):
        _, nanos, incl, orig = struct.unpack("<IIII", data[i : i + 16])
        assert nanos < 1_000_000_000 and incl <= snaplen and incl <= orig
        ip = data[i + 16 : i + 16 + incl]
        assert ip[0] == 0x45 and struct.unpack(">H", ip[2:4])[0] == orig
        i += 16 + incl
        n += 1
    assert i == len(data) and n > 500


def test_a_bad_capture_target_is_one_line_naming_what_exists(
    lossy_file: Path, tmp_path: Path
) -> None:
    res = wavelab("run", str(lossy_file), "--out", str(tmp_path / "o"), "--pcap", "bulky")
    assert res.returncode == 2
    assert res.stderr.strip() == (
        'error: lossy: --pcap "bulky": no flow or link is called "bulky" (flows: bulk; '
        "links: access, bottleneck); write flow:NAME, link:NAME or link:NAME:forward"
    )
    assert not (tmp_path / "o" / "flows.parquet").exists(), "nothing ran"


def test_sweeps_can_capture_every_run(lossy_file: Path, tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(lossy_file.read_text() + '\n[sweep]\n"flows[0].cc" = ["reno", "cubic"]\n')
    out = tmp_path / "sw"
    res = wavelab("sweep", str(sweep), "--out", str(out), "--jobs", "1", "--pcap", "flow:bulk")
    assert res.returncode == 0, res.stderr
    runs = pd.read_parquet(out / "runs.parquet")
    for key in runs["run"]:
        pcap = out / "runs" / key / "flow-bulk.pcap"
        assert pcap.stat().st_size > 10_000
    index = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    assert all(e["captures"] == ["flow:bulk"] for e in index)
    assert all("flow-bulk.pcap" in e["files"] for e in index)
    # a sweep without --pcap reuses them; one asking for another capture re-runs
    again = wavelab("sweep", str(sweep), "--out", str(out), "--jobs", "1")
    assert "2 already in" in again.stderr
    other = wavelab("sweep", str(sweep), "--out", str(out), "--jobs", "1", "--pcap", "access")
    assert "0 already in" in other.stderr, other.stderr


def test_a_bad_capture_target_in_a_sweep_stops_it_before_it_runs(
    lossy_file: Path, tmp_path: Path
) -> None:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(lossy_file.read_text() + "\n[sweep]\nseeds = 2\n")
    out = tmp_path / "sw"
    res = wavelab("sweep", str(sweep), "--out", str(out), "--pcap", "link:nowhere")
    assert res.returncode == 2
    assert res.stderr.endswith(
        'error: lossy: --pcap "link:nowhere": no link is called "nowhere" '
        "(flows: bulk; links: access, bottleneck)\n"
    ), res.stderr
    assert not (out / "index.jsonl").exists()


def test_a_full_disk_stops_only_the_capture(lossy_file: Path) -> None:
    import errno

    import wavelab

    sc = wavelab.load_scenario(lossy_file)
    res = wavelab.run(sc, captures={"bulk": "/dev/full"})  # every write: ENOSPC
    (capture,) = res.run["captures"]
    assert capture["errno"] == errno.ENOSPC and "No space left on device" in capture["error"]
    assert res.complete and res.flows.loc[0, "retransmissions"] > 0, "the run's results are kept"
    pd.testing.assert_frame_equal(res.series, wavelab.run(sc).series)
