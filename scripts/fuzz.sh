#!/usr/bin/env bash
# Runs the fuzz targets of fuzz/ (cargo-fuzz, libFuzzer with AddressSanitizer,
# release build with debug assertions and overflow checks), one after another.
#
#   bash scripts/fuzz.sh                      # every target, 60 s each
#   bash scripts/fuzz.sh --seconds 3600 sender_segments
#
# Targets: wire_roundtrip, sender_segments, receiver_segments, scenario_toml,
# trace_file.
# The corpus of a target grows in fuzz/corpus/TARGET (not versioned); the
# shipped scenarios seed scenario_toml, with fuzz/scenario_toml.dict, and the
# shipped traces (scenarios/traces) seed trace_file. A crash
# stops the script with a non-zero status; its input is in
# fuzz/artifacts/TARGET/ (replay: cargo fuzz run TARGET FILE). Each target's
# libFuzzer output goes to fuzz/logs/TARGET.log; a summary line per target is
# printed: runs, seconds, coverage, corpus.
#
# Needs cargo-fuzz (cargo install cargo-fuzz --locked). It uses a nightly
# toolchain when rustup has one; otherwise the stable compiler with
# RUSTC_BOOTSTRAP=1, which unlocks the -Z flags the sanitizer needs.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) targets+=("$1"); shift ;;
    esac
done
all=(wire_roundtrip sender_segments receiver_segments scenario_toml trace_file)
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for t in "${targets[@]}"; do
    if [[ ! " ${all[*]} " =~ " $t " ]]; then
        echo "error: no fuzz target is called '$t'; choose from ${all[*]}" >&2
        exit 2
    fi
done
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "error: cargo-fuzz is not installed: cargo install cargo-fuzz --locked" >&2
    exit 2
fi
if rustup run nightly rustc --version >/dev/null 2>&1; then
    toolchain=(+nightly)
    echo "fuzzing with $(rustup run nightly rustc --version)"
else
    toolchain=()
    export RUSTC_BOOTSTRAP=1
    echo "fuzzing with $(rustc --version) and RUSTC_BOOTSTRAP=1 (no nightly toolchain)"
fi

cd fuzz
mkdir -p logs
cargo "${toolchain[@]}" fuzz build -O -a
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    extra=()
    seeds=()
    if [ "$t" = scenario_toml ]; then
        extra=(-dict=scenario_toml.dict)
        seeds=(../scenarios)
    elif [ "$t" = trace_file ]; then
        seeds=(../scenarios/traces)
    fi
    status=0
    cargo "${toolchain[@]}" fuzz run -O -a "$t" "corpus/$t" "${seeds[@]}" -- \
        -max_total_time="$seconds" -print_final_stats=1 "${extra[@]}" \
        >"logs/$t.log" 2>&1 || status=$?
    done_line=$(grep -E '^Done [0-9]+ runs' "logs/$t.log" | tail -1 || true)
    cov_line=$(grep -E '^#[0-9]+' "logs/$t.log" | tail -1 || true)
    echo "$t: ${done_line:-no summary} | ${cov_line#*	}"
    if [ "$status" != 0 ]; then
        echo "error: $t failed (status $status); see fuzz/logs/$t.log and fuzz/artifacts/$t/" >&2
        grep -E 'panicked|ERROR|SUMMARY' "logs/$t.log" | head -5 >&2 || true
        exit 1
    fi
done
