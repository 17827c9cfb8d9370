#!/bin/bash
# Next GPU session, call 1 (written in session 14, not yet run): session 13's g1.sh (the whole
# suite on main, the four tools on test_gemm_skinny and test_gemm_dispatch beside the tests; the
# CUDA-core skinny split along n has not met the whole suite: s3b ran the three GEMM binaries
# that reach it), then the three sweeps and bench_gemm_skinny in one run of the project's
# script. On an H200 these become the README's rows: add $O/g/bench/benchmarks.json to
# scripts/h200-report.sh (after session 12's e2 file) and drop the 8-row exclusion there.
# About 420 s on an H200 (session 12: build 213 s).
O=$1; cd /tmp/t || exit 1
ST=${ST:-200} bash bench/results/h200/runs/session13/g1.sh $O || exit 1
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 150 scripts/gpu-check.sh $O/g bench > $O/n1-bench-summary.txt 2>&1; echo "bench rc=$?"; rm -f $O/g/bench.log
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-400
