#!/bin/bash
# e3.sh with its baseline on the same machine (an H100 may come instead of an H200, whose e2
# figures would not compare): the sweeps and bench_gemm_skinny on main, then with
# session11/skinny-live-stage.patch, test_gemm_skinny between (without the tools: e5.sh).
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt
T="test_gemm_skinny bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny"
B="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny"
report() { [ -f $1/bench/benchmarks.json ] && python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $1/bench/benchmarks.json > /dev/null && grep -E "^\| (bf16|fp16|fp32) \| 80" /tmp/r.md | cut -c1-200; }
BUILD_TARGETS="$T" scripts/gpu-check.sh $O/a build > $O/a-summary.txt 2>&1 || { tail -30 $O/a-summary.txt; exit 1; }
rm -f $O/a/build.log; tail -1 $O/a-summary.txt
BENCH_BINARIES="$B" timeout 150 scripts/gpu-check.sh $O/base bench > /dev/null 2>&1; echo "base rc=$?"; rm -f $O/base/bench.log; report $O/base
patch -p1 --forward < bench/results/h100/runs/session11/skinny-live-stage.patch > $O/patch.txt 2>&1 || { cat $O/patch.txt; exit 1; }
BUILD_TARGETS="$T" scripts/gpu-check.sh $O/b build > $O/b-summary.txt 2>&1 || { tail -30 $O/b-summary.txt; exit 1; }
rm -f $O/b/build.log; tail -1 $O/b-summary.txt
build/h200/tests/test_gemm_skinny 2>&1 | tail -2
BENCH_BINARIES="$B" timeout 150 scripts/gpu-check.sh $O/live bench > /dev/null 2>&1; echo "live rc=$?"; rm -f $O/live/bench.log; report $O/live
