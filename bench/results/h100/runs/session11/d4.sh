#!/bin/bash
# Session 11, call 4 (a fresh machine): rung 3's 32 x 32 tile (where the fitting tile's blocks
# are fewer than the SMs) and fp32 packing from 2^31 FLOPs. Build the GEMM tests and the fp32
# sweep; every GEMM test while memcheck, racecheck, synccheck and initcheck run on
# test_gemm_fp32 and test_gemm_dispatch; then the fp32 sweep in one run of the project's script.
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
BUILD_TARGETS="test_gemm_fp32 test_gemm_dispatch test_gemm_tf32 test_gemm_skinny test_gemm_tensor_core test_gemm_wgmma bench_gemm_sweep_fp32" \
  scripts/gpu-check.sh $O/a build > $O/a-summary.txt 2>&1 || { tail -30 $O/a-summary.txt; exit 1; }
tail -2 $O/a-summary.txt; rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=8 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-150} TEST_REGEX=test_gemm \
  SANITIZE_BINARIES="test_gemm_fp32 test_gemm_dispatch" scripts/gpu-check.sh $O/a test,sanitize
grep -h "^== " $O/a/sanitizer.log
BENCH_BINARIES="bench_gemm_sweep_fp32" timeout ${T2:-120} scripts/gpu-check.sh $O/c bench > /tmp/c-summary.txt 2>&1
echo "sweep rc=$?"; rm -f $O/c/bench.log
[ -f $O/c/bench/benchmarks.json ] && python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/c/bench/benchmarks.json > /dev/null && grep -E "^\| fp32|^Packing" /tmp/r.md
