#!/usr/bin/env bash
# Every check of the project: Rust format, lints and tests (the core
# workspace, then TCP Wave's BPF program in crates/bpf); then the Python
# package (built from source by maturin), its lints, types and tests; a
# short run of each fuzz target where cargo-fuzz is installed. As root
# on Debian it first installs chromium, tshark and iproute2 if they are
# missing (the report is tested in a headless browser, the pcap files with
# tshark, the emulator sets up its namespaces with `ip`).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each phase's wall time, printed as it ends and summed up at the end (the
# machine's load average beside it: the figures depend on what else runs).
phase_name=""
phase_start=$SECONDS
phases=()
phase() {
    if [ -n "$phase_name" ]; then
        phases+=("$(printf '%5d s  %s' $((SECONDS - phase_start)) "$phase_name")")
    fi
    phase_name="$1"
    phase_start=$SECONDS
    if [ -n "$1" ]; then echo "== $1"; fi
}

phase "Tools: chromium, tshark and iproute2 (the report's, the pcap files' and the emulator's tests)"
if ! command -v tshark >/dev/null || ! command -v ip >/dev/null || ! { command -v chromium >/dev/null || command -v chromium-browser >/dev/null; }; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing chromium and tshark with apt-get (Debian packages, system-wide)"
        # tshark's package asks whether non-root users may capture: answer no
        if command -v debconf-set-selections >/dev/null; then
            echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
        fi
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium tshark iproute2
    else
        echo "chromium, tshark or ip is missing and this is not root with apt-get:"
        echo "their tests skip (and fail under CI=true)"
    fi
fi

# The Python packages the tests need (pyproject.toml's dependencies and its
# test and cluster extras) download and install in the background while Rust
# builds: that is network and disk where the build is CPU. The editable
# install below then finds them in place; its output is printed there.
echo "in the background: pip installs the Python packages the tests need into $(python3 -c 'import sys; print(sys.prefix)')"
py_deps_log=$(mktemp)
(
    python3 -c '
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
extras = project["optional-dependencies"]
for req in project["dependencies"] + extras["test"]:
    if req.startswith("wavelab["):
        for extra in req[len("wavelab[") : -1].split(","):
            print("\n".join(extras[extra.strip()]))
    else:
        print(req)
' >"$py_deps_log.req" &&
        python3 -m pip install --quiet --disable-pip-version-check -r "$py_deps_log.req"
) >"$py_deps_log" 2>&1 &
py_deps_pid=$!
background="$py_deps_pid"
trap 'kill $background 2>/dev/null || true' EXIT

phase "Rust: format and lints"
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
phase "BPF: the tools TCP Wave for stock Linux builds with (crates/bpf)"
# It builds with clang, bpftool, libbpf (compiled from source by libbpf-sys,
# against libelf and zlib) and the kernel's BTF; its kernel tests need root.
bpf_missing=""
for tool in clang bpftool pkg-config; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || bpf_missing="$bpf_missing $tool"
done
[ -f /usr/include/libelf.h ] || bpf_missing="$bpf_missing libelf-dev"
[ -f /usr/include/zlib.h ] || bpf_missing="$bpf_missing zlib1g-dev"
if [ -n "$bpf_missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing what the BPF program needs:$bpf_missing"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        clang bpftool pkg-config libelf-dev zlib1g-dev
    bpf_missing=""
fi
if [ -n "$bpf_missing" ]; then
    echo "crates/bpf needs:$bpf_missing; its tests are skipped (and fail under CI=true)"
    if [ "${CI:-}" = true ]; then exit 1; fi
else
    # crates/bpf is its own workspace with its own target directory: it
    # builds in the background while the core workspace builds, whose
    # serial chain of crates leaves a core idle much of the time; its
    # output is printed in its phase below
    bpf_log=$(mktemp)
    (
        cargo fmt --manifest-path crates/bpf/Cargo.toml --check &&
            cargo clippy --manifest-path crates/bpf/Cargo.toml --all-targets --locked -- -D warnings &&
            cargo test --manifest-path crates/bpf/Cargo.toml --locked &&
            cargo build --manifest-path crates/bpf/Cargo.toml --locked
    ) >"$bpf_log" 2>&1 &
    bpf_pid=$!
    background="$background $bpf_pid"
fi

phase "Rust: build and run the tests"
cargo test --workspace --locked

phase "Fuzzing: a short run of each fuzz target (fuzz/, scripts/fuzz.sh)"
# Where cargo-fuzz is installed (cargo install cargo-fuzz --locked), each
# target runs for WAVELAB_FUZZ_SECONDS (15 by default; 0 skips it). Without
# it, the property tests over arbitrary bytes that run the same bodies
# (crates/*/tests/fuzz_bytes.rs) ran in `cargo test` above instead.
fuzz_seconds="${WAVELAB_FUZZ_SECONDS:-15}"
if [ "$fuzz_seconds" = 0 ]; then
    echo "WAVELAB_FUZZ_SECONDS=0: skipped"
elif cargo fuzz --version >/dev/null 2>&1; then
    bash scripts/fuzz.sh --seconds "$fuzz_seconds"
else
    echo "cargo-fuzz is not installed: the proptests over arbitrary bytes stood in for it"
fi

phase "BPF: TCP Wave for stock Linux (crates/bpf, its own workspace; built beside the core's build)"
if [ -n "$bpf_missing" ]; then
    echo "skipped: crates/bpf needs:$bpf_missing"
else
    bpf_status=0
    wait "$bpf_pid" || bpf_status=$?
    cat "$bpf_log"
    rm -f "$bpf_log"
    if [ "$bpf_status" != 0 ]; then
        echo "crates/bpf: its format check, lints, tests or build failed (exit $bpf_status)"
        exit 1
    fi
    # the Python tests of `wavelab bpf` use this build of the loader
    export WAVELAB_BPF="$PWD/crates/bpf/target/debug/wavelab-bpf"
fi

phase "Python: build and install wavelab with its test tools"
# Says where it installs, and what it replaces: a wavelab installed in this
# Python from elsewhere is replaced by this checkout (editable). Run this in
# a virtual environment to keep them apart (README: Set-up).
prefix=$(python3 -c 'import sys; print(sys.prefix)')
installed=$(python3 -m pip show wavelab 2>/dev/null | sed -n 's/^Editable project location: //p; s/^Location: //p' | tail -1 || true)
if [ -n "${VIRTUAL_ENV:-}" ] || [ "$prefix" != "$(python3 -c 'import sys; print(sys.base_prefix)')" ]; then
    echo "installing this checkout (editable, with pytest, ruff, mypy) into the virtual environment $prefix"
else
    echo "installing this checkout (editable, with pytest, ruff, mypy) into $prefix, not a virtual environment"
fi
if [ -n "$installed" ] && [ "$installed" != "$PWD" ]; then
    echo "this replaces the wavelab installed there from $installed"
fi
# The extension is built with cargo's dev profile, the one `cargo test` just
# used, so it reuses those compiled crates (about 7 of them are rebuilt for
# the extension's features: ~1 min, where the release profile's fat LTO
# compiles everything again: ~4.5 min). The core crates are optimised in the
# dev profile too (Cargo.toml), and the Python tests took the same time with
# either build in interleaved runs (docs/performance.md); `pip install .`
# outside this script builds the release profile.
py_deps=0
wait "$py_deps_pid" || py_deps=$?
cat "$py_deps_log"
rm -f "$py_deps_log" "$py_deps_log.req"
if [ "$py_deps" != 0 ]; then
    echo "installing the Python packages the tests need failed (exit $py_deps)"
    exit 1
fi
echo "compiling the Rust extension with cargo's dev profile (about 1 min: it reuses the crates the Rust tests compiled)"
MATURIN_PEP517_ARGS="--profile dev" \
    python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'

phase "Python: lints, types and tests"
python3 -m ruff check python tests
python3 -m ruff format --check python tests
python3 -m mypy
# The Python tests run in one process per core (pytest-xdist; about twice
# as fast on 2 cores, docs/performance.md). The tests that change what the
# whole kernel shares (TCP Wave's BPF program loaded and unloaded, marker
# kernel_state) run beside them in one process of their own, so that no
# two of them interleave; they emulate in real time and wait more than they
# compute, as do the emulator's other tests (marker realtime), which run in
# that process too; its output is printed when both are done.
# WAVELAB_TEST_WORKERS=N sets the number of processes; 1 runs everything
# in this process, in order.
workers="${WAVELAB_TEST_WORKERS:-$(nproc 2>/dev/null || echo 1)}"
if [ "$workers" -gt 1 ]; then
    kernel_dir=$(mktemp -d)
    python3 -m pytest -p no:cacheprovider --basetemp "$kernel_dir/tmp" \
        -m "not slow and (kernel_state or realtime)" >"$kernel_dir/log" 2>&1 &
    kernel_pid=$!
    # (a background job of a script ignores Ctrl-C: end it with the script)
    trap 'kill $background "$kernel_pid" 2>/dev/null || true; rm -rf "$kernel_dir"' EXIT
    others=0
    # worksteal: a worker that runs out of tests takes queued ones from the
    # other, so a few long tests near the end do not leave a core idle
    python3 -m pytest -n "$workers" --dist worksteal \
        -m "not slow and not kernel_state and not realtime" || others=$?
    kernel=0
    wait "$kernel_pid" || kernel=$?
    echo "== the tests marked kernel_state or realtime, run beside the others in one process:"
    cat "$kernel_dir/log"
    if [ "$others" != 0 ] || [ "$kernel" != 0 ]; then
        echo "the Python tests failed (exit $others; kernel_state and realtime: exit $kernel)"
        exit 1
    fi
else
    python3 -m pytest
fi
phase ""
echo "== all checks passed; wall time per phase (load average now: $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '%s\n' "${phases[@]}"
