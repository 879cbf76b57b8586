#!/usr/bin/env bash
# Installs wavelab's native module built with profile-guided optimisation
# (PGO): about 10 % less wall time on the benchmark cases, the same results
# bit for bit (docs/performance.md, "A profile-guided build").
#
#   bash benches/pgo.sh
#
# Three steps, about 3 minutes on 2 cores: an instrumented build, a training
# run of the speed benchmark's engine cases (10 and 1,000 flows, with and
# without loss, every algorithm the cases use) through that build, then the
# optimised build from the recorded profile, installed in place of the
# current one (`pip install -e .`). Needs rustup, for its `llvm-tools`
# component (installed if missing). `pip install -e .` undoes it.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v rustup >/dev/null; then
    echo "benches/pgo.sh needs rustup (for llvm-profdata, in its llvm-tools component)" >&2
    exit 2
fi
rustup component add llvm-tools >/dev/null 2>&1 || {
    echo "could not install rustup's llvm-tools component" >&2
    exit 2
}
host="$(rustc -vV | sed -n 's/^host: //p')"
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    echo "llvm-profdata not found at $profdata" >&2
    exit 2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# pip install -e . (RUSTFLAGS as set), its output only if it fails
install_here() {
    local out
    if ! out="$(pip install -q -e . 2>&1)"; then
        echo "$out" >&2
        exit 1
    fi
}

echo "1/3 instrumented build ..." >&2
RUSTFLAGS="-Cprofile-generate=$work/raw" install_here

echo "2/3 training run ..." >&2
python3 - <<'PY'
from wavelab.bench import CASES, cubic_dumbbell, dcnet, run_here

training = {name: make() for name, (_, make) in CASES.items() if not name.endswith("-10g")}
lossy = dcnet("bbr")
lossy["links"][1]["loss"] = {"model": "bernoulli", "p": 0.02}
lossy["flows"][0]["tcp"] = {"sack": True, "lost_retransmissions": "rack"}
training["dcnet-bbr-lossy"] = lossy
training["cubic-10-100m"] = cubic_dumbbell(10, 100, duration="30s")
for name, scenario in training.items():
    run_here(name, scenario)
PY
"$profdata" merge -o "$work/merged.profdata" "$work/raw"

echo "3/3 optimised build ..." >&2
RUSTFLAGS="-Cprofile-use=$work/merged.profdata" install_here
echo "installed wavelab with a profile-guided native module" >&2
