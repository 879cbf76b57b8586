#!/usr/bin/env bash
# Every check of the project: Rust format, lints and tests; then the Python
# package (built from source by maturin), its lints, types and tests.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Rust: format, lints, tests"
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked

echo "== Python: build and install wavelab with its test tools"
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'

echo "== Python: lints, types, tests"
python3 -m ruff check python tests
python3 -m ruff format --check python tests
python3 -m mypy
python3 -m pytest
echo "== all checks passed"
