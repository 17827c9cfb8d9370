#!/usr/bin/env bash
# The test command: installs missing dependencies, builds everything (the tests and
# examples for sm_80 and sm_90, the benchmarks for sm_90: the default preset), and runs
# every test through ctest.
# Without a GPU, the [gpu] tests are reported as skipped.
#   usage: scripts/test.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake --preset default
cmake --build --preset default -j "${FOUNDRY_JOBS:-$(nproc)}"
ctest --preset default "$@"
