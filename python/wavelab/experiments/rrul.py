"""Latency under load (``wavelab reproduce rrul``): flent's RRUL idea
(Høiland-Jørgensen et al., "Flent: The FLExible Network Tester",
VALUETOOLS 2017; the "Realtime Response Under Load" test of the
bufferbloat project) on a simulated bottleneck: a ping and a voice call
beside 1, 4 and 8 bulk flows of one algorithm, over DCNET 2016's link L1
(2 Mbit/s, 30 ms one way, a 100-packet buffer) with drop-tail and with
FQ-CoDel.

Each run: the ping (a request every 100 ms, ICMP-echo-like) and the voice
flow (160 B every 20 ms, a 150 ms playout deadline: ITU-T G.114's one-way
delay for most users' satisfaction) start at 0 s, the bulk flows at 5 s and
run to the end; the first 5 s are the idle baseline, the figures under load
are from 10 s on (the bulk flows' slow start left behind). What flent's
RRUL has and this has not: upload and download at once (the bulk flows
here all go one way; the ping's and the voice's way back is the ACKs'),
and UDP flood pings at several marks.

The handover variant: the same ping, voice call and one bulk flow of each
algorithm through DCNET 2016's vertical handover from L2 (8 Mbit/s,
240 ms one way) to L1 (2 Mbit/s, 30 ms) at 30 s with a 2 s outage, both
queues: what the voice call sees when the bulk flow's window, sized for
the long fat link, meets the short thin one.

Runs are cheap (2 Mbit/s); the quick form (``--quick``: CUBIC and BBR, 1
and 8 flows, 20 s) is what CI runs, the full grid (four algorithms, 1, 4, 8
flows, both queues, 60 s) is marked slow in the tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from wavelab._util.table_text import table_text
from wavelab.analysis.rtt import rtt_cdf
from wavelab.experiments.figures import save
from wavelab.experiments.runs import run_runs
from wavelab.experiments.tables import Markdown, Tables
from wavelab.plot.style import algorithm_style
from wavelab.results.frames import Results
from wavelab.scenario.loading import Scenario, from_toml
from wavelab.sweep.study import StudyRun

ALGORITHMS = ("cubic", "bbr", "newreno", "wave")
QUICK_ALGORITHMS = ("cubic", "bbr")
FLOWS = (1, 4, 8)
QUICK_FLOWS = (1, 8)
QUEUES = ("drop_tail", "fq_codel")
LOAD_FROM = 10.0
"""Seconds: the figures under load are from here on."""
DEADLINE_MS = 150
"""The voice flow's playout deadline (ITU-T G.114's 150 ms one way)."""

PING, VOICE = 0, 1
"""The flow numbers of the ping and the voice call (the bulk flows follow)."""

TEMPLATE = """
name = "rrul-{algorithm}-{flows}-{queue}"
description = "a ping and a voice call beside {flows} {algorithm} flows, 2Mbit/s / 30ms, {queue}"
duration = "{duration}s"
seed = 1
output = {{ delays = true }}

[[links]]
name = "access"
between = ["sender", "r1"]
rate = "100Mbit/s"
delay = "1ms"

[[links]]
name = "L1"
between = ["r1", "r2"]
rate = "2Mbit/s"
delay = "30ms"
queue = "100pkt"
qdisc = "{queue}"

[[links]]
name = "egress"
between = ["r2", "receiver"]
rate = "100Mbit/s"
delay = "1ms"

[[flows]]
name = "ping"
from = "sender"
to = "receiver"
transport = "ping"
ping = {{ interval = "100ms" }}

[[flows]]
name = "voice"
from = "sender"
to = "receiver"
transport = "udp"
udp = {{ pattern = "voice", playout_deadline = "{deadline}ms" }}

[[flows]]
name = "bulk"
from = "sender"
to = "receiver"
cc = "{algorithm}"
count = {flows}
start = "5s"
{tcp}
"""


def scenario(algorithm: str, flows: int, queue: str, duration: float) -> Scenario:
    """One run: the ping, the voice call and ``flows`` bulk flows of
    ``algorithm`` over L1 with ``queue`` (SACK on except for TCP Wave,
    whose papers describe its loss recovery without it)."""
    tcp = "" if algorithm == "wave" else "tcp = { sack = true }"
    return from_toml(
        TEMPLATE.format(
            algorithm=algorithm,
            flows=flows,
            queue=queue,
            duration=f"{duration:g}",
            deadline=DEADLINE_MS,
            tcp=tcp,
        )
    )


HANDOVER_AT = 30.0
"""Seconds: when the handover variant's link switches (a 2 s outage)."""
OUTAGE = 2.0


def handover_scenario(algorithm: str, queue: str, duration: float) -> Scenario:
    """The handover variant: the ping, the voice call and one bulk flow of
    ``algorithm`` over L2 (8 Mbit/s, 240 ms), which becomes L1 (2 Mbit/s,
    30 ms) after a 2 s outage at 30 s."""
    sc = scenario(algorithm, 1, queue, duration)
    return sc.with_changes(
        {
            "name": f"rrul-handover-{algorithm}-{queue}",
            "links[1].rate": "8Mbit/s",
            "links[1].delay": "240ms",
            "links[1].handovers": [
                {
                    "at": f"{HANDOVER_AT:g}s",
                    "outage": f"{OUTAGE:g}s",
                    "rate": "2Mbit/s",
                    "delay": "30ms",
                }
            ],
        }
    )


def grid(quick: bool) -> dict[str, Scenario]:
    """Every run by name ``<algorithm>-<flows>-<queue>``."""
    algorithms, counts = (QUICK_ALGORITHMS, QUICK_FLOWS) if quick else (ALGORITHMS, FLOWS)
    duration = 20.0 if quick else 60.0
    runs = {
        f"{a}-{n}-{q}": scenario(a, n, q, duration)
        for a in algorithms
        for n in counts
        for q in QUEUES
    }
    handover_end = 45.0 if quick else 60.0
    for a in algorithms:
        for q in QUEUES:
            runs[f"handover-{a}-{q}"] = handover_scenario(a, q, handover_end)
    return runs


def ping_rtts(res: Results) -> pd.Series:
    """The ping's RTT per 100 ms interval (one request each), ms, by time."""
    d = res.delays
    p = d[(d["flow"] == PING) & d["rtt_mean"].notna()]
    return pd.Series(p["rtt_mean"].to_numpy() * 1e3, index=p["time"].to_numpy())


def voice_owds(res: Results) -> pd.Series:
    """The voice call's mean one-way delay per 100 ms interval, ms, by time."""
    d = res.delays
    v = d[(d["flow"] == VOICE) & d["owd_mean"].notna()]
    return pd.Series(v["owd_mean"].to_numpy() * 1e3, index=v["time"].to_numpy())


def measure(runs: Mapping[str, Results]) -> pd.DataFrame:
    """Per run: the ping's RTT idle (before the bulk flows) and under load
    (median, 95th and 99th percentile), the voice call's one-way delay
    under load (median, 99th percentile), its RFC 3550 jitter and the share
    of its packets lost or past the deadline, and the bulk flows' total
    goodput."""
    rows = []
    for name, res in runs.items():
        if name.startswith("handover-"):
            continue
        algorithm, flows, queue = name.rsplit("-", 2)
        rtt = ping_rtts(res)
        idle, load = rtt[rtt.index <= 5.0], rtt[rtt.index > LOAD_FROM]
        owd = voice_owds(res)
        owd = owd[owd.index > LOAD_FROM]
        v = res.flows.iloc[VOICE]
        sent = float(v["packets_sent"])
        bad = float(v["packets_lost"]) + float(v["packets_late"])
        bulk = res.flows.iloc[VOICE + 1 :]
        rows.append(
            {
                "algorithm": algorithm,
                "flows": int(flows),
                "queue": queue,
                "ping_idle_ms": round(float(idle.median()), 1),
                "ping_p50_ms": round(float(load.median()), 1),
                "ping_p95_ms": round(float(load.quantile(0.95)), 1),
                "ping_p99_ms": round(float(load.quantile(0.99)), 1),
                "voice_owd_p50_ms": round(float(owd.median()), 1),
                "voice_owd_p99_ms": round(float(owd.quantile(0.99)), 1),
                "voice_jitter_ms": round(float(v["jitter"]) * 1e3, 2),
                "voice_lost_or_late": round(bad / sent, 4) if sent else float("nan"),
                "bulk_mbps": round(float(bulk["goodput"].sum()) / 1e6, 3),
            }
        )
    return pd.DataFrame(rows)


def measure_handover(runs: Mapping[str, Results]) -> pd.DataFrame:
    """Per handover run: the voice call's median one-way delay in the 10 s
    before the handover, its packets lost (the outage's among them), and in
    the 10 s after the link came back the median and 99th percentile of its
    one-way delay (100 ms means) and the share of its packets late past
    the deadline; and the ping's median RTT in those 10 s."""
    rows = []
    back = HANDOVER_AT + OUTAGE
    for name, res in runs.items():
        if not name.startswith("handover-"):
            continue
        _, algorithm, queue = name.split("-", 2)
        owd = voice_owds(res)
        before = owd[(owd.index > HANDOVER_AT - 10) & (owd.index <= HANDOVER_AT)]
        after = owd[(owd.index > back) & (owd.index <= back + 10)]
        rtt = ping_rtts(res)
        rtt = rtt[(rtt.index > back) & (rtt.index <= back + 10)]
        v = res.flows.iloc[VOICE]
        rows.append(
            {
                "algorithm": algorithm,
                "queue": queue,
                "voice_owd_before_ms": round(float(before.median()), 1),
                "voice_lost": int(v["packets_lost"]),
                "voice_owd_after_p50_ms": round(float(after.median()), 1),
                "voice_owd_after_p99_ms": round(float(after.quantile(0.99)), 1),
                "voice_late_after": round(float((after > DEADLINE_MS).mean()), 3),
                "ping_after_p50_ms": round(float(rtt.median()), 1),
            }
        )
    return pd.DataFrame(rows)


def handover_figure(runs: Mapping[str, Results], out: Path) -> Path:
    """The voice call's one-way delay around the handover, per algorithm,
    one panel per queue."""
    algorithms = [n.split("-", 2)[1] for n in runs if n.startswith("handover-")]
    algorithms = list(dict.fromkeys(algorithms))
    fig, axes = plt.subplots(1, len(QUEUES), figsize=(11, 3.8), sharey=True)
    for ax, q in zip(axes, QUEUES, strict=True):
        for a in algorithms:
            owd = voice_owds(runs[f"handover-{a}-{q}"])
            owd = owd[(owd.index > HANDOVER_AT - 5) & (owd.index <= HANDOVER_AT + 20)]
            ax.plot(owd.index, owd, lw=0.9, label=a, color=algorithm_style(a).color)
        ax.axvspan(HANDOVER_AT, HANDOVER_AT + OUTAGE, color="grey", alpha=0.2, lw=0)
        ax.axhline(DEADLINE_MS, ls=":", color="grey", lw=0.8)
        ax.set(xlabel="time (s)", title=f"{q}: L2 -> L1 at {HANDOVER_AT:g} s")
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("voice one-way delay (ms)")
    axes[0].legend()
    return save(fig, out / "handover_voice.png")


def figures(runs: Mapping[str, Results], table: pd.DataFrame, out: Path) -> list[Path]:
    """As flent draws RRUL: the ping's RTT against time, the CDF of the
    ping's RTT under load, and box plots of it per algorithm (one panel per
    queue each)."""
    files: list[Path] = []
    algorithms = list(dict.fromkeys(table["algorithm"]))
    counts = sorted(set(table["flows"]))
    most = counts[-1]
    # ping RTT over time, the most bulk flows
    fig, axes = plt.subplots(1, len(QUEUES), figsize=(11, 3.8), sharey=True)
    for ax, q in zip(axes, QUEUES, strict=True):
        for a in algorithms:
            rtt = ping_rtts(runs[f"{a}-{most}-{q}"])
            ax.plot(rtt.index, rtt, lw=0.8, label=a, color=algorithm_style(a).color)
        ax.axvline(5.0, ls=":", color="grey", lw=0.8)
        ax.set(xlabel="time (s)", title=f"{q}, {most} bulk flows from 5 s")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("ping RTT (ms)")
    axes[0].legend()
    files.append(save(fig, out / "ping_rtt.png"))
    # CDF of the ping's RTT under load (every reply from LOAD_FROM on)
    fig, axes = plt.subplots(1, len(QUEUES), figsize=(11, 3.8), sharey=True)
    for ax, q in zip(axes, QUEUES, strict=True):
        for a in algorithms:
            for n, ls in zip(counts, ("-", "--", ":"), strict=False):
                rtt = ping_rtts(runs[f"{a}-{n}-{q}"])
                v = np.sort(rtt[rtt.index > LOAD_FROM].to_numpy())
                ax.step(
                    v, np.arange(1, len(v) + 1) / len(v), where="post", ls=ls,
                    color=algorithm_style(a).color, label=f"{a} x{n}",
                )  # fmt: skip
        ax.set(xlabel="ping RTT under load (ms)", title=q, ylim=(0, 1.02))
        ax.set_xscale("log")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("fraction of pings")
    axes[0].legend(fontsize="small", ncol=2)
    files.append(save(fig, out / "ping_cdf.png"))
    # box plots of the ping's RTT under load per algorithm and flow count
    fig, axes = plt.subplots(1, len(QUEUES), figsize=(11, 3.8), sharey=True)
    for ax, q in zip(axes, QUEUES, strict=True):
        data, labels = [], []
        for a in algorithms:
            for n in counts:
                rtt = ping_rtts(runs[f"{a}-{n}-{q}"])
                data.append(rtt[rtt.index > LOAD_FROM].to_numpy())
                labels.append(f"{a}\nx{n}")
        ax.boxplot(data, tick_labels=labels, showfliers=False)
        ax.tick_params(axis="x", labelsize=7)
        ax.set(title=q)
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("ping RTT under load (ms)")
    files.append(save(fig, out / "ping_box.png"))
    # the voice call's one-way delay CDF (the whole run's distribution)
    fig, axes = plt.subplots(1, len(QUEUES), figsize=(11, 3.8), sharey=True)
    for ax, q in zip(axes, QUEUES, strict=True):
        for a in algorithms:
            c = rtt_cdf(runs[f"{a}-{most}-{q}"].owd_distribution, VOICE, "owd")
            ax.step(c["owd"] * 1e3, c["cdf"], where="post", label=a, color=algorithm_style(a).color)
        ax.axvline(DEADLINE_MS, ls=":", color="grey", lw=0.8)
        ax.set(xlabel="voice one-way delay (ms)", title=f"{q}, {most} bulk flows", ylim=(0, 1.02))
        ax.set_xscale("log")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("fraction of voice packets")
    axes[0].legend()
    files.append(save(fig, out / "voice_owd_cdf.png"))
    files.append(handover_figure(runs, out))
    return files


def reproduce(
    out: Path,
    quick: bool,
    jobs: int | None,
    cluster: str | None = None,
    cluster_timeout: float | None = None,
) -> Path:
    """Runs the grid (into ``out/store``, resumable), prints and writes the
    table, draws the figures."""
    out.mkdir(parents=True, exist_ok=True)
    study = {k: StudyRun(sc) for k, sc in grid(quick).items()}
    runs = run_runs("rrul", study, out, jobs, cluster, cluster_timeout).results
    table = measure(runs)
    handover = measure_handover(runs)
    tables = Tables(out)
    tables.csv("rrul.csv", table)
    tables.csv("handover.csv", handover)
    tables.markdown("rrul.md", Markdown().table(table).table(handover))
    figures(runs, table, out)
    with pd.option_context("display.width", 220):
        print(table_text(table))
        print(table_text(handover))
    return out
