#!/usr/bin/env bash
# Side-by-side speed of ns-2.35 and wavelab on the speed benchmark's case (a):
# the DCNET 2016 handover path (8 Mbit/s / 240 ms, 100-packet buffer,
# 1000-byte packets), one NewReno flow, a 2 s outage and a switch to
# 2 Mbit/s / 30 ms at 300 s, 360 simulated seconds, tracing off in both.
#
#   bash benches/compare_ns2.sh [REPEATS]
#
# Installs Debian's ns2 if it is missing (needs root and apt-get). Each
# simulator runs REPEATS times (default 5) and its fastest run counts; ns-2's
# time is that of `$ns run` (measured in Tcl, start-up excluded), wavelab's
# that of the engine (the scenario built and run from Python, results not
# converted). Both count packets the same way: data segments the sender sent
# plus ACKs it received (each crossed the bottleneck once, bar the few the
# outage destroyed); wavelab also prints its exact bottleneck count.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats="${1:-5}"

if ! command -v ns >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing Debian's ns2 ..."
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ns2 >/dev/null
    else
        echo "ns (Debian package ns2) is missing; install it as root: apt-get install ns2" >&2
        exit 2
    fi
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
best_ns=""
for _ in $(seq "$repeats"); do
    # ns-2 writes nothing but our line; run it where stray files cannot land
    line="$(cd "$tmp" && ns "$OLDPWD/benches/dcnet_newreno.tcl")"
    best_ns="$(printf '%s\n%s\n' "$best_ns" "$line" | awk 'NF' | sort -g -k3 | head -1)"
done

python3 - "$repeats" "$best_ns" <<'PY'
import sys

from wavelab.bench import CASES, run_here
from wavelab.runner import run
from wavelab.scenario import from_dict

repeats = int(sys.argv[1])
ns = sys.argv[2].split()
ns_fig = dict(zip(ns[1::2], ns[2::2], strict=True))
ns_wall = float(ns_fig["wall_s"])
ns_packets = int(ns_fig["data_sent"]) + int(ns_fig["acks_received"])

case = CASES["dcnet-newreno"][1]()
wall = min(run_here("dcnet-newreno", case).wall_s for _ in range(repeats))
res = run(from_dict(case))
flow = res.flows.iloc[0]
wl_packets = int(flow["segments_sent"]) + int(flow["acks_received"])
links = res.links
bottleneck = int(links.loc[links["link"] == "bottleneck", "sent_packets"].sum())

rows = [
    ("", "wall s", "data sent", "ACKs rcvd", "packets", "packets/wall-s"),
    ("ns-2.35", f"{ns_wall:.4f}", ns_fig["data_sent"], ns_fig["acks_received"],
     f"{ns_packets:,}", f"{ns_packets / ns_wall / 1e6:.2f} M"),
    ("wavelab", f"{wall:.4f}", str(int(flow["segments_sent"])), str(int(flow["acks_received"])),
     f"{wl_packets:,}", f"{wl_packets / wall / 1e6:.2f} M"),
]
widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
for r in rows:
    print("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))
print(f"wavelab bottleneck transmissions (both directions): {bottleneck:,}")
ratio = (wl_packets / wall) / (ns_packets / ns_wall)
print(f"packets per wall-second, wavelab / ns-2.35: {ratio:.1f}x (target >= 10x)")
print(f"wall time, ns-2.35 / wavelab: {ns_wall / wall:.1f}x")
PY
