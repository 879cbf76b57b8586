"""The runs behind docs/algorithms/wave-failures.md.

``python scripts/wave_failures.py small-buffers [--figures 13 --instants 5 10 15]``
runs TCP Wave (``rto_samples = "all"`` and ``"karn"``) and the MobiWac 2009
study's regular TCP (NewReno with SACK) on the study's handoffs with 1, 2
and 4 flows, started together or 1 s apart, and prints the medians of the
slowest flow's transfer time (a run that did not reach the transfer counts
as longer than any other). The default grid is the 16 handoffs with a
handoff at 5, 6, ..., 20 s: 6,400 runs, about 17 minutes on one busy core.

``python scripts/wave_failures.py clean-hop [--seeds 5]`` runs the WSC-TCP
study's nearly lossless hop (per-attempt loss 0.001, 60 s) with the three
flows alone, without the study's earlier session, for NewReno and Wave.

``python scripts/wave_failures.py dupack-train`` runs DCNET 2016's six Wave
cells with ``dupack_train = "cut"`` and ``"count"``.
"""

from __future__ import annotations

import argparse
import copy
import tomllib
from typing import Any

import numpy as np
import pandas as pd

from wavelab import analysis
from wavelab.experiments import dcnet2016, mobiwac2009, wsc_tcp
from wavelab.runner import run
from wavelab.scenario.loading import from_dict

STAGGER_S = 1.0
"""Start offset between flows in the staggered runs."""
STARTS = [(1, "sync"), (2, "sync"), (2, "stagger"), (4, "sync"), (4, "stagger")]
TCPS: dict[str, Any] = {
    "Wave, all": {"algorithm": "wave", "rto_samples": "all"},
    "Wave, karn": {"algorithm": "wave", "rto_samples": "karn"},
    "Wave, count": {"algorithm": "wave", "dupack_train": "count"},
    "Wave, count, karn": {"algorithm": "wave", "dupack_train": "count", "rto_samples": "karn"},
    "regular": "newreno",
}


def small_buffer_run(
    h: mobiwac2009.Handoff, at: float, flows: int, start: str, cc: Any
) -> dict[str, Any]:
    """One MobiWac run: the slowest flow's transfer time and the flows' timeouts."""
    data = tomllib.loads(mobiwac2009.scenario_text(h, at, flows, "Wave"))
    f = data["flows"][0]
    f["cc"] = cc
    if start == "stagger":
        f.pop("count")
        data["flows"] = []
        for k in range(flows):
            g = copy.deepcopy(f)
            g["name"] = f"bulk{k}"
            g["start"] = f"{k * STAGGER_S:g}s"
            data["flows"].append(g)
    res = run(from_dict(data))
    ho, fl = res.handoffs, res.flows
    done = int(ho["transfers_done"].iloc[0]) == flows
    return {
        "transfer_s": float(ho["transfer_time"].iloc[0]) if done else np.inf,
        "done": done,
        "rtos": int(fl["rto_expiries"].sum()),
        "srtt_p95": float(fl["rtt_p95"].max()),
    }


def small_buffers(figures: list[int], instants: list[float]) -> pd.DataFrame:
    rows = []
    for h in (h for h in mobiwac2009.handoffs() if h.figure in figures):
        for at in instants:
            for flows, start in STARTS:
                for tcp, cc in TCPS.items():
                    r = small_buffer_run(h, at, flows, start, cc)
                    rows.append(
                        {"figure": h.figure, "flows": flows, "start": start, "tcp": tcp, **r}
                    )
    d = pd.DataFrame(rows)
    table = d.groupby(["flows", "start", "tcp"]).agg(
        runs=("done", "size"),
        median_s=("transfer_s", "median"),
        not_reached=("done", lambda x: int((~x).sum())),
        timeouts=("rtos", "median"),
        rtt_p95_s=("srtt_p95", "median"),
    )
    print(table.round(2).to_markdown())
    m = d.groupby(["figure", "flows", "start", "tcp"])["transfer_s"].median().unstack()
    worse = pd.DataFrame(
        {
            f"{t}: handoffs slower than regular": (m[t] > m["regular"]).groupby(level=[1, 2]).sum()
            for t in TCPS
            if t != "regular"
        }
    )
    print(worse.to_markdown())
    return d


def clean_hop_alone(cc: Any, seed: int) -> dict[str, float]:
    """The WSC-TCP nearly lossless cell's three flows for 60 s, alone."""
    tcp = {"mss": 1000, "sack": False, "delayed_ack": False, "initial_cwnd": 4}
    flows = [
        {"from": "mobile-a", "to": "mobile-b", "cc": cc, "tcp": tcp, "name": f"flow{k}"}
        for k in range(wsc_tcp.FLOWS)
    ]
    links = [
        wsc_tcp._wlan("wlan-a", "mobile-a", "ap1", wsc_tcp.LOSSLESS, "0s"),
        {"name": "wired", "between": ["ap1", "ap2"], "rate": "10Mbit/s", "delay": "25ms"},
        wsc_tcp._wlan("wlan-b", "ap2", "mobile-b", wsc_tcp.LOSSLESS, "27ms"),
    ]
    data = {"name": "clean-hop", "duration": "60s", "seed": seed, "links": links, "flows": flows}
    res = run(from_dict(data))
    f = res.flows
    return {
        "goodput_kbps": float(f["bytes_delivered"].sum()) * 8 / 60 / 1e3,
        "received_twice": float(f["duplicate_segments"].sum()),
        "timeouts": float(f["rto_expiries"].sum()),
        "fast_retransmits": float(f["fast_retransmits"].sum()),
        "queue_drops": float(res.links["dropped_queue"].sum()),
    }


def clean_hop(seeds: int) -> None:
    rows = []
    for tcp, cc in {"NewReno": "newreno", **{k: v for k, v in TCPS.items() if "Wave" in k}}.items():
        for seed in range(1, seeds + 1):
            rows.append({"tcp": tcp, **clean_hop_alone(cc, seed)})
    print(pd.DataFrame(rows).groupby("tcp").mean().round(1).to_markdown())


def dupack_train() -> None:
    """Every Wave cell of DCNET 2016's Table 1 with each duplicate-ACK rule:
    the receiver goodput's recovery time, and for HT = 0.5 s, L2 -> L1, what
    TxTime does during the repair."""
    for direction in dcnet2016.DIRECTIONS:
        for ht in dcnet2016.HTS:
            cell = dcnet2016.Cell("Wave", ht, direction)
            base = run(dcnet2016.baseline_scenario(cell))
            for mode in ("cut", "count"):
                cc = {"algorithm": "wave", "dupack_train": mode}
                res = run(dcnet2016.cell_scenario(cell).with_changes({"flows[0].cc": cc}))
                rec = analysis.recovery(res, base, cell.t0, link_dir=dcnet2016.BOTTLENECK_DIR)
                s = res.series
                repair = s[(s["time"] > cell.t0) & (s["time"] < cell.t0 + 100)]["cc_tx_time"]
                f = res.flows.iloc[0]
                print(
                    f"{direction} HT={ht:g} {mode}: goodput recovery "
                    f"{rec['goodput'].seconds} s; TxTime over the 100 s after the link "
                    f"returns: median {repair.median() * 1e3:.1f} ms; fast retransmissions "
                    f"{int(f['fast_retransmits'])}, timeouts {int(f['rto_expiries'])}"
                )


OPTIONS: dict[str, tuple[dict[str, Any], bool]] = {
    "defaults": ({}, False),
    'dupack_train = "count"': ({"dupack_train": "count"}, False),
    "SACK": ({}, True),
    'rto_samples = "karn"': ({"rto_samples": "karn"}, False),
    '"count" and SACK': ({"dupack_train": "count"}, True),
    '"count", SACK and "karn"': ({"dupack_train": "count", "rto_samples": "karn"}, True),
}
"""Wave's existing options, alone and together: its parameters, and SACK."""


def options() -> None:
    """Every Wave cell of DCNET 2016's Table 1 with each of :data:`OPTIONS`
    (the cell and its baseline both with the option): the receiver
    goodput's recovery time (s)."""
    cells = [dcnet2016.Cell("Wave", ht, d) for d in dcnet2016.DIRECTIONS for ht in dcnet2016.HTS]
    rows = []
    for name, (params, sack) in OPTIONS.items():
        changes = {"flows[0].cc": {"algorithm": "wave", **params}, "flows[0].tcp.sack": sack}
        row: dict[str, Any] = {"options": name}
        for cell in cells:
            res = run(dcnet2016.cell_scenario(cell).with_changes(changes))
            base = run(dcnet2016.baseline_scenario(cell).with_changes(changes))
            rec = analysis.recovery(res, base, cell.t0, link_dir=dcnet2016.BOTTLENECK_DIR)
            row[f"{cell.direction} HT {cell.ht:g}"] = rec["goodput"].seconds
        rows.append(row)
    print(pd.DataFrame(rows).round(2).to_markdown(index=False))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    sb = sub.add_parser("small-buffers")
    sb.add_argument(
        "--figures", type=int, nargs="+", default=[h.figure for h in mobiwac2009.handoffs()]
    )
    sb.add_argument("--instants", type=float, nargs="+", default=[float(k) for k in range(5, 21)])
    ch = sub.add_parser("clean-hop")
    ch.add_argument("--seeds", type=int, default=5)
    sub.add_parser("dupack-train")
    sub.add_parser("options")
    a = p.parse_args()
    if a.what == "small-buffers":
        small_buffers(a.figures, a.instants)
    elif a.what == "clean-hop":
        clean_hop(a.seeds)
    elif a.what == "options":
        options()
    else:
        dupack_train()


if __name__ == "__main__":
    main()
