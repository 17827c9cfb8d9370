#!/bin/bash
# Session 11, call 5 (a fresh machine): the 32 x 32 tile only where the larger tiles fill at
# most half the SMs (or fewer than all with K too short to split). Build test_gemm_dispatch
# and the fp32 sweep; test_gemm_dispatch; the fp32 sweep in one run of the project's script.
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
BUILD_TARGETS="bench_gemm_sweep_fp32 test_gemm_dispatch" scripts/gpu-check.sh $O/a build > $O/a-summary.txt 2>&1 || { tail -30 $O/a-summary.txt; exit 1; }
tail -1 $O/a-summary.txt; rm -f $O/a/build.log
BENCH_BINARIES="bench_gemm_sweep_fp32" timeout ${T2:-70} scripts/gpu-check.sh $O/c bench > /tmp/c-summary.txt 2>&1
echo "sweep rc=$?"; rm -f $O/c/bench.log
[ -f $O/c/bench/benchmarks.json ] && python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/c/bench/benchmarks.json > /dev/null && grep -E "^\| fp32|^Packing" /tmp/r.md
TEST_JOBS=8 TEST_REGEX=test_gemm_dispatch timeout 40 scripts/gpu-check.sh $O/a test | tail -3
