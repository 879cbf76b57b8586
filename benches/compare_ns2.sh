#!/usr/bin/env bash
# Side-by-side speed of ns-2.35 and wavelab on the speed benchmark's case (a):
# the DCNET 2016 handover path (8 Mbit/s / 240 ms, 100-packet buffer,
# 1000-byte packets), one NewReno flow, a 2 s outage and a switch to
# 2 Mbit/s / 30 ms at 300 s, 360 simulated seconds, tracing off in both.
#
#   bash benches/compare_ns2.sh [ROUNDS]
#
# Installs Debian's ns2 if it is missing (needs root and apt-get). The two
# simulators run in ROUNDS interleaved rounds (default 9), ns-2 then wavelab,
# each run a fresh process; the figures are the per-round ratios' median and
# range (benches/compare_with.py), never the fastest run of each side.
# ns-2's time is that of `$ns run` (measured in Tcl, start-up excluded),
# wavelab's that of the engine (the scenario built and run from Python,
# results not converted), twice: with tracing off, as ns-2 runs, and with
# the 50 ms flow and queue series the benchmark case records.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-9}"

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

# what ns-2 this is: the Debian package's version, or the binary's path
build="$(dpkg-query -W -f 'Debian package ns2 ${Version} (${Architecture})' ns2 2>/dev/null ||
    command -v ns)"
python3 benches/compare_with.py --rounds "$rounds" --target 10 \
    --peer ns-2.35 "$build" "ns $PWD/benches/dcnet_newreno.tcl"
