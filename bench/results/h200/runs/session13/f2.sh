#!/bin/bash
# Session 13, call 2: issue 19's link probe (link_probe.cu, run beside the build: it needs the
# GPU and the link, the build the CPUs); then issue 21's tensor-core skinny kernel:
# test_gemm_skinny, then bench_gemm_skinny and the two 16-bit sweeps in one run of the
# project's script (set SKIP_BENCH=1 to stop after the test).
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt
P=bench/results/h200/runs/session13
( nvcc -O3 -arch=sm_90 -std=c++17 $P/link_probe.cu -o /tmp/link_probe && timeout 40 /tmp/link_probe 256 &&
  timeout 60 /tmp/link_probe 1024 ) > $O/f2-link-probe.txt 2>&1 &
BUILD_TARGETS="test_gemm_skinny bench_gemm_skinny bench_gemm_sweep_bf16 bench_gemm_sweep_fp16" \
  scripts/gpu-check.sh $O/a build > $O/f2-build-summary.txt 2>&1 || { tail -30 $O/f2-build-summary.txt; exit 1; }
rm -f $O/a/build.log; tail -1 $O/f2-build-summary.txt
wait; cat $O/f2-link-probe.txt
build/h200/tests/test_gemm_skinny > $O/f2-test-skinny.txt 2>&1; echo "test_gemm_skinny rc=$?"
grep -E "FAILED|failed|passed" $O/f2-test-skinny.txt | head -20
[ -n "$SKIP_BENCH" ] && exit 0
BENCH_BINARIES="bench_gemm_skinny bench_gemm_sweep_bf16 bench_gemm_sweep_fp16" \
  timeout ${T2:-240} scripts/gpu-check.sh $O/b bench > /tmp/b-summary.txt 2>&1
echo "bench rc=$?"; rm -f $O/b/bench.log
[ -f $O/b/bench/benchmarks.json ] && python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/b/bench/benchmarks.json > /dev/null && grep -E "^\| (bf16|fp16|fp32) |^- (bf16|fp16|fp32) " /tmp/r.md
