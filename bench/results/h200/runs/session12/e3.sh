#!/bin/bash
# Next GPU session, call 3 (same machine): the skinny kernels staging only the columns of A
# they read (session11/skinny-live-stage.patch; 9x570x26 staged 16 x 512 floats a block for the
# 16 x 26 it uses). test_gemm_skinny with the four tools, then the sweeps' skinny rows and
# bench_gemm_skinny against e2.sh's.
O=$1; cd /tmp/t || exit 1
patch -p1 --forward < bench/results/h100/runs/session11/skinny-live-stage.patch > $O/patch.txt 2>&1 || { cat $O/patch.txt; exit 1; }
BUILD_TARGETS="test_gemm_skinny bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  scripts/gpu-check.sh $O/a build > $O/a-summary.txt 2>&1 || { tail -30 $O/a-summary.txt; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=4 TEST_JOBS=8 TEST_REGEX=test_gemm_skinny SANITIZE_TIMEOUT=${ST:-200} \
  SANITIZE_BINARIES="test_gemm_skinny" scripts/gpu-check.sh $O/a test,sanitize | tail -3
grep -h "^== " $O/a/sanitizer.log
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout ${T2:-300} scripts/gpu-check.sh $O/c bench > /tmp/c-summary.txt 2>&1
echo "sweeps rc=$?"; rm -f $O/c/bench.log
[ -f $O/c/bench/benchmarks.json ] && python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/c/bench/benchmarks.json > /dev/null && grep -E "^\| (bf16|fp16|fp32) |^- (bf16|fp16|fp32) " /tmp/r.md
