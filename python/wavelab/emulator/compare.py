"""Simulation and emulation of one scenario side by side (``wavelab compare``).

Per flow: goodput, RTT (minimum and mean smoothed), retransmissions, RTO
expiries, completion time, and after each handover the recovery time (the
DCNET 2016 metric of :mod:`wavelab.analysis.handover_recovery`: the goodput over a 1 s window,
counted from the end of the outage, first reaching 90 % of the rate the same
run reached on the new link, measured over the second half of the time after
the handover). One figure per flow draws both runs' goodput, window and
smoothed RTT on one time axis.

The kernel's congestion controls are compared with wavelab's model of them
(:data:`MODEL`): Linux's ``reno`` module is Reno's window growth, and the
kernel's loss recovery around it is NewReno's (RFC 6582) or, with SACK, RFC
6675's, which is what wavelab's ``newreno`` does.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from wavelab._util.files import write_atomically
from wavelab.analysis import handover_recovery as analysis
from wavelab.errors import WavelabError
from wavelab.plot.figure_files import save_figure
from wavelab.plot.style import OKABE_ITO
from wavelab.results.frames import Results
from wavelab.scenario.loading import Scenario, from_dict

MODEL = {"reno": "newreno", "cubic": "cubic", "bbr": "bbr", "wave": "wave"}
"""wavelab's algorithm for each kernel congestion control it models."""


def _cc_name(cc: Any) -> str:
    if isinstance(cc, str):
        return cc
    if isinstance(cc, dict):
        return str(cc.get("algorithm", ""))
    return ""


def simulation_of(sc: Scenario) -> Scenario:
    """The simulator's form of an emulation scenario: each flow's kernel
    congestion control replaced by wavelab's model of it (:data:`MODEL`)."""
    data = copy.deepcopy(sc.data)
    for i, f in enumerate(data.get("flows", [])):
        if "cmd" in f:
            raise WavelabError(f"flows[{i}].cmd: a flow that runs a command has no simulation")
        if f.get("transport", "tcp") != "tcp":
            continue  # UDP and ping flows: the same datagrams on both clocks
        name = _cc_name(f.get("cc", "newreno"))
        if name not in MODEL:
            raise WavelabError(
                f"flows[{i}].cc: the kernel's {name!r} has no wavelab model "
                f"(modelled: {', '.join(MODEL)})"
            )
        cc = f.get("cc", "newreno")
        # a table keeps its parameters (the BPF TCP Wave's variant and
        # overrides are the simulated Wave's)
        f["cc"] = {**cc, "algorithm": MODEL[name]} if isinstance(cc, dict) else MODEL[name]
    return from_dict(data, sc.source, folder=sc.folder)


def _mean(values: pd.Series) -> float:
    v = values.to_numpy(dtype=float)
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else float("nan")


def _late_median(s: pd.DataFrame, col: str) -> float:
    """The median of column ``col`` over the second half of a flow's series
    (NaN if the series has no such column or no values there)."""
    if col not in s.columns or s.empty:
        return float("nan")
    t = s["time"].to_numpy(dtype=float)
    v = s[col].to_numpy(dtype=float)[t >= t.max() / 2]
    v = v[~np.isnan(v)]
    return float(np.median(v)) if len(v) else float("nan")


def flow_figures(res: Results) -> pd.DataFrame:
    """One row per flow: goodput (Mbit/s), minimum and mean smoothed RTT
    (ms), retransmissions, RTO expiries, completion time (s), for TCP
    Wave the median TxTime over the second half of the run (ms; NaN for
    other algorithms), and its data packets' one-way delay (median and 95th
    percentile, ms), loss (the share of those sent that a link dropped) and
    jitter (ms)."""
    rows = []
    for _, f in res.flows.iterrows():
        s = res.series[res.series["flow"] == f["flow"]]
        rows.append(
            {
                "flow": str(f["name"]),
                "goodput_mbps": float(f["goodput"]) / 1e6,
                "min_rtt_ms": float(f["min_rtt"]) * 1e3,
                "mean_srtt_ms": _mean(s["srtt"]) * 1e3,
                "retransmissions": _float(f["retransmissions"]),
                "rto_expiries": _float(f["rto_expiries"]),
                "completion_s": float(f["completion_time"]),
                "tx_time_ms": _late_median(s, "cc_tx_time") * 1e3,
                # the data packets at the network (both clocks count them
                # there: the simulator's links, the emulator's wire thread)
                "owd_p50_ms": _float(f.get("owd_p50")) * 1e3,
                "owd_p95_ms": _float(f.get("owd_p95")) * 1e3,
                "packet_loss": _ratio(f.get("packets_lost"), f.get("packets_sent")),
                "jitter_ms": _float(f.get("jitter")) * 1e3,
            }
        )
    return pd.DataFrame(rows)


def _float(x: Any) -> float:
    return float("nan") if x is None or pd.isna(x) else float(x)


def _ratio(a: Any, b: Any) -> float:
    """``a / b`` (NaN if either is missing or ``b`` is 0)."""
    x, y = _float(a), _float(b)
    return x / y if y > 0 else float("nan")


def handovers(res: Results) -> list[tuple[str, float, float]]:
    """(link, time, outage) of every handover that happened."""
    h = res.handovers
    if h.empty:
        return []
    return [
        (str(r["link"]), float(r["time"]), float(r["outage"]))
        for _, r in h.iterrows()
        if not np.isnan(float(r["time"]))
    ]


def recovery_times(res: Results) -> pd.DataFrame:
    """One row per flow and handover: the recovery time (s, NaN if not
    recovered) of the goodput and of the sender's rate, and the rate it
    recovers to (Mbit/s)."""
    rows = []
    end = float(res.series["time"].max()) if len(res.series) else 0.0
    for link, t, outage in handovers(res):
        t0 = t + outage
        for _, f in res.flows.iterrows():
            flow = int(f["flow"])
            row: dict[str, Any] = {"flow": str(f["name"]), "link": link, "handover_s": t}
            for metric in ("goodput", "sender"):
                c = analysis.cumulative(res, metric, flow)
                after = c[c.index >= t0 + (end - t0) / 2]
                if len(after) < 2 or end <= t0:
                    row[f"{metric}_recovery_s"] = float("nan")
                    continue
                r_ss = analysis.steady_rate(after)
                rec = analysis.recovery_time(c, t0, r_ss)
                row[f"{metric}_recovery_s"] = float("nan") if rec.seconds is None else rec.seconds
                if metric == "goodput":
                    row["r_ss_mbps"] = r_ss / 1e6
            rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Comparison:
    """The two runs' figures, side by side."""

    table: pd.DataFrame
    """One row per flow and figure: simulation, emulation, their ratio."""
    flagged: str | None
    """Why the emulation's timings are not to be trusted, if they are not."""


def compare(sim: Results, emu: Results) -> Comparison:
    """The figures of a simulation and an emulation of one scenario."""
    a, b = flow_figures(sim), flow_figures(emu)
    rows = []
    for (_, x), (_, y) in zip(a.iterrows(), b.iterrows(), strict=False):
        for col in a.columns[1:]:
            if np.isnan(x[col]) and np.isnan(y[col]):
                continue  # a figure the flow does not have (TxTime: not Wave; TCP's: UDP)
            rows.append(_row(str(x["flow"]), col, float(x[col]), float(y[col])))
    ra, rb = recovery_times(sim), recovery_times(emu)
    for (_, x), (_, y) in zip(ra.iterrows(), rb.iterrows(), strict=False):
        for col in ("goodput_recovery_s", "sender_recovery_s", "r_ss_mbps"):
            name = f"{col} ({x['link']} at {x['handover_s']:g} s)"
            rows.append(_row(str(x["flow"]), name, float(x[col]), float(y[col])))
    rows += discipline_rows(sim, emu)
    e = emu.run.get("emulation", {})
    flagged = None
    if e.get("flagged"):
        flagged = (
            f"the emulation's lateness exceeded its bound (p99 {e['lateness_p99'] * 1e6:.0f} us "
            f"> {e['lateness_bound'] * 1e6:.0f} us): its timings are not the scenario's"
        )
    if not emu.complete or not sim.complete:
        flagged = (flagged + "; " if flagged else "") + "a run was interrupted"
    return Comparison(pd.DataFrame(rows), flagged)


def discipline_figures(res: Results) -> dict[str, dict[str, float]]:
    """Per link direction that a queue discipline runs (``link:direction``):
    the packets it marked CE and dropped, and the mean sojourn over the
    queue series' samples (ms)."""
    q = res.queues
    if q.empty or "sojourn" not in q:
        return {}
    rows = {int(r["dir"]): r for _, r in res.links.iterrows()}
    out = {}
    for d, part in q.groupby("dir", sort=True):
        if not part["sojourn"].notna().any():
            continue  # drop-tail
        row = rows[int(str(d))]
        out[f"{row['link']}:{row['direction']}"] = {
            "marked": _float(row["marked"]),
            "dropped_aqm": _float(row["dropped_aqm"]),
            "mean_sojourn_ms": _mean(part["sojourn"]) * 1e3,
        }
    return out


def discipline_rows(sim: Results, emu: Results) -> list[dict[str, Any]]:
    """The rows of :func:`discipline_figures` of both runs, the direction in
    the ``flow`` column."""
    a, b = discipline_figures(sim), discipline_figures(emu)
    return [
        _row(name, fig, a[name][fig], b[name][fig]) for name in a if name in b for fig in a[name]
    ]


def _row(flow: str, figure: str, sim: float, emu: float) -> dict[str, Any]:
    ratio = emu / sim if sim and not np.isnan(sim) and not np.isnan(emu) else float("nan")
    return {"flow": flow, "figure": figure, "simulation": sim, "emulation": emu, "ratio": ratio}


def _panel_series(res: Results, flow: int) -> pd.DataFrame:
    s = res.series[res.series["flow"] == flow].sort_values("time")
    g = res.goodput()
    g = g[g["flow"] == flow]
    return s.merge(g[["time", "goodput"]], on="time", how="left")


def plot_flow(sim: Results, emu: Results, flow: int, path: Path, title: str) -> Path:
    """Writes :func:`flow_figure` to ``path``."""
    fig = flow_figure(sim, emu, flow, title)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)
    return path


def flow_figure(sim: Results, emu: Results, flow: int, title: str) -> Figure:
    """Goodput, congestion window and smoothed RTT of one flow in both runs."""
    fig, axes = plt.subplots(3, 1, figsize=(9, 7.5), sharex=True)
    mss = float(emu.scenario.normalized["flows"][0]["tcp"]["mss"])
    # the two sides in the palette's colours, told apart by line style too
    sides = (
        (sim, "simulation", "-", OKABE_ITO["blue"]),
        (emu, "emulation", "--", OKABE_ITO["vermillion"]),
    )
    for res, label, style, colour in sides:
        s = _panel_series(res, flow)
        t = s["time"].to_numpy(dtype=float)
        kw: dict[str, Any] = {"lw": 1, "label": label, "color": colour}
        axes[0].plot(t, s["goodput"].to_numpy(dtype=float) / 1e6, style, **kw)
        axes[1].plot(t, s["cwnd"].to_numpy(dtype=float) / mss, style, **kw)
        axes[2].plot(t, s["srtt"].to_numpy(dtype=float) * 1e3, style, **kw)
    for _, t0, outage in handovers(emu):
        for ax in axes:
            ax.axvspan(t0, t0 + max(outage, 0.05), color="grey", alpha=0.2)
    axes[0].set_ylabel("goodput (Mbit/s)")
    axes[1].set_ylabel("cwnd (segments)")
    axes[2].set_ylabel("srtt (ms)")
    axes[2].set_xlabel("time (s)")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].legend(loc="best", fontsize=8)
    axes[0].set_title(title)
    return fig


def write(sim: Results, emu: Results, out: Path) -> tuple[Comparison, list[Path]]:
    """Compares the runs and writes ``compare.csv``, ``compare.md`` and one
    figure per flow to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    c = compare(sim, emu)
    files = [out / "compare.csv", out / "compare.md"]
    write_atomically(files[0], c.table.to_csv(index=False).encode())
    md = [f"# {emu.scenario.name}: simulation and emulation", ""]
    if c.flagged:
        md += [f"**Warning**: {c.flagged}.", ""]
    e = emu.run.get("emulation", {})
    if e:
        md += [
            f"Emulation: lateness p50 {e['lateness_p50'] * 1e6:.1f} us, "
            f"p99 {e['lateness_p99'] * 1e6:.1f} us, p99.9 {e['lateness_p999'] * 1e6:.1f} us, "
            f"max {e['lateness_max'] * 1e6:.0f} us over {e['releases']:,} releases; "
            f"kernel {e['kernel']}, load {e['loadavg']}.",
            "",
        ]
    md += [c.table.to_markdown(index=False, floatfmt=".4g"), ""]
    write_atomically(files[1], "\n".join(md).encode())
    for _, f in emu.flows.iterrows():
        name = str(f["name"])
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
        files.append(
            plot_flow(
                sim,
                emu,
                int(f["flow"]),
                out / f"flow-{safe}.png",
                f"{emu.scenario.name}, flow {name}: simulation (line) and emulation (dashes)",
            )
        )
    return c, files
