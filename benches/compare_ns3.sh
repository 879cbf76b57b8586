#!/usr/bin/env bash
# Side-by-side speed of ns-3.44 and wavelab on the speed benchmark's case (a):
# the DCNET 2016 handover path (8 Mbit/s / 240 ms, 100-packet buffer,
# 1000-byte packets), one NewReno flow, a 2 s outage and a switch to
# 2 Mbit/s / 30 ms at 300 s, 360 simulated seconds, no traces in either.
#
#   bash benches/compare_ns3.sh [REPEATS]
#
# Needs a C++ compiler (installs Debian's g++ if missing, as root) and the
# ns-3.44 wheel from PyPI, which it installs into its own virtual environment
# (default ~/.cache/wavelab/ns3-venv, or $WAVELAB_NS3_VENV): the wheel holds
# ns-3's headers and libraries, so our scenario, benches/dcnet_newreno_ns3.cc,
# is compiled against them (once; again when the source changes). Each
# simulator runs REPEATS times (default 3; an ns-3 run takes seconds) and its
# fastest run counts; ns-3's time is that of Simulator::Run, wavelab's that of
# the engine (with tracing off, as ns-3 runs, and with the benchmark case's
# 50 ms series). Both count packets the same way: the IP packets the sender sent
# (data) plus those it received (ACKs).
set -euo pipefail
cd "$(dirname "$0")/.."
repeats="${1:-3}"
venv="${WAVELAB_NS3_VENV:-$HOME/.cache/wavelab/ns3-venv}"

if ! command -v g++ >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing Debian's g++ ..." >&2
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends g++ >/dev/null
    else
        echo "g++ is missing; install it as root: apt-get install g++" >&2
        exit 2
    fi
fi
if [ ! -x "$venv/bin/python" ]; then
    echo "installing ns-3.44 from PyPI into $venv ..." >&2
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import importlib.metadata as m; assert m.version('ns3').startswith('3.44')" 2>/dev/null; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check "ns3==3.44.*"
fi
ns3="$("$venv/bin/python" -c "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('ns').origin) + '/../ns3')")"
ns3="$(cd "$ns3" && pwd)"

src=benches/dcnet_newreno_ns3.cc
bin="$venv/dcnet_newreno_ns3"
if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    echo "compiling $src against ns-3.44 ..." >&2
    g++ -O2 -std=c++20 -I"$ns3/include" "$src" -o "$bin" \
        -L"$ns3/lib64" -Wl,-rpath,"$ns3/lib64" \
        -lns3.44-applications -lns3.44-internet -lns3.44-point-to-point \
        -lns3.44-traffic-control -lns3.44-network -lns3.44-core
fi

best=""
for _ in $(seq "$repeats"); do
    line="$("$bin")"
    best="$(printf '%s\n%s\n' "$best" "$line" | awk 'NF' | sort -g -k3 | head -1)"
done

python3 benches/compare_with.py ns-3.44 "$repeats" "$best"
