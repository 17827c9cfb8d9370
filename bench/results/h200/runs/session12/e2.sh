#!/bin/bash
# Next GPU session, call 2 (same machine as e1.sh, whose build it reuses): the three GEMM sweeps
# and bench_gemm_skinny in one run of the project's script: the 16-bit sweeps have not run since
# the H200's session 7 (bf16 0.753x, fp16 0.647x geomean then), and never on an H100.
O=$1; cd /tmp/t || exit 1
[ -x build/h200/bench/bench_gemm_sweep_bf16 ] || scripts/gpu-check.sh /tmp/build build > /dev/null 2>&1
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout ${T2:-300} scripts/gpu-check.sh $O/c bench > /tmp/c-summary.txt 2>&1
echo "sweeps rc=$?"; rm -f $O/c/bench.log
[ -f $O/c/bench/benchmarks.json ] && python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/c/bench/benchmarks.json > /dev/null && grep -E "^\| (bf16|fp16|fp32) |^Packing|^- (bf16|fp16|fp32) " /tmp/r.md
