#!/bin/bash
# Packs a branch's test_gemm_dispatch, test_gemm_wgmma, test_gemm_skinny and bench_gemm_skinny
# from its build tree ($1, default /tmp/wb/build/h200: the h200 preset) as .probe/wb.tar.xz,
# stripped, for s31.sh. Run from the repository root after building those targets there.
set -euo pipefail
from=${1:-/tmp/wb/build/h200}; stage=$(mktemp -d)
for f in tests/test_gemm_dispatch tests/test_gemm_wgmma tests/test_gemm_skinny bench/bench_gemm_skinny; do
  [ -x "$from/$f" ] && cp "$from/$f" "$stage/" && strip --strip-unneeded "$stage/$(basename $f)"
done
mkdir -p .probe && tar cJf .probe/wb.tar.xz -C "$stage" . && rm -rf "$stage" && ls -la .probe
