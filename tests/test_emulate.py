"""The emulator on real packets (`wavelab emulate`): real Linux TCP between
network namespaces through the scenario's links on the wall clock.

These tests need root and /dev/net/tun; elsewhere they are skipped with the
reason, and under CI=true they fail instead (CI runs as root on machines
that have both). Each emulates a few seconds of wall time. They assert what
the machine's load cannot change: the link model's planned instants, drops
and order, lower bounds on delays, nothing early; how late real packets run
is measured by benches/emulation_accuracy.py.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import wavelab
from wavelab import _native
from wavelab.emulator import emulate, unavailable
from wavelab.errors import ScenarioFileError
from wavelab.results import Results
from wavelab.scenario import builtin_scenario, from_toml

# real packets on the wall clock: the tests wait more than they compute, so
# scripts/test.sh runs them in its side process, beside the others
pytestmark = pytest.mark.realtime


@pytest.fixture(scope="module")
def machine() -> None:
    """Skips (or under CI=true fails) the test where emulation cannot run."""
    why = unavailable()
    if why is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {why}")
    pytest.skip(why)


def run(toml: str, **kw: object) -> Results:
    res = emulate(from_toml(toml, emulation=True), **kw)  # type: ignore[arg-type]
    assert res.complete
    assert res.run["emulation"]["errors"] == []
    return res


def one_link(
    rate: str,
    delay: str,
    duration: str = "3s",
    flow: str = "",
    link: str = "",
    queue: str = "200pkt",
) -> str:
    return f"""
name = "emu"
duration = "{duration}"
[[links]]
name = "path"
between = ["a", "b"]
rate = "{rate}"
delay = "{delay}"
queue = "{queue}"
{link}
[[flows]]
name = "bulk"
from = "a"
to = "b"
cc = "cubic"
{flow}
"""


# ----- the link on the wall clock -------------------------------------------


def test_departures_are_spaced_by_size_over_rate(machine: None) -> None:
    res = run(one_link("10Mbit/s", "5ms"))
    r = res.releases
    data = r[(r["dir"] == 0) & (r["size"] == 1500)].sort_values("time")
    planned = data["time"].to_numpy()
    # back to back: the model spaces them by one serialisation time
    gap = np.diff(planned)
    busy = np.isclose(gap, 1500 * 8 / 10e6, rtol=0, atol=1e-9)
    assert busy.sum() > 1000, busy.sum()
    # and no real release is early; how late they run is the machine's
    # (benches/emulation_accuracy.py measures it)
    assert (data["lateness"] >= 0).all()
    actual = planned + data["lateness"].to_numpy()
    # in order (to the clock's nanosecond: the sum is rounded in floating point)
    assert (np.diff(actual) > -1e-9).all(), "the releases leave in order"
    # the receiver never gets more than the link's rate, less the headers (MSS 1460)
    assert float(res.flows["goodput"].iloc[0]) < 1.001 * 9.733e6


def test_rtt_is_twice_the_delay(machine: None) -> None:
    res = run(one_link("100Mbit/s", "10ms", flow='size = "100KB"'))
    min_rtt = float(res.flows["min_rtt"].iloc[0])
    # 20 ms of propagation and a 1500-byte packet's and an ACK's
    # serialisation (120 + 4 us) at the least; the kernel's own stack time
    # and the emulator's lateness come on top, by as much as the machine's
    # load makes them (benches/emulation_accuracy.py), but never a third
    # crossing of the link
    floor = 20e-3 + 124e-6
    assert floor - 5e-6 <= min_rtt < floor + 10e-3, min_rtt
    assert float(res.flows["completion_time"].iloc[0]) > 2 * min_rtt


def test_drops_are_exactly_the_models(machine: None) -> None:
    # Gilbert-Elliott with certain transitions: the state flips at every
    # packet and the bad state loses everything, so the 1st, 3rd, 5th, ...
    # packet serialised on the data direction are lost, whatever TCP does
    loss = (
        'forward = { loss = { model = "gilbert_elliott", p_good_bad = 1.0, '
        "p_bad_good = 1.0, loss_good = 0.0, loss_bad = 1.0 } }"
    )
    res = run(one_link("10Mbit/s", "5ms", duration="4s", flow="log_packets = true", link=loss))
    links = res.links.set_index("dir")
    sent = int(links.loc[0, "sent_packets"])
    assert sent > 20, sent
    assert int(links.loc[0, "dropped_random"]) == (sent + 1) // 2
    assert int(links.loc[1, "dropped_random"]) == 0
    # every drop the log shows is one the links counted, and no dropped
    # packet reached the receiver
    log = res.packets
    drops = log[(log["event"] == "drop") & (log["cause"] == "random")]
    assert len(drops) == int(links.loc[0, "dropped_random"])
    delivered = len(res.releases[res.releases["dir"] == 0])
    assert delivered == int(links.loc[0, "delivered_packets"])
    assert delivered + (sent + 1) // 2 <= sent + 1


def test_an_outage_drops_everything_both_ways_during_its_window(machine: None) -> None:
    res = run(
        one_link(
            "10Mbit/s",
            "20ms",
            flow="log_packets = true",
            link='outages = [{ start = "1s", duration = "0.5s" }]',
        )
    )
    log = res.packets
    out = log[(log["event"] == "drop") & (log["cause"] == "outage")]
    # data and ACKs in flight when it starts are lost
    assert set(out["link"]) == {0, 1}
    # a packet is lost if its time on the link overlaps the window: it is
    # reported when it would have arrived
    assert out["time"].min() >= 1.0
    assert out["time"].max() <= 1.5 + 0.02 + 0.0013
    r = res.releases
    planned = r["time"].to_numpy()
    assert not ((planned >= 1.0) & (planned < 1.5)).any(), "nothing arrives during it"
    assert (planned > 1.5).sum() > 100, "traffic resumes after it"
    assert int(res.links["dropped_outage"].sum()) == len(out)


def test_a_handover_switches_rate_and_delay_for_real_packets(machine: None) -> None:
    link = 'handovers = [{ at = "2s", outage = "0.2s", rate = "2Mbit/s", delay = "40ms" }]'
    toml = one_link("10Mbit/s", "10ms", duration="5s", flow='size = "100KB"', link=link)
    toml += """
[[flows]]
name = "later"
from = "a"
to = "b"
cc = "cubic"
start = "3s"
size = "100KB"
"""
    res = run(toml)
    # the RTT: both delays at the least, and less than a third crossing of
    # either link (the kernel's and the emulator's time on top are the
    # machine's, benches/emulation_accuracy.py)
    rtt = res.flows.set_index("name")["min_rtt"]
    assert 20e-3 <= rtt["bulk"] < 30e-3, rtt["bulk"]
    assert 80e-3 <= rtt["later"] < 120e-3, rtt["later"]
    # back-to-back packets leave the new link 6 ms apart, the old one 1.2 ms
    r = res.releases
    full = r[(r["dir"] == 0) & (r["size"] == 1500)].sort_values("time")
    for flow, gap in ((0, 1.2e-3), (1, 6e-3)):
        f = full[full["flow"] == flow]
        planned = np.diff(f["time"].to_numpy())
        busy = np.isclose(planned, gap, atol=1e-9)
        assert busy.sum() >= 20, (flow, busy.sum())
        assert (f["lateness"] >= 0).all()
    assert list(res.handovers["time"]) == [2.0]
    assert (res.flows["completion_time"] > 0).all()


def test_a_handoff_switches_the_flows_to_the_new_access_link(machine: None) -> None:
    # MobiWac 2009's multi-homed node: make-before-break HSDPA -> WLAN at 2 s
    sc = builtin_scenario(
        "mobiwac-handoff",
        emulation=True,
        changes={"duration": "4s", "flows[0].cc": "cubic", "handoffs[0].at": "2s"},
    )
    res = emulate(sc)
    assert res.complete and res.run["emulation"]["errors"] == []
    h = res.handoffs
    assert list(h["time"]) == [2.0] and list(h["flows_moved"]) == [2], h
    assert list(h["notified"]) == [0]
    assert any("handoffs[0].notify" in n for n in res.run["emulation"]["notes"])
    links = res.links.set_index(["link", "direction"])
    hsdpa, wlan = links.loc[("hsdpa", "forward"), "dir"], links.loc[("wlan", "forward"), "dir"]
    assert links.loc[("wlan", "forward"), "delivered_packets"] > 100
    r = res.releases
    data = r[r["flow"] >= 0]
    # nothing crosses the WLAN before the handoff; after it, the HSDPA link
    # only drains what it held (18 packets at 2 Mbit/s, its 50 ms delay)
    assert data[data["dir"] == wlan]["time"].min() >= 2.0
    assert data[data["dir"] == hsdpa]["time"].max() <= 2.0 + 0.108 + 0.05 + 0.01
    # both flows moved
    assert set(data[data["dir"] == wlan]["flow"]) == {0, 1}


def test_a_delay_drop_mid_run_does_not_reorder(machine: None) -> None:
    # the pipe stays first in, first out: packets sent after the change
    # queue behind those sent before it instead of overtaking them
    link = 'schedule = [{ at = "1.5s", delay = "5ms" }]'
    toml = one_link("20Mbit/s", "60ms", flow="log_packets = true", link=link, queue="10pkt")
    res = run(toml)
    r = res.releases[res.releases["dir"] == 0]
    assert (np.diff(r["time"].to_numpy()) >= 0).all()
    got = res.packets[res.packets["event"] == "deliver"]
    firsts = got[got["kind"] == "data"]["seq"].to_numpy()
    assert (np.diff(firsts) > 0).all(), "the receiver got every new segment in order"
    # the change took effect: packets cross in 5 ms (plus at most 6 ms of
    # queue) where they took 60 ms
    log = res.packets
    data = log[(log["kind"] == "data") & (log["len"] > 0)]
    sent = data[data["event"] == "send"].drop_duplicates("seq", keep=False)
    one_way = data[data["event"] == "deliver"].merge(sent, on="seq", suffixes=("", "_sent"))
    d = (one_way["time"] - one_way["time_sent"]).to_numpy()
    t = one_way["time_sent"].to_numpy()
    assert d[t < 1.4].min() >= 60e-3 and d[t > 2.0].min() < 10e-3


# ----- flows, results, captures ----------------------------------------------


def test_results_have_the_simulators_tables(machine: None, tmp_path: Path) -> None:
    from wavelab.runner import run as simulate

    toml = one_link("10Mbit/s", "10ms", flow="log_packets = true")
    emu = run(toml)
    sim = simulate(from_toml(toml))
    for name in ("series", "flows", "links", "queues", "packets", "handovers"):
        a, b = getattr(sim, name), getattr(emu, name)
        # the algorithm's own variables (cc_*) are those each side can read
        same = [c for c in a.columns if not c.startswith("cc_")]
        assert same == [c for c in b.columns if not c.startswith("cc_")], name
    assert len(emu.series) >= 29 and emu.series["srtt"].notna().all()
    assert emu.series["bytes_delivered"].is_monotonic_increasing
    # written and read back, plotted and compared as a simulation's
    emu.to_parquet(tmp_path / "emu")
    sim.to_parquet(tmp_path / "sim")
    back = Results.read_parquet(tmp_path / "emu")
    assert back.emulated and back.flows["retransmissions"].dtype == "UInt64"
    assert len(back.releases) == len(emu.releases)
    out = wavelab("plot", str(tmp_path / "emu"))
    assert out.returncode == 0, out.stderr
    out = wavelab("compare", str(tmp_path / "sim"), str(tmp_path / "emu"))
    assert out.returncode == 0, out.stderr
    assert "goodput_mbps" in out.stdout
    assert (tmp_path / "emu" / "compare" / "flow-bulk.png").exists()


def test_link_capture_holds_the_real_packets(machine: None, tmp_path: Path) -> None:
    from conftest import require_tool
    from test_pcap import tshark

    tool = require_tool("tshark")
    out = tmp_path / "run"
    path = tmp_path / "s.toml"
    path.write_text(one_link("10Mbit/s", "10ms", duration="2s"))
    res = wavelab(
        "emulate",
        str(path),
        "--out",
        str(out),
        "--no-plots",
        "--quiet",
        "--pcap",
        "link:path",
        "--pcap",
        "flow:bulk",
    )
    assert res.returncode == 0, res.stderr
    links = pd.read_parquet(out / "links.parquet")
    rows = tshark(tool, out / "link-path.pcap", "-T", "fields", "-e", "ip.src", "-e", "tcp.srcport")
    assert len(rows) == int(links["sent_packets"].sum())
    assert {r[0] for r in rows} == {"10.0.0.1", "10.0.0.2"}
    flow = tshark(tool, out / "flow-bulk.pcap", "-T", "fields", "-e", "tcp.srcport")
    assert {r[0] for r in flow} == {"10000", "5001"}


SERVER = """
import os, socket
s = socket.create_server(("", int(os.environ["WAVELAB_PORT"])))
c, _ = s.accept()
n = 0
while d := c.recv(65536):
    n += len(d)
print(n)
"""

CLIENT = """
import os, socket
s = socket.create_connection((os.environ["WAVELAB_TO"], int(os.environ["WAVELAB_PORT"])))
s.sendall(b"x" * 300000)
s.close()
"""


def test_a_command_runs_in_the_nodes_namespace(machine: None, tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(SERVER)
    (tmp_path / "client.py").write_text(CLIENT)
    py = sys.executable
    flow = (
        f'start = "0.5s"\ncmd = "{py} {tmp_path}/client.py"\n'
        f'receiver_cmd = "{py} {tmp_path}/server.py"'
    )
    toml = one_link("10Mbit/s", "10ms", duration="3s").replace('cc = "cubic"', flow)
    res = run(toml, logs=tmp_path)
    assert int(res.links.loc[0, "delivered_bytes"]) > 300_000
    assert (tmp_path / "receiver-bulk.log").read_text().strip() == "300000"
    assert res.flows["algorithm"].iloc[0] == "cmd"


def test_only_the_kernels_algorithms_are_emulated(machine: None) -> None:
    def error(cc: str) -> str:
        with pytest.raises(ScenarioFileError) as e:
            from_toml(one_link("10Mbit/s", "10ms").replace('"cubic"', f'"{cc}"'), emulation=True)
        return str(e.value)

    assert 'flows[0].cc: "newreno" is a wavelab algorithm the kernel does not have' in error(
        "newreno"
    )
    assert "is not in the kernel's tcp_available_congestion_control" in error("nonesuch")
    if "wave" not in _native.kernel_congestion_controls():
        # the hook for the BPF TCP Wave: accepted once the kernel lists it
        assert "BPF TCP Wave" in error("wave")
    for cc in _native.kernel_congestion_controls():
        sc = from_toml(one_link("10Mbit/s", "10ms").replace('"cubic"', f'"{cc}"'), emulation=True)
        assert sc.normalized["flows"][0]["cc"] == cc


def test_a_flagged_run_says_so(machine: None, tmp_path: Path) -> None:
    res = run(one_link("10Mbit/s", "10ms", duration="1s"), lateness_bound=0.0)
    e = res.run["emulation"]
    assert e["flagged"] and e["lateness_p99"] > 0


# ----- nothing is left behind ------------------------------------------------


def netns_in_use() -> set[str]:
    """Every network namespace a process, a thread, a file descriptor or a
    mount holds."""
    held: set[str] = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        for sub in ("task", "fd"):
            d = Path("/proc", pid, sub)
            try:
                names = os.listdir(d)
            except OSError:
                continue
            for n in names:
                try:
                    link = os.readlink(d / n / "ns" / "net" if sub == "task" else d / n)
                except OSError:
                    continue
                if link.startswith("net:["):
                    held.add(link)
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        if "nsfs" in line:
            held.update(w for w in line.split() if w.startswith("net:["))
    return held


def emulate_cli(
    tmp_path: Path, toml: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    path = tmp_path / "s.toml"
    path.write_text(toml)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wavelab.cli",
            "emulate",
            str(path),
            "--out",
            str(tmp_path / "out"),
            "--no-plots",
            "--quiet",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def its_namespaces(p: subprocess.Popen[str]) -> set[str]:
    """The namespaces the emulating process holds, once it has made them
    (however long a loaded machine takes to start it: the 120 s only keep a
    hung emulator from hanging the suite)."""
    mine = os.readlink("/proc/self/ns/net")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.1)
        found = set()
        for task in Path(f"/proc/{p.pid}/task").glob("*"):
            with contextlib.suppress(OSError):
                found.add(os.readlink(task / "ns" / "net"))
        for fd in Path(f"/proc/{p.pid}/fd").glob("*"):
            try:
                link = os.readlink(fd)
            except OSError:
                continue
            if link.startswith("net:["):
                found.add(link)
        found.discard(mine)
        if len(found) >= 2:
            return found
    raise AssertionError(f"the emulation made no namespaces (exit code {p.poll()})")


@pytest.mark.parametrize("how", ["exit", "ctrl-c", "sigterm", "kill-9", "panic"])
def test_nothing_is_left_behind(machine: None, tmp_path: Path, how: str) -> None:
    env = {"WAVELAB_NET_TEST_PANIC": "1"} if how == "panic" else None
    p = emulate_cli(tmp_path, one_link("10Mbit/s", "10ms", duration="3s"), env)
    ours = its_namespaces(p)
    if how == "ctrl-c":
        p.send_signal(signal.SIGINT)
    elif how == "sigterm":
        p.send_signal(signal.SIGTERM)
    elif how == "kill-9":
        p.kill()
    _, err = p.communicate(timeout=60)
    code = p.returncode
    if how == "exit":
        assert code == 0, err
    elif how in ("ctrl-c", "sigterm"):
        assert code == 130, err
        assert (tmp_path / "out" / "run.json").exists(), "the partial results are written"
    elif how == "panic":
        assert code == 2 and "panicked" in err and "Traceback" not in err, err
    # The kernel frees a namespace once its last holder (a flow's child
    # process may outlive the emulator by a moment) is gone: wait for that,
    # as long as a loaded machine may need, rather than a fixed moment.
    deadline = time.monotonic() + 30
    while ours & netns_in_use() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not (ours & netns_in_use()), "a namespace of the run is still held after 30 s"


def test_a_killed_parent_stops_the_run(machine: None, tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(one_link("10Mbit/s", "10ms", duration="30s"))
    out = tmp_path / "out"
    cmd = f"{sys.executable} -m wavelab.cli emulate {path} --out {out} --no-plots --quiet"
    shell = subprocess.Popen(["sh", "-c", f"{cmd} & wait"], start_new_session=True)
    time.sleep(3)
    shell.kill()
    shell.wait()
    for _ in range(100):
        if (out / "run.json").exists():
            break
        time.sleep(0.2)
    meta = (out / "run.json").read_text()
    assert '"complete": false' in meta


def test_cleanup_kills_what_a_dead_run_left(machine: None) -> None:
    # a process marked by a run whose emulator (pid 2**22 - 1) is gone
    orphan = subprocess.Popen(
        ["sleep", "60"], env={**os.environ, "WAVELAB_EMULATION": str(2**22 - 1)}
    )
    try:
        out = wavelab("emulate", "--cleanup")
        assert out.returncode == 0, out.stderr
        assert f"killed {orphan.pid} (sleep 60)" in out.stdout
        assert orphan.wait(timeout=5) == -signal.SIGKILL
    finally:
        orphan.kill()


# ----- DCNET 2016: Linux CUBIC through the L1 -> L2 handover -------------------


def test_linux_cubic_recovers_from_the_dcnet_handover_like_the_simulation(
    machine: None, tmp_path: Path
) -> None:
    from wavelab.emulator.compare import compare, simulation_of
    from wavelab.runner import run as simulate

    sc = builtin_scenario(
        "dcnet2016-handover",
        emulation=True,
        changes={
            "duration": "40s",
            "flows[0].cc": "cubic",
            "flows[0].tcp.sack": True,
            "links[1].handovers[0].at": "10s",
        },
    )
    emu = emulate(sc)
    sim = simulate(simulation_of(sc))
    c = compare(sim, emu).table.set_index("figure")
    rec = c.loc["goodput_recovery_s (bottleneck at 10 s)"]
    print(c.to_string())
    assert not np.isnan(rec["emulation"]), "Linux CUBIC recovers on L2"
    assert not np.isnan(rec["simulation"])
    # the same range: within a factor of three of the simulated CUBIC
    assert rec["simulation"] / 3 <= rec["emulation"] <= 3 * rec["simulation"], rec


def test_reproduce_dcnet2016_emulated_writes_the_kernels_rows(
    machine: None, tmp_path: Path
) -> None:
    from wavelab.experiments.dcnet2016_emulated import Plan, reproduce, scenarios

    plan = Plan(hts=(0.5,), directions=("L1L2",), variants=("CUBIC",), handover_at=2.0, after=4.0)
    sc = scenarios(plan)
    assert list(sc) == ["cubic-L1L2-ht0.5", "baseline-cubic-L2"]
    cell = sc["cubic-L1L2-ht0.5"].normalized
    assert cell["flows"][0]["cc"] == "cubic" and cell["flows"][0]["tcp"]["sack"] is True
    assert cell["links"][1]["handovers"][0]["outage"] in ("500ms", 0.5)
    reproduce(tmp_path, False, 2, plan)
    table = pd.read_csv(tmp_path / "recovery-emulated.csv")
    assert list(table["kernel_cc"]) == ["cubic"]
    # R_ss of the emulated baseline on L2 cannot exceed L2's payload capacity
    capacity = 8e6 * 960 / 1000 / 1e6
    assert 0 < table["emu_r_ss_mbps"].iloc[0] <= capacity * 1.01, table.iloc[0]
    assert (tmp_path / "figures-emulated" / "cubic-L1L2-ht0.5.png").stat().st_size > 0
    assert "CUBIC (cubic)" in (tmp_path / "table1-emulated.md").read_text()
    # each emulation is kept in its store as it finishes, the simulations in
    # the study's; started again, it emulates nothing and writes the same table
    index = tmp_path / "store-emulated" / "index.jsonl"
    before = index.read_bytes()
    assert len(before.splitlines()) == 2
    assert len((tmp_path / "store" / "index.jsonl").read_bytes().splitlines()) == 2
    first = (tmp_path / "recovery-emulated.csv").read_bytes()
    reproduce(tmp_path, False, 2, plan)
    assert index.read_bytes() == before
    assert (tmp_path / "recovery-emulated.csv").read_bytes() == first


def test_reproduce_emulate_names_the_experiments_it_has() -> None:
    out = wavelab("reproduce", "wave-page", "--emulate")
    assert out.returncode == 2
    assert "'wave-page' has no emulated form; --emulate runs: dcnet2016" in out.stderr
    assert "Traceback" not in out.stderr
