#!/usr/bin/env bash
# Side-by-side speed of ns-3.44 and wavelab on the speed benchmark's case (a):
# the DCNET 2016 handover path (8 Mbit/s / 240 ms, 100-packet buffer,
# 1000-byte packets), one NewReno flow, a 2 s outage and a switch to
# 2 Mbit/s / 30 ms at 300 s, 360 simulated seconds, no traces in either.
#
#   bash benches/compare_ns3.sh [ROUNDS]
#   WAVELAB_NS3_BUILD=DIR bash benches/compare_ns3.sh [ROUNDS]
#
# Two ns-3 builds can take part:
#
# * the ns-3.44 wheel from PyPI (always), installed into its own virtual
#   environment (default ~/.cache/wavelab/ns3-venv, or $WAVELAB_NS3_VENV). It
#   holds ns-3's headers and libraries, built with NS_ASSERT and NS_LOG
#   compiled in, which ns-3's `optimized` profile leaves out;
# * an ns-3.44 build of ns-3's `optimized` profile, if $WAVELAB_NS3_BUILD
#   names its output directory (the one holding include/ns3 and lib/). This
#   script does not build ns-3: make that build with ns-3's own tools and
#   instructions (its source from nsnam.org or ns-3's public git
#   repository); it needs the core, network, internet, point-to-point,
#   applications and traffic-control modules and no others. Without it the
#   script says so and compares with the wheel alone.
#
# Our scenario, benches/dcnet_newreno_ns3.cc, is compiled against each build
# with g++ -O2 (once, and again when the source or the build changes; the
# binaries are cached in the virtual environment). Needs a C++ compiler
# (installs Debian's g++ if missing, as root). The simulators run in ROUNDS
# interleaved rounds (default 9; an ns-3 run takes seconds), each run a fresh
# process; the figures are the per-round ratios' median and range
# (benches/compare_with.py), never the fastest run of each side. ns-3's time
# is that of Simulator::Run, wavelab's that of the engine (with tracing off,
# as ns-3 runs, and with the benchmark case's 50 ms series). Both count
# packets the same way: the IP packets the sender sent (data) plus those it
# received (ACKs).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-9}"
venv="${WAVELAB_NS3_VENV:-$HOME/.cache/wavelab/ns3-venv}"
optimized="${WAVELAB_NS3_BUILD:-}"

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
wheel_version="$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('ns3'))")"
wheel="$("$venv/bin/python" -c "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('ns').origin) + '/../ns3')")"
wheel="$(cd "$wheel" && pwd)"

src=benches/dcnet_newreno_ns3.cc
modules="applications internet point-to-point traffic-control network core"

# The library directory of an ns-3 build or install (lib64 or lib).
libdir() {
    local d
    for d in "$1/lib64" "$1/lib"; do
        if compgen -G "$d/libns3.44-core*.so" >/dev/null; then
            echo "$d"
            return
        fi
    done
    echo "no libns3.44-core*.so under $1/lib64 or $1/lib: not an ns-3.44 build" >&2
    exit 2
}

# What a build has compiled in, read from its libraries: NS_ASSERT leaves
# its message in libns3.44-core, NS_LOG the names of the functions it logs
# (TcpSocketBase::ReceivedAck's among them) in libns3.44-internet.
describe() {
    local lib="$1" core internet asserts=no logs=no
    core="$(compgen -G "$lib/libns3.44-core*.so" | head -1)"
    internet="$(compgen -G "$lib/libns3.44-internet[-.]*so" | grep -v apps | head -1)"
    # (grep reads all its input: with -q it would stop early, and pipefail
    # would take strings' broken pipe for a miss)
    if grep -q -a "NS_ASSERT failed" "$core"; then asserts=yes; fi
    if strings -a "$internet" | grep -x "ReceivedAck" >/dev/null; then logs=yes; fi
    echo "NS_ASSERT compiled in: $asserts, NS_LOG compiled in: $logs"
}

# Compiles our scenario against a build: compile ROOT LIBDIR BINARY.
compile() {
    local root="$1" lib="$2" bin="$3" suffix="" libs=() m stamp
    suffix="$(basename "$(compgen -G "$lib/libns3.44-core*.so" | head -1)" .so)"
    suffix="${suffix#libns3.44-core}"
    for m in $modules; do libs+=("-lns3.44-$m$suffix"); done
    stamp="$root $(stat -c %Y "$lib/libns3.44-core$suffix.so")"
    if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$(cat "$bin.stamp" 2>/dev/null)" != "$stamp" ]; then
        echo "compiling $src against $root ..." >&2
        g++ -O2 -std=c++20 -I"$root/include" "$src" -o "$bin" \
            -L"$lib" -Wl,-rpath,"$lib" "${libs[@]}"
        echo "$stamp" >"$bin.stamp"
    fi
}

wheel_lib="$(libdir "$wheel")"
compile "$wheel" "$wheel_lib" "$venv/dcnet_newreno_ns3"
peers=(--peer ns-3.44-wheel
    "PyPI wheel ns3 $wheel_version; $(describe "$wheel_lib")"
    "$venv/dcnet_newreno_ns3")
if [ -n "$optimized" ]; then
    optimized="$(cd "$optimized" && pwd)"
    opt_lib="$(libdir "$optimized")"
    compile "$optimized" "$opt_lib" "$venv/dcnet_newreno_ns3_optimized"
    peers+=(--peer ns-3.44-optimized
        "ns-3.44 build at $optimized ($(basename "$(compgen -G "$opt_lib/libns3.44-core*.so" | head -1)")); $(describe "$opt_lib")"
        "$venv/dcnet_newreno_ns3_optimized")
else
    echo "WAVELAB_NS3_BUILD is not set: comparing with the PyPI wheel only, not with an" >&2
    echo "ns-3.44 build of the optimized profile (see the head of this script)" >&2
fi

python3 benches/compare_with.py --rounds "$rounds" "${peers[@]}"
