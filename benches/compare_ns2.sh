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
# converted), twice: with tracing off, as ns-2 runs, and with the 50 ms
# flow and queue series the benchmark case records. Both count packets the
# same way: data segments the sender sent plus ACKs it received (each crossed
# the bottleneck once, bar the few the outage destroyed); wavelab also prints
# its exact bottleneck count.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats="${1:-5}"

if ! command -v ns >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing Debian's ns2 ..." >&2
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

python3 benches/compare_with.py ns-2.35 "$repeats" "$best_ns" 10
