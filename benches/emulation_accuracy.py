"""The emulator's accuracy, measured: release lateness, achieved rate, RTT
against twice the delay, and a delay change that does not reorder.

    python benches/emulation_accuracy.py [--seconds 10] [--repeat 3] [--out DIR]

Needs root (as `wavelab emulate`). For each link rate (10, 100, 1000
Mbit/s), with and without real-time priority, one Linux CUBIC flow
saturates a link of 5 ms one-way delay and a queue of twice the
bandwidth-delay product for `--seconds`; every run's figures are printed
and the median run of each case goes in the table (docs/emulation.md keeps
them). The machine's load average is printed before and after: the
figures depend on what else runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wavelab.emulator import emulate, unavailable
from wavelab.scenario import from_toml

RATES = (10, 100, 1000)
DELAY = 5e-3


def link(rate_mbps: int, seconds: float, extra: str = "") -> str:
    bdp = rate_mbps * 1e6 * 2 * DELAY / 8 / 1500
    queue = max(20, int(2 * bdp))
    return f"""
name = "accuracy-{rate_mbps}"
duration = "{seconds}s"
[[links]]
name = "path"
between = ["a", "b"]
rate = "{rate_mbps}Mbit/s"
delay = "{DELAY * 1e3:g}ms"
queue = "{queue}pkt"
{extra}
[[flows]]
name = "bulk"
from = "a"
to = "b"
cc = "cubic"
tcp = {{ min_rto = "200ms" }}
"""


def figures(res: Any, rate: float) -> dict[str, float]:
    e = res.run["emulation"]
    r = res.releases
    d0 = r[r["dir"] == 0]
    planned = d0["time"].to_numpy()
    actual = planned + d0["lateness"].to_numpy()
    size = d0["size"].to_numpy()
    half = planned >= planned[-1] / 2
    achieved = size[half].sum() * 8 / (actual[half][-1] - actual[half][0])
    s = res.series
    t = s["time"].to_numpy()
    b = s["bytes_delivered"].to_numpy()
    h = t >= t[-1] / 2
    goodput = (b[-1] - b[h][0]) * 8 / (t[-1] - t[h][0])
    return {
        "p50_us": e["lateness_p50"] * 1e6,
        "p99_us": e["lateness_p99"] * 1e6,
        "p999_us": e["lateness_p999"] * 1e6,
        "max_us": e["lateness_max"] * 1e6,
        "achieved_rate": achieved / rate,
        "goodput_of_capacity": goodput / (rate * 1460 / 1500),
        "rtt_over_2d_us": (float(res.flows["min_rtt"].iloc[0]) - 2 * DELAY) * 1e6,
        "demotions": e["realtime_demotions"],
        "realtime": e["realtime"] is not None,
    }


DELAY_CHANGE = """
name = "delay-change"
duration = "{seconds}s"
[[links]]
name = "path"
between = ["a", "b"]
rate = "20Mbit/s"
delay = "60ms"
queue = "20pkt"
schedule = [{{ at = "2s", delay = "5ms" }}]
[[flows]]
name = "bulk"
from = "a"
to = "b"
cc = "cubic"
log_packets = true
"""


def delay_change(seconds: float) -> dict[str, int]:
    """A 60 ms -> 5 ms delay change at 2 s on a 20 Mbit/s link: the releases
    stay in order, and the receiver gets every new segment in order."""
    res = emulate(from_toml(DELAY_CHANGE.format(seconds=seconds), emulation=True))
    r = res.releases[res.releases["dir"] == 0]
    actual = (r["time"] + r["lateness"]).to_numpy()
    log = res.packets
    got = log[(log["event"] == "deliver") & (log["kind"] == "data")]["seq"].to_numpy()
    return {
        "releases": len(actual),
        "releases_out_of_order": int((np.diff(actual) < 0).sum()),
        "new_segments_out_of_order": int((np.diff(got) <= 0).sum()),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("results/emulation-accuracy"))
    args = ap.parse_args()
    why = unavailable()
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    rows = []
    for rate in RATES:
        for realtime in (True, False):
            runs = []
            for _ in range(args.repeat):
                res = emulate(
                    from_toml(link(rate, args.seconds), emulation=True), realtime=realtime
                )
                f = figures(res, rate * 1e6)
                print(f"{rate} Mbit/s realtime={realtime}: {f}", flush=True)
                runs.append(f)
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "realtime"}
            rows.append({"rate_mbps": rate, "realtime": realtime, **med})
    table = pd.DataFrame(rows)
    change = delay_change(args.seconds)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "accuracy.csv", index=False)
    print()
    print(table.to_markdown(index=False, floatfmt=".4g"))
    print(f"\ndelay change 60 ms -> 5 ms at 2 s: {change}")
    print(f"load average before {' '.join(load_before)}, after {' '.join(load_after)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
