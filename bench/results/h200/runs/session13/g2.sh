#!/bin/bash
# Next GPU session, call 2 (after g1.sh, on its build): issue 19's link probe; bench_gemm, the
# three sweeps and bench_gemm_skinny in one run of the project's script (on an H200: the README's
# rows, the 16-bit 8-row skinny rows back in); then issue 19's three binaries in one run.
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session13
( nvcc -O3 -arch=sm_90 -std=c++17 $P/link_probe.cu -o /tmp/link_probe && timeout 40 /tmp/link_probe 256 &&
  timeout 60 /tmp/link_probe 1024 ) > $O/g2-link-probe.txt 2>&1; tail -25 $O/g2-link-probe.txt
BENCH_BINARIES="bench_gemm bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout ${T1:-240} scripts/gpu-check.sh $O/g bench > /tmp/g-summary.txt 2>&1
echo "gemm rc=$?"; rm -f $O/g/bench.log
[ -f $O/g/bench/benchmarks.json ] && python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null && grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-160
BENCH_BINARIES="bench_transfer bench_graph bench_pipeline" timeout ${T2:-280} scripts/gpu-check.sh $O/p bench > /tmp/p-summary.txt 2>&1
echo "issue 19 rc=$?"; rm -f $O/p/bench.log
