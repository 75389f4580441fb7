#!/usr/bin/env bash
# The fuzz targets' CI smoke, on the stable toolchain and without cargo-fuzz: every seed of
# corpus/NAME/ plus a fixed-seed mutation pass (the same inputs on every machine) through
# each target's body (src/lib.rs). It shares tai's target directory, so a machine that
# has built the tests builds little more. Long runs use cargo-fuzz (see docs/fuzzing.md).
# Usage: tests/fuzz/smoke.sh [ROUNDS]   (default 20000 mutated inputs per target)
set -euo pipefail
cd "$(dirname "$0")"
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-../../target}" \
  cargo run --locked --quiet --no-default-features --bin smoke -- "${1:-20000}"
