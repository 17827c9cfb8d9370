#!/bin/bash
# Baseline on the same machine: 790ffe7 (before the tensor-core skinny kernel), the 16-bit sweeps and bench_gemm_skinny.
O=$1; mkdir -p /tmp/base && tar xzf .snap/base.tgz -C /tmp/base && cp -r .device-deps /tmp/base/ && cd /tmp/base || exit 1
BUILD_TARGETS="bench_gemm_skinny bench_gemm_sweep_bf16 bench_gemm_sweep_fp16" scripts/gpu-check.sh $O/a build > $O/f5-build.txt 2>&1 || { tail -20 $O/f5-build.txt; exit 1; }
tail -1 $O/f5-build.txt
BENCH_BINARIES="bench_gemm_skinny bench_gemm_sweep_bf16 bench_gemm_sweep_fp16" timeout ${T2:-300} scripts/gpu-check.sh $O/b bench > /tmp/b.txt 2>&1; echo "bench rc=$?"; rm -f $O/b/bench.log
