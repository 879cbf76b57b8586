"""The BPF TCP Wave (crates/bpf) on real packets through the emulator, beside
the sans-IO Wave simulated on the same scenario (issue 29, item 5).

They need root, /dev/net/tun, BPF with BTF and the loader built; elsewhere
they are skipped with the reason, and under CI=true they fail instead (CI
runs as root on machines that have all of it). The module loads TCP Wave
with its default parameters (DCNET 2016) for its tests and unloads it after.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

from wavelab import bpf
from wavelab.compare import compare, simulation_of
from wavelab.emulator import emulate, unavailable
from wavelab.results import Results
from wavelab.runner import run as simulate
from wavelab.scenario import Scenario, builtin_scenario, from_toml

BURST = 10
"""BURST0 of the default variant."""


def _why_not() -> str | None:
    why = unavailable()
    if why is not None:
        return why
    loader = bpf.binary()
    if loader is None:
        return "the wavelab-bpf loader is not built (wavelab bpf build)"
    check = subprocess.run([str(loader), "check"], capture_output=True, text=True)
    if check.returncode != 0:
        return f"wavelab-bpf check: {check.stderr.strip() or check.stdout.strip()}"
    return None


@pytest.fixture(scope="module")
def wave_loaded() -> Iterator[None]:
    """TCP Wave loaded with its defaults for the module; skips (or under
    CI=true fails) where it cannot be."""
    why = _why_not()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {why}")
        pytest.skip(why)
    loader = str(bpf.binary())
    subprocess.run([loader, "unload"], capture_output=True, check=True)
    subprocess.run([loader, "load"], capture_output=True, text=True, check=True)
    yield
    subprocess.run([loader, "unload"], capture_output=True, check=True)


def path_10mbit(flows: int = 1, duration: str = "20s") -> Scenario:
    """A 10 Mbit/s, 25 ms bottleneck behind a fast access link (the Wave
    project page's topology at 10 Mbit/s). The receivers ACK every segment
    (the kernel's through a ``quickack`` route): with delayed ACKs, Linux's
    receiver ACKs every segment at the start of a connection (quick-ACK
    mode) and the simulator's does not, which gives the kernel's Wave a
    smaller minimum RTT by one segment's serialisation and so a TxTime
    larger by half of it (5 %, docs/algorithms/wave-bpf.md): a difference
    of receivers, not of Wave."""
    flow = """
[[flows]]
from = "sender"
to = "receiver"
cc = "wave"
log_packets = true
tcp = { delayed_ack = false }
"""
    return from_toml(
        f"""
name = "wave-bpf-10mbit"
duration = "{duration}"
output = {{ interval = "10ms" }}
[[links]]
name = "access"
between = ["sender", "router"]
rate = "1Gbit/s"
delay = "1ms"
[[links]]
name = "bottleneck"
between = ["router", "receiver"]
rate = "10Mbit/s"
delay = "25ms"
queue = "100pkt"
"""
        + flow * flows,
        emulation=True,
    )


@pytest.fixture(scope="module")
def single(wave_loaded: None) -> tuple[Results, Results]:
    """One BPF Wave flow emulated, and the sans-IO Wave simulated, on the
    10 Mbit/s path."""
    sc = path_10mbit()
    emu = emulate(sc)
    assert emu.complete and emu.run["emulation"]["errors"] == []
    return emu, simulate(simulation_of(sc))


def bursts(res: Results, gap: float = 1e-3) -> pd.DataFrame:
    """The data segments of flow 0 as they entered the emulated path (read
    from the sender's TUN device), grouped into bursts by silences longer
    than ``gap``: start time, segments."""
    p = res.packets
    t = p[(p["event"] == "send") & (p["flow"] == 0)]["time"].sort_values().to_numpy()
    starts = np.concatenate([[True], np.diff(t) > gap])
    group = np.cumsum(starts)
    sizes = np.bincount(group)[1:]
    return pd.DataFrame({"start": t[starts], "segments": sizes})


def burst_gaps(emu: Results) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Gaps between consecutive full bursts after 2 s, the TxTime sampled
    before and after each (the state is sampled every 10 ms, less than one
    TxTime, so the TxTime in force is one of the two), and the slack the
    emulator's own lateness allows."""
    b = bursts(emu)
    late = b[b["start"] > 2.0]
    # gaps between full bursts only: a lone segment sent between two bursts
    # would split one gap into two short ones.
    s = emu.series[emu.series["flow"] == 0].sort_values("time")
    ts, tx = s["time"].to_numpy(), s["cc_tx_time"].to_numpy()
    full = late[late["segments"] == BURST]
    st = full["start"].to_numpy()
    i = np.searchsorted(ts, st[:-1]).clip(1, len(ts) - 1)
    lo, hi = np.minimum(tx[i - 1], tx[i]), np.maximum(tx[i - 1], tx[i])
    gaps = np.diff(st)
    slack = 2 * float(emu.run["emulation"]["lateness_p99"]) + 20e-6
    return gaps, lo, hi, slack


def test_bursts_leave_whole_and_never_early(single: tuple[Results, Results]) -> None:
    emu, _ = single
    b = bursts(emu)
    late = b[b["start"] > 2.0]  # after the first, unpaced, bursts
    assert len(late) > 500, len(late)
    print(late["segments"].value_counts().head().to_string())
    # Bursts leave whole: the groups are BURST segments, and no burst is
    # split (two short groups in a row that add up to BURST, as a burst let
    # out half a window at a time would be). A few segments leave outside
    # the bursts (1-5 at a time, in 0.3-2.5 % of groups, sometimes right
    # beside a burst; not traced, docs/algorithms/wave-bpf.md); nearly all
    # the data travels in full bursts.
    seg = late["segments"].to_numpy()
    assert np.bincount(seg).argmax() == BURST
    short = seg < BURST
    split = short[1:] & short[:-1] & (seg[1:] + seg[:-1] == BURST)
    assert not split.any(), np.flatnonzero(split)
    in_full = seg[seg == BURST].sum() / seg.sum()
    print(f"{in_full:.4f} of the segments in full bursts")
    assert in_full >= 0.95, in_full
    gaps, lo, _, slack = burst_gaps(emu)
    early = gaps < lo - slack
    print(f"early {early.mean():.4f} by {np.round(np.sort(lo[early] - gaps[early]) * 1e6)} us")
    # no burst leaves before its TxTime is up (the pacing rate the program
    # sets per transmission): 0.3-0.7 % of gaps measured shorter than the
    # TxTime sampled around them, not traced
    assert early.mean() <= 0.01, early.mean()


@pytest.mark.xfail(
    strict=False,
    reason="15-41 % of bursts leave about one ACK interval late: the kernel's pacing timer "
    "(a soft hrtimer) is not run at its expiry and the burst goes out when the next ACK "
    "is processed (docs/algorithms/wave-bpf.md, Measured)",
)
def test_bursts_are_spaced_tx_time_within_the_emulators_lateness(
    single: tuple[Results, Results],
) -> None:
    emu, _ = single
    gaps, lo, hi, slack = burst_gaps(emu)
    on_time = (gaps >= lo - slack) & (gaps <= hi + slack)
    print(
        f"gap median {np.median(gaps) * 1e3:.3f} ms; "
        f"on time {on_time.mean():.3f}, slack {slack * 1e6:.0f} us"
    )
    assert on_time.mean() >= 0.99, on_time.mean()


def test_tx_time_and_throughput_are_the_sans_io_waves(single: tuple[Results, Results]) -> None:
    emu, sim = single
    c = compare(sim, emu).table.set_index("figure")
    print(c.to_string())
    tx = c.loc["tx_time_ms"]
    assert abs(tx["emulation"] / tx["simulation"] - 1) <= 0.05, tx
    goodput = c.loc["goodput_mbps"]
    assert abs(goodput["emulation"] / goodput["simulation"] - 1) <= 0.10, goodput


def test_two_bpf_wave_flows_share_the_link_fairly(wave_loaded: None) -> None:
    emu = emulate(path_10mbit(flows=2))
    assert emu.complete and emu.run["emulation"]["errors"] == []
    x = emu.flows["goodput"].to_numpy(dtype=float)
    jain = float(x.sum() ** 2 / (len(x) * (x**2).sum()))
    print(f"goodputs {x / 1e6} Mbit/s, Jain {jain:.3f}")
    assert jain >= 0.9, jain
    assert x.sum() > 0.8 * 10e6 * 1448 / 1500, x


def test_the_dcnet_l1_l2_handover_recovers(wave_loaded: None) -> None:
    sc = builtin_scenario(
        "dcnet2016-handover",
        emulation=True,
        changes={"duration": "30s", "flows[0].cc": "wave", "links[1].handovers[0].at": "8s"},
    )
    emu = emulate(sc)
    sim = simulate(simulation_of(sc))
    c = compare(sim, emu).table.set_index("figure")
    print(c.to_string())
    rec = c.loc["goodput_recovery_s (bottleneck at 8 s)"]
    assert not np.isnan(rec["emulation"]), "the BPF Wave recovers on L2"
    assert not np.isnan(rec["simulation"])
