#!/bin/bash
# Session 22: runs/session17/s4.sh (issue 19's rows: bench_gemm, bench_transfer, bench_graph,
# bench_pipeline, and the link probe) on a machine that may be fresh: builds the four
# benchmarks first where s22.sh did not build them in /tmp/t (the same command as s22.sh's).
O=$1
if [ ! -x /tmp/t/build/h200/bench/bench_pipeline ]; then
  rm -rf /tmp/t && mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ || exit 1
  (cd /tmp/t && BUILD_TARGETS="bench_gemm bench_transfer bench_graph bench_pipeline" scripts/gpu-check.sh /tmp/ob build \
    > /tmp/s4b-build.txt 2>&1) || { tail -20 /tmp/s4b-build.txt; exit 1; }
  echo "built at ${SECONDS}s"
fi
bash /tmp/t/bench/results/h200/runs/session17/s4.sh $O
