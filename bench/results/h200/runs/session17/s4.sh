#!/bin/bash
# Session 17, call 4 (on s3's machine and build, if it is an H200): issue 19's link probe, then
# bench_gemm and issue 19's three binaries in one run of the project's script (the README's
# H200 rows for them). Command: bash bench/results/h200/runs/session17/s4.sh $OUT
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session13
( nvcc -O3 -arch=sm_90 -std=c++17 $P/link_probe.cu -o /tmp/link_probe && timeout 40 /tmp/link_probe 256 ) \
  > $O/s4-link-probe.txt 2>&1; tail -25 $O/s4-link-probe.txt
BENCH_BINARIES="bench_gemm bench_transfer bench_graph bench_pipeline" timeout ${T:-480} scripts/gpu-check.sh $O/p bench \
  > $O/s4-bench-summary.txt 2>&1; echo "bench rc=$? at ${SECONDS}s"; rm -f $O/p/bench.log
tail -5 $O/s4-bench-summary.txt
