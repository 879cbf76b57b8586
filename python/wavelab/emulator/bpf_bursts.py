"""The BPF TCP Wave's bursts on real packets: the scenario its tests and its
spacing benchmark share, the bursts as the kernel opened them and as the
emulator read them, and the timing figures of their spacing.

Two records of one flow's bursts exist after an emulation:

* the kernel's: the ``bursts`` table, each burst's opening instant on the
  run's clock, its first sequence number, its quota of segments and the
  TxTime it opened with (read from the program's ring at every sample);
* the link's: the packet log's ``send`` events, the instant the emulator
  read each segment from the sender's TUN device.

What no load on the machine can change (a burst never opens before its
TxTime is up, the bursts gate what the flow sends, the link reads the
bursts in the order the kernel opened them) is asserted by
``tests/test_wave_bpf_emulated.py``; how late the timers and reads run, and
whether exactly one quota leaves between two bursts, is the machine's, and
is reported by
``benches/wave_bpf_spacing.py`` (:func:`spacing_figures`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from wavelab.emulator.compare import compare
from wavelab.results import Results
from wavelab.scenario import Scenario, from_toml

BURST = 10
"""BURST0 of the default variant (DCNET 2016, the project page)."""

TIMER_WAKEUP = 100e-6
"""How late the pacing timer may run a due burst on an idle machine: it is a
soft hrtimer, run from a softirq (10-40 us late on this project's machines,
measured with bpftrace on ``hrtimer_expire_entry``; under load a few in a
thousand run 0.1-1.4 ms late, from ksoftirqd)."""

EARLY = 20e-6
"""How early the program opens a due burst (``wave.bpf.c``: a burst due
within 20 us is on time)."""

SEQ_SPACE = 1 << 32


def path_10mbit(flows: int = 1, duration: str = "20s") -> Scenario:
    """A 10 Mbit/s, 25 ms bottleneck behind a fast access link (the Wave
    project page's topology at 10 Mbit/s). The receivers ACK every segment
    (the kernel's through a ``quickack`` route): with delayed ACKs, Linux's
    receiver ACKs every segment at the start of a connection (quick-ACK
    mode) and the simulator's default receiver does not (``receiver =
    "linux"`` does), which gives the kernel's Wave a smaller minimum RTT by
    one segment's serialisation and so a TxTime larger by half of it (5 %,
    docs/algorithms/wave-bpf.md): a difference of receivers, not of Wave."""
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


def link_bursts(res: Results, gap: float = 1e-3) -> pd.DataFrame:
    """The data segments of flow 0 as the emulator read them from the
    sender's TUN device, grouped into bursts by silences longer than
    ``gap``: ``start`` (s), ``segments``. A read the machine delays can
    split or merge groups, so these are figures, not the kernel's record."""
    p = res.packets
    t = p[(p["event"] == "send") & (p["flow"] == 0)]["time"].sort_values().to_numpy()
    starts = np.concatenate([[True], np.diff(t) > gap])
    sizes = np.bincount(np.cumsum(starts))[1:]
    return pd.DataFrame({"start": t[starts], "segments": sizes})


def kernel_bursts(res: Results, after: float = 2.0) -> pd.DataFrame:
    """The bursts of flow 0 opened after ``after`` seconds (past the first,
    unpaced, ones) as the program recorded them, with ``sent``, the new
    data (segments) that left from each burst's opening to the next one's,
    and ``read``, the instant the emulator read its first segment."""
    every = res.bursts[res.bursts["flow"] == 0].reset_index(drop=True)
    # the packet log numbers bytes from the first data byte, the kernel from
    # its initial sequence number (the first burst starts at the first byte)
    first = int(every["seq"].iloc[0])
    rel = (every["seq"].to_numpy(dtype=np.int64) - first) % SEQ_SPACE
    mss = data_segment_size(res)
    sent = np.append(np.diff(rel) / mss, np.nan)
    p = res.packets
    data = p[(p["event"] == "send") & (p["flow"] == 0) & (p["kind"] == "data")]
    read = data.drop_duplicates("seq").set_index("seq")["time"].reindex(rel).to_numpy()
    b = every.assign(sent=sent, read=read)
    return b[b["time"] > after].reset_index(drop=True)


def data_segment_size(res: Results) -> int:
    """The payload of flow 0's full data segments (its MSS on the wire)."""
    p = res.packets
    data = p[(p["event"] == "send") & (p["flow"] == 0) & (p["kind"] == "data")]
    return int(data["len"].max())


def spacing_figures(emu: Results, sim: Results) -> dict[str, float]:
    """The timing figures of one emulated BPF Wave flow on
    :func:`path_10mbit`, beside the sans-IO Wave simulated on it:

    * ``whole_at_link``: the share of the data the emulator read in groups
      of exactly ``BURST`` segments (reads delayed by the machine can split
      a group);
    * ``kernel_whole``: the share of bursts after which exactly their quota
      of new data left before the next one opened (the kernel's record);
    * ``kernel_off_p50_us``, ``kernel_off_p99_us``: how long after the
      previous burst's TxTime each burst opened, in the kernel;
    * ``kernel_late``: the share of bursts that opened later than the
      pacing timer's wake-up (``TIMER_WAKEUP``);
    * ``read_p50_us``, ``read_p99_us``: from the kernel opening a burst to
      the emulator reading its first segment;
    * ``link_on_time``: the share of gaps between bursts at the link that
      are the TxTime within ``EARLY`` early and ``TIMER_WAKEUP`` late plus
      the read delay's p99 at both ends;
    * ``tx_time_ratio``, ``goodput_ratio``: the emulated flow's median
      TxTime and goodput over the simulated flow's;
    * ``lateness_p99_us``: the emulator's own release lateness.
    """
    groups = link_bursts(emu)
    late_groups = groups[groups["start"] > 2.0]["segments"].to_numpy()
    b = kernel_bursts(emu)
    t = b["time"].to_numpy()
    tx = b["tx_time"].to_numpy()
    off = np.diff(t) - tx[:-1]
    delay = b["read"].to_numpy() - t
    p99 = float(np.nanquantile(delay, 0.99))
    link_off = np.diff(b["read"].to_numpy()) - tx[:-1]
    slack = TIMER_WAKEUP + EARLY + 2 * p99
    ratio = compare(sim, emu).table.set_index("figure")["ratio"].astype(float)
    return {
        "bursts": float(len(b)),
        "whole_at_link": float(late_groups[late_groups == BURST].sum() / late_groups.sum()),
        "kernel_whole": float((b["sent"].dropna().to_numpy() == BURST).mean()),
        "kernel_off_p50_us": float(np.median(off)) * 1e6,
        "kernel_off_p99_us": float(np.quantile(off, 0.99)) * 1e6,
        "kernel_late": float((off > TIMER_WAKEUP).mean()),
        "read_p50_us": float(np.nanmedian(delay)) * 1e6,
        "read_p99_us": p99 * 1e6,
        "link_on_time": float((np.abs(link_off) <= slack).mean()),
        "tx_time_ratio": float(ratio["tx_time_ms"]),
        "goodput_ratio": float(ratio["goodput_mbps"]),
        "lateness_p99_us": float(emu.run["emulation"]["lateness_p99"]) * 1e6,
    }
