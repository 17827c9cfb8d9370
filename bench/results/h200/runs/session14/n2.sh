#!/bin/bash
# Next GPU session, call 2 (on n1's machine and build): issue 19's link probe, then bench_gemm
# and issue 19's three binaries in one run of the project's script (on an H200: the README's
# rows for them).
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session13
( nvcc -O3 -arch=sm_90 -std=c++17 $P/link_probe.cu -o /tmp/link_probe && timeout 40 /tmp/link_probe 256 &&
  timeout 60 /tmp/link_probe 1024 ) > $O/n2-link-probe.txt 2>&1; tail -25 $O/n2-link-probe.txt
BENCH_BINARIES="bench_gemm bench_transfer bench_graph bench_pipeline" timeout ${T:-400} scripts/gpu-check.sh $O/p bench \
  > $O/n2-bench-summary.txt 2>&1; echo "bench rc=$?"; rm -f $O/p/bench.log
