"""GEO satellite + WLAN (Annese, Celandroni, Davoli, Ferro and Gotta, "TCP
performance measured over heterogeneous wireless networks with high
delay-bandwidth product"; ``wavelab reproduce satwlan``).

Two concurrent flows per trial, one per TCP variant, from the MANET across an
802.11 DCF hop (retry limit 7) to a gateway and over a GEO satellite link
(Table I: 557 ms minimum RTT, 1.2 Mbit/s net, about 1.5 MB of access-router
buffer) to a sink, for 1,600 s. Table II gives per flow the average packet
loss, the mean and median RTT, congestion window and normalised goodput, and
the number of timeouts; Figures 2-4 the transferred data, the goodput and
the cwnd and RTT over time. We add trials the paper has not: CUBIC, BBR and
TCP Wave each against NewReno with SACK on trial 1's channel.

The WLAN channel of each trial is the documented choice of
docs/experiments/satwlan.md, in two forms: ``iid``, per-attempt Bernoulli
loss ``p`` with ``p^8`` equal to the trial's mean Table II loss (the residual
after 7 retries), and ``fading``, a Gilbert-Elliott channel per attempt
(fades of 20 attempts on average that lose every attempt) with the same
residual loss, so that residual losses come in bursts as behind a
threshold-effect MAC; both with exponential on/off outages (mean 4 s down),
as many per 1,600 s as the pair's smaller number of timeouts (the paper
ties every timeout to an outage).

The runs go through the study runner into ``out/store`` (resumable: the
same command again runs only what is missing), each measured where it ran
(:func:`run_metrics`); the store keeps those rows and each run's tables but
its packet log, which only the measurement reads.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from wavelab._util.table_text import table_text
from wavelab.experiments.figures import save
from wavelab.experiments.runs import run_runs
from wavelab.experiments.tables import Markdown, Tables
from wavelab.results.frames import Results
from wavelab.scenario.loading import Scenario, from_dict
from wavelab.sweep.study import StudyOutcome, StudyRun

DURATION = 1600.0
"""Seconds per trial (section III)."""
QUICK_DURATION = 300.0
SEEDS = (1, 2, 3, 4, 5)
QUICK_SEEDS = (1,)
RETRIES = 7
OUTAGE_DOWN = 4.0
"""Mean outage length (s): "the wireless link went down even for several
seconds"; Fig. 4 shows RTT jumps of more than 5 s."""
NET_RATE = 1.2e6
"""Table I's net bandwidth (bit/s): the goodput's normalisation."""
MSS = 1448
"""1500-byte packets with timestamps (Linux 2.6.11's default options)."""
INTERVAL = 0.1
"""Sampling interval of the series (s)."""
GOODPUT_WINDOW = 1.0
"""Window of the goodput samples (s)."""
FADE_ATTEMPTS = 20.0
"""Mean length of a fade of the ``fading`` channel, in attempts (20 to 40 ms
at 802.11b's 1 to 2 ms per attempt: the fade durations of a 2.4 GHz channel
at walking speed, whose Doppler spread is about 8 Hz)."""
CHANNELS = ("iid", "fading")
"""The two WLAN channel models each trial runs on."""
WLAN_DATA_DIR = 0
"""The WLAN's forward direction (the flows' data) in the links table."""

LINUX_2_6: dict[str, Any] = {
    "mss": MSS,
    "timestamps": True,
    "rcv_window": "8MB",
    "rto": "linux",
    "min_rto": "200ms",
    "partial_ack_timer": "slow-but-steady",
}
"""The senders' TCP settings: Linux 2.6.11's (Table I's 8 MB buffers with
window scaling; timestamps; Linux's RTO estimator with TCP_RTO_MIN = 200 ms;
the retransmission timer restarted by every ACK of new data, as
tcp_ack_packets_out does, which is RFC 6582's slow-but-steady NewReno)."""

VARIANTS: dict[str, tuple[str, bool]] = {
    "NewReno": ("newreno", False),
    "NewReno SACK": ("newreno", True),
    "Westwood+": ("westwood", False),
    "Westwood+ SACK": ("westwood", True),
    "CUBIC": ("cubic", True),
    "BBR": ("bbr", True),
    "Wave": ("wave", False),
}
"""Each variant's algorithm and SACK option."""


@dataclass(frozen=True)
class Trial:
    """One trial: two variants sharing the path, and the paper trial whose
    channel it runs on."""

    number: str
    variants: tuple[str, str]
    channel: int

    @property
    def key(self) -> str:
        return f"trial{self.number}"

    def with_model(self, model: str) -> str:
        return f"{self.key}-{model}"


PAPER_TRIALS = (
    Trial("1", ("NewReno", "NewReno SACK"), 1),
    Trial("2", ("Westwood+", "Westwood+ SACK"), 2),
    Trial("3", ("NewReno", "Westwood+"), 3),
    Trial("4", ("NewReno SACK", "Westwood+ SACK"), 4),
)
EXTRA_TRIALS = (
    Trial("X1", ("CUBIC", "NewReno SACK"), 1),
    Trial("X2", ("BBR", "NewReno SACK"), 1),
    Trial("X3", ("Wave", "NewReno SACK"), 1),
)


def paper_table() -> pd.DataFrame:
    """Table II of the paper."""
    text = (
        resources.files("wavelab.experiments")
        .joinpath("data/satellite_wlan_table2.csv")
        .read_text(encoding="utf-8")
    )
    return pd.read_csv(io.StringIO(text))


@dataclass(frozen=True)
class Channel:
    """A trial's WLAN channel: per-attempt loss and outage process."""

    target_loss: float
    attempt_loss: float
    outages: int

    @property
    def up(self) -> float:
        """Mean up time (s) for ``outages`` outages per 1,600 s."""
        return DURATION / max(self.outages, 1)

    def loss(self, model: str) -> dict[str, Any]:
        """The per-attempt loss model: ``iid`` or ``fading``."""
        if model == "iid":
            return {"model": "bernoulli", "p": round(self.attempt_loss, 6)}
        # outside a fade every attempt succeeds, so a fade starts at a
        # frame's first attempt, and a fade of L attempts (geometric, mean
        # 1 / q) loses floor(L / 8) frames back to back: on average
        # sum_m (1 - q)^(8m - 1) = (1 - q)^7 / (1 - (1 - q)^8). With about
        # one attempt per frame outside fades, residual = p_good_bad x that.
        q = 1.0 / FADE_ATTEMPTS
        per_fade = (1.0 - q) ** RETRIES / (1.0 - (1.0 - q) ** (RETRIES + 1))
        return {
            "model": "gilbert_elliott",
            "p_good_bad": round(self.target_loss / per_fade, 8),
            "p_bad_good": q,
            "loss_good": 0.0,
            "loss_bad": 1.0,
        }


def channel(number: int) -> Channel:
    """The channel of paper trial ``number``, from its rows of Table II."""
    t = paper_table()
    rows = t[t["trial"] == number]
    loss = float(rows["avg_packet_loss"].mean())
    return Channel(loss, loss ** (1.0 / (RETRIES + 1)), int(rows["timeouts"].min()))


def trials(quick: bool) -> list[Trial]:
    return list(PAPER_TRIALS) if quick else list(PAPER_TRIALS + EXTRA_TRIALS)


def trial_scenario(
    trial: Trial, seed: int, duration: float = DURATION, model: str = "iid"
) -> Scenario:
    """The scenario of a trial: both flows from the MANET to the sink."""
    ch = channel(trial.channel)
    flows = []
    for v in trial.variants:
        cc, sack = VARIANTS[v]
        flows.append(
            {
                "name": v,
                "from": "manet",
                "to": "sink",
                "cc": cc,
                "tcp": {"sack": sack, **LINUX_2_6},
                "log_packets": True,
            }
        )
    data: dict[str, Any] = {
        "name": f"satwlan-{trial.with_model(model)}-seed{seed}",
        "description": f"Annese et al. trial {trial.number}: {' vs '.join(trial.variants)}",
        "duration": f"{duration:g}s",
        "seed": seed,
        "output": {"interval": f"{INTERVAL:g}s", "queues": False},
        "links": [
            {
                "name": "wlan",
                "between": ["manet", "gateway"],
                "preset": "wlan-dcf",
                "loss": ch.loss(model),
                "outage_process": {"up": f"{ch.up:g}s", "down": f"{OUTAGE_DOWN:g}s"},
            },
            {"name": "satellite", "between": ["gateway", "sink"], "preset": "geo-satellite"},
        ],
        "flows": flows,
    }
    return from_dict(data)


def run_key(trial: Trial, seed: int, model: str) -> str:
    return f"{trial.with_model(model)}-seed{seed}"


# ----- one run: metrics, kept on disk ------------------------------------------


def _timeouts(series: pd.DataFrame) -> pd.DataFrame:
    """Entries into the loss state (a retransmission timeout), per flow."""
    rows = []
    for flow, s in series.groupby("flow"):
        loss = (s["state"].astype(str) == "loss").to_numpy()
        starts = np.flatnonzero(loss & ~np.concatenate(([False], loss[:-1])))
        rows += [(int(str(flow)), float(s["time"].iloc[i])) for i in starts]
    return pd.DataFrame(rows, columns=["flow", "time"])


def flow_metrics(res: Any, duration: float) -> pd.DataFrame:
    """Table II's columns for each flow of a run, and what explains them."""
    series = res.series
    packets = res.packets
    flows = res.flows
    drops = packets[packets["event"].astype(str) == "drop"]
    wlan_drops = drops[(drops["link"] == WLAN_DATA_DIR) & ~drops["is_ack"]]
    outage_drop_times = wlan_drops[wlan_drops["cause"].astype(str) == "outage"]["time"].to_numpy()
    timeouts = _timeouts(series)
    rows = []
    for i, f in flows.iterrows():
        s = series[series["flow"] == i]
        s = s[s["time"] > 0]
        sent = int(f["segments_sent"])
        mine = wlan_drops[wlan_drops["flow"] == i]
        step = round(GOODPUT_WINDOW / INTERVAL)
        delivered = s["bytes_delivered"].to_numpy()[::step]
        goodput = np.diff(delivered) * 8 / GOODPUT_WINDOW / NET_RATE
        rtt = s["rtt"].dropna()
        cwnd = s["cwnd"] / MSS
        t_out = timeouts[timeouts["flow"] == i]["time"].to_numpy()
        # a timeout coincides with an outage if the WLAN destroyed a packet
        # in an outage in the 20 s before it
        near = [
            bool(((outage_drop_times <= t) & (outage_drop_times > t - 20)).any()) for t in t_out
        ]
        rows.append(
            {
                "variant": str(f["name"]),
                "avg_packet_loss": len(mine) / max(sent, 1),
                "outage_loss": int((mine["cause"].astype(str) == "outage").sum()) / max(sent, 1),
                "residual_loss": int((mine["cause"].astype(str) == "random").sum()) / max(sent, 1),
                "queue_loss": int((mine["cause"].astype(str) == "queue").sum()) / max(sent, 1),
                "rtt_mean_s": float(rtt.mean()),
                "rtt_median_s": float(rtt.median()),
                "cwnd_mean_segments": float(cwnd.mean()),
                "cwnd_median_segments": float(cwnd.median()),
                "goodput_norm_mean": float(goodput.mean()),
                "goodput_norm_median": float(np.median(goodput)),
                "timeouts": int(f["rto_expiries"]),
                "timeouts_in_outages": int(sum(near)),
                "loss_state_entries": len(t_out),
                "throughput_norm": int(f["bytes_delivered"]) * 8 / duration / NET_RATE,
            }
        )
    return pd.DataFrame(rows)


def run_metrics(res: Results) -> dict[str, Any]:
    """Table II's columns for each flow of a run (:func:`flow_metrics`) and
    the WLAN's outage, residual-loss and retry counts, computed where the run
    ran: the store keeps these rows and the run's tables but its packet log."""
    m = flow_metrics(res, res.scenario.duration)
    links = res.links
    m["outage_windows_hit"] = int(links["dropped_outage"].iloc[WLAN_DATA_DIR] > 0)
    m["wlan_residual"] = int(links["arq_residual"].iloc[WLAN_DATA_DIR])
    m["wlan_retries"] = int(links["arq_retries"].iloc[WLAN_DATA_DIR])
    # columns and rows: a table keeps its column order in the store's index
    # (whose objects' keys are sorted)
    return {"columns": [str(c) for c in m.columns], "rows": m.to_numpy(dtype=object).tolist()}


REDUCE = "wavelab.experiments.satwlan:run_metrics@2"
""":func:`run_metrics` as the study runner names it (its version goes up
when what it computes changes)."""


# ----- the table ---------------------------------------------------------------

COLUMNS = [
    "avg_packet_loss",
    "rtt_mean_s",
    "rtt_median_s",
    "cwnd_mean_segments",
    "cwnd_median_segments",
    "goodput_norm_mean",
    "goodput_norm_median",
    "timeouts",
]


def collect(plan: dict[str, tuple[Trial, int, str]], done: StudyOutcome) -> pd.DataFrame:
    """Every flow of every run: channel model, trial, seed and the metrics."""
    frames = []
    for key, (trial, seed, model) in plan.items():
        reduced = done.reduced(key)
        m = pd.DataFrame(reduced["rows"], columns=reduced["columns"])
        m.insert(0, "seed", seed)
        m.insert(0, "trial", trial.number)
        m.insert(0, "channel", model)
        frames.append(m)
    return pd.concat(frames, ignore_index=True)


def table(per_run: pd.DataFrame) -> pd.DataFrame:
    """Per trial and variant, the mean over seeds of each metric."""
    extra = [
        "residual_loss",
        "queue_loss",
        "outage_loss",
        "timeouts_in_outages",
        "loss_state_entries",
        "throughput_norm",
    ]
    g = per_run.groupby(["channel", "trial", "variant"], sort=False)[COLUMNS + extra].mean()
    return g.reset_index()


def side_by_side(ours: pd.DataFrame) -> pd.DataFrame:
    """Each Table II cell as "ours / paper" (our extra trials: "ours / -")."""
    paper = paper_table()
    paper["trial"] = paper["trial"].astype(str)
    rows = []
    for _, r in ours.iterrows():
        p = paper[(paper["trial"] == r["trial"]) & (paper["variant"] == r["variant"])]
        row = {"channel": r["channel"], "trial": r["trial"], "variant": r["variant"]}
        for c in COLUMNS:
            theirs = f"{float(p[c].iloc[0]):.3g}" if len(p) else "-"
            row[c] = f"{r[c]:.3g} / {theirs}"
        rows.append(row)
    return pd.DataFrame(rows)


def ratios(ours: pd.DataFrame) -> pd.DataFrame:
    """ours / paper for every cell of the paper's trials (beyond 2x in
    either direction is what docs/experiments/satwlan.md explains)."""
    paper = paper_table()
    paper["trial"] = paper["trial"].astype(str)
    merged = ours.merge(paper, on=["trial", "variant"], suffixes=("", "_paper"))
    out = merged[["channel", "trial", "variant"]].copy()
    for c in COLUMNS:
        out[c] = merged[c] / merged[f"{c}_paper"]
    return out


def shape_checks(all_channels: pd.DataFrame) -> pd.DataFrame:
    """The study's shape, as the paper describes it, on each channel model:
    timeouts coincide with WLAN outages (the paper ties every timeout to
    one); SACK improves NewReno's (and Westwood+'s) normalised goodput under
    the heavier losses of trials 1-2."""
    frames = []
    for model, ours in all_channels.groupby("channel", sort=False):
        c = _shape_checks(ours)
        c.insert(0, "channel", model)
        frames.append(c)
    return pd.concat(frames, ignore_index=True)


def _shape_checks(ours: pd.DataFrame) -> pd.DataFrame:

    def cell(trial: str, variant: str, col: str) -> float:
        r = ours[(ours["trial"] == trial) & (ours["variant"] == variant)]
        return float(r[col].iloc[0]) if len(r) else float("nan")

    paper_rows = ours[ours["trial"].isin(["1", "2", "3", "4"])]
    entries = float(paper_rows["loss_state_entries"].sum())
    near = float(paper_rows["timeouts_in_outages"].sum())
    share = near / entries if entries else float("nan")
    checks = [
        ("timeouts within 20 s after an outage loss (share)", share, share >= 0.8),
        (
            "trial 1: NewReno SACK / NewReno mean goodput",
            cell("1", "NewReno SACK", "goodput_norm_mean")
            / cell("1", "NewReno", "goodput_norm_mean"),
            cell("1", "NewReno SACK", "goodput_norm_mean")
            > cell("1", "NewReno", "goodput_norm_mean"),
        ),
        (
            "trial 2: Westwood+ SACK / Westwood+ mean goodput",
            cell("2", "Westwood+ SACK", "goodput_norm_mean")
            / cell("2", "Westwood+", "goodput_norm_mean"),
            cell("2", "Westwood+ SACK", "goodput_norm_mean")
            > cell("2", "Westwood+", "goodput_norm_mean"),
        ),
    ]
    return pd.DataFrame(checks, columns=["check", "value", "holds"])


# ----- figures -----------------------------------------------------------------


SERIES = ["time", "flow", "bytes_delivered", "cwnd", "rtt", "state"]
"""The columns of the series the figures draw."""


def figures(done: StudyOutcome, out: Path, seed: int, model: str) -> list[Path]:
    """Figures 2-4 of the paper from the paper trials' runs with ``seed`` on
    channel ``model``."""

    def flows(trial: Trial) -> list[tuple[str, pd.DataFrame]]:
        """Each flow's name and series in the trial's run."""
        path = done.run_dir(run_key(trial, seed, model)) / "series.parquet"
        s = pd.read_parquet(path, columns=SERIES)
        return [(name, s[s["flow"] == i]) for i, name in enumerate(trial.variants)]

    files = []
    fig, ax = plt.subplots(figsize=(7, 4))
    for trial in PAPER_TRIALS[:2]:
        for name, f in flows(trial):
            ax.plot(f["time"], f["bytes_delivered"] / 1e6, label=name)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("transferred data (MB)")
    ax.set_title("Fig. 2: transferred data, trials 1 and 2")
    ax.legend()
    files.append(save(fig, out / f"fig2_transferred_{model}.png"))

    fig, axes = plt.subplots(4, 1, figsize=(8, 10), sharex=True)
    for ax, trial in zip(axes, PAPER_TRIALS, strict=True):
        for name, f in flows(trial):
            d = f["bytes_delivered"].to_numpy()[:: int(GOODPUT_WINDOW / INTERVAL)]
            t = f["time"].to_numpy()[:: int(GOODPUT_WINDOW / INTERVAL)]
            ax.plot(t[1:], np.diff(d) * 8 / GOODPUT_WINDOW / 1e3, label=name, lw=0.7)
        ax.set_ylabel("goodput (kbit/s)")
        ax.set_title(f"trial {trial.number}", fontsize=9)
        ax.legend(fontsize=8)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle(f"Fig. 3: goodput of the two flows ({GOODPUT_WINDOW:g} s windows)")
    files.append(save(fig, out / f"fig3_goodput_{model}.png"))

    fig, axes = plt.subplots(4, 2, figsize=(11, 10), sharex=True)
    for row, trial in zip(axes, PAPER_TRIALS, strict=True):
        for name, f in flows(trial):
            row[0].plot(f["time"], f["cwnd"] / MSS, label=name, lw=0.7)
            row[1].plot(f["time"], f["rtt"], label=name, lw=0.7)
        row[0].set_ylabel("cwnd (segments)")
        row[1].set_ylabel("RTT (s)")
        row[0].set_title(f"trial {trial.number}", fontsize=9)
        row[0].legend(fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    fig.suptitle("Fig. 4: congestion window and RTT")
    files.append(save(fig, out / f"fig4_cwnd_rtt_{model}.png"))
    return files


# ----- the study -----------------------------------------------------------------


def plan(quick: bool) -> tuple[dict[str, Scenario], dict[str, tuple[Trial, int, str]], float]:
    """Every run: per channel model, trial and seed (``--quick``: 300 s, one
    seed, the paper's trials)."""
    duration = QUICK_DURATION if quick else DURATION
    seeds = QUICK_SEEDS if quick else SEEDS
    scenarios: dict[str, Scenario] = {}
    which: dict[str, tuple[Trial, int, str]] = {}
    for model in CHANNELS:
        for trial in trials(quick):
            for seed in seeds:
                key = run_key(trial, seed, model)
                scenarios[key] = trial_scenario(trial, seed, duration, model)
                which[key] = (trial, seed, model)
    return scenarios, which, duration


def reproduce(
    out: Path,
    quick: bool,
    jobs: int | None,
    cluster: str | None = None,
    cluster_timeout: float | None = None,
) -> Path:
    """Runs the study (into ``out/store``, resumable), prints and writes our
    Table II beside the paper's, the shape checks, and Figures 2-4."""
    out.mkdir(parents=True, exist_ok=True)
    scenarios, which, duration = plan(quick)
    # each run is measured where it ran; its packet log stays there
    study = {k: StudyRun(sc, drop=("packets",), reduce=REDUCE) for k, sc in scenarios.items()}
    done = run_runs("satwlan", study, out, jobs, cluster, cluster_timeout)
    per_run = collect(which, done)
    ours = table(per_run)
    wide = side_by_side(ours)
    r = ratios(ours)
    checks = shape_checks(ours)
    channels = pd.DataFrame(
        [
            {
                "trial": n,
                "target_loss": c.target_loss,
                "attempt_loss": c.attempt_loss,
                "outages_per_1600s": c.outages,
                "mean_up_s": c.up,
                "mean_down_s": OUTAGE_DOWN,
            }
            for n in (1, 2, 3, 4)
            for c in [channel(n)]
        ]
    )
    seeds = sorted({s for _, s, _ in which.values()})
    md = (
        Markdown()
        .lines("# Annese et al., Table II: ours / paper")
        .lines(
            f"{duration:g} s per trial, mean over seeds {seeds}; trials X1-X3 are ours;",
            "channel iid: independent per-attempt loss; fading: Gilbert-Elliott fades.",
        )
        .table(wide)
        .lines("## ours / paper")
        .table(r, floatfmt=".2f")
        .lines("## What explains the numbers (means over seeds)")
        .table(ours, floatfmt=".3g")
        .lines("## The WLAN channel of each trial")
        .table(channels, floatfmt=".3g")
        .lines("## Shape checks")
        .table(checks, floatfmt=".3g")
    )
    tables = Tables(out)
    tables.csv("flows.csv", per_run)
    tables.csv("table2.csv", ours)
    tables.markdown("table2.md", md)
    for model in CHANNELS:
        figures(done, out, seeds[0], model)
    with pd.option_context("display.width", 220, "display.max_columns", 30):
        print(f"Table II, ours / paper ({duration:g} s, seeds {seeds})")
        print(table_text(wide))
        print("\nours / paper")
        print(table_text(r, digits=3))
        print("\nShape checks")
        print(table_text(checks, digits=3))
    return out
