#!/bin/bash
# Session 13, after f2/f5 (H100): the tensor-core skinny kernel only where it measured faster
# (2-8 rows; not along k with scalar loads). test_gemm_skinny and test_gemm_dispatch, then
# bench_gemm_skinny and the two 16-bit sweeps in one run of the project's script.
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt
BUILD_TARGETS="test_gemm_skinny test_gemm_dispatch bench_gemm_skinny bench_gemm_sweep_bf16 bench_gemm_sweep_fp16" \
  scripts/gpu-check.sh $O/a build > $O/f6-build-summary.txt 2>&1 || { tail -30 $O/f6-build-summary.txt; exit 1; }
rm -f $O/a/build.log; tail -1 $O/f6-build-summary.txt
for t in test_gemm_skinny test_gemm_dispatch; do build/h200/tests/$t > $O/f6-$t.txt 2>&1; echo "$t rc=$?"; tail -2 $O/f6-$t.txt; done
BENCH_BINARIES="bench_gemm_skinny bench_gemm_sweep_bf16 bench_gemm_sweep_fp16" \
  timeout ${T2:-200} scripts/gpu-check.sh $O/b bench > /tmp/b-summary.txt 2>&1
echo "bench rc=$?"; rm -f $O/b/bench.log
[ -f $O/b/bench/benchmarks.json ] && python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/b/bench/benchmarks.json > /dev/null && grep -E "^\| (bf16|fp16) " /tmp/r.md | cut -c1-150
