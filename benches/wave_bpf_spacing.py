"""The BPF TCP Wave's burst spacing on real packets, measured: how late the
kernel's pacing timer opens bursts, how late the emulator reads them, how
many gaps between bursts are the TxTime at the link, and the emulated flow's
TxTime and goodput beside the sans-IO Wave's.

    python benches/wave_bpf_spacing.py [--repeat 5] [--seconds 20] [--out DIR]

Needs root, /dev/net/tun, BPF with BTF and the loader built (as
``tests/test_wave_bpf_emulated.py``, which asserts what load cannot change:
no burst early, every burst whole, their order). These figures depend on
what else the machine runs, so the load average is printed before and after
each run, and the table gives every figure's median and range over the
runs (docs/algorithms/wave-bpf.md keeps them).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd

from wavelab.emulator import bpf, emulate, unavailable
from wavelab.emulator.bpf_bursts import path_10mbit, spacing_figures
from wavelab.emulator.compare import simulation_of
from wavelab.runner import run as simulate


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("--repeat", type=int, default=5, help="emulated runs (default 5)")
    ap.add_argument("--seconds", type=float, default=20.0, help="each run's length (default 20)")
    ap.add_argument("--out", type=Path, default=Path("results/wave-bpf-spacing"))
    args = ap.parse_args()
    why = unavailable()
    loader = bpf.binary()
    if why is None and loader is None:
        why = "the wavelab-bpf loader is not built (wavelab bpf build)"
    if why is not None:
        print(f"error: {why}", file=sys.stderr)
        return 2
    # the scenario is checked against the loaded program's parameters
    subprocess.run([str(loader), "unload"], capture_output=True, check=True)
    subprocess.run([str(loader), "load"], capture_output=True, check=True)
    rows = []
    try:
        sc = path_10mbit(duration=f"{args.seconds:g}s")
        sim = simulate(simulation_of(sc))
        for k in range(args.repeat):
            before = load()
            emu = emulate(sc)
            f = spacing_figures(emu, sim)
            rows.append({"run": k + 1, **f, "load_before": before, "load_after": load()})
            print(", ".join(f"{n} {v:.4g}" for n, v in f.items()), flush=True)
    finally:
        subprocess.run([str(loader), "unload"], capture_output=True, check=True)
    table = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "runs.csv", index=False)
    figures = table.drop(columns=["run", "load_before", "load_after"])
    summary = pd.DataFrame({"median": figures.median(), "min": figures.min(), "max": figures.max()})
    print()
    print(summary.to_markdown(floatfmt=".4g"))
    print(f"\nload average (1, 5, 15 min): {table['load_before'].iloc[0]} before the first run,")
    print(f"{table['load_after'].iloc[-1]} after the last; runs in {args.out / 'runs.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
