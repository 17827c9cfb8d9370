#!/bin/bash
# Session 14, call 3 (after s1 and s2 on an H100): the whole suite and the four tools on
# test_gemm_skinny for the tensor-core skinny kernel's first round of loads issued before the
# staging, and the CUDA-core kernel's split along n (slices of two rounds a warp); the
# small-product probe (new plans against the ones before, same machine); then the three
# sweeps and bench_gemm_skinny in one run of the project's script.
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
scripts/gpu-check.sh $O/a build > $O/s3-build-summary.txt 2>&1 || { tail -30 $O/s3-build-summary.txt; exit 1; }
tail -2 $O/s3-build-summary.txt; rm -f $O/a/build.log
P=bench/results/h200/runs/session14
( nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
    -I .device-deps/include $P/small_probe.cu -o /tmp/small_probe -L.device-deps/lib/x86_64-linux-gnu \
    -lbenchmark -lcublas > $O/s3-probe-build.txt 2>&1 ) &
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=8 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-200} \
  SANITIZE_BINARIES="test_gemm_skinny" scripts/gpu-check.sh $O/a test,sanitize
grep -h "^== " $O/a/sanitizer.log
wait
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
timeout 60 /tmp/small_probe > $O/s3-probe.txt 2>&1; cat $O/s3-probe.txt
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 120 scripts/gpu-check.sh $O/g bench > $O/s3-bench-summary.txt 2>&1; echo "bench rc=$?"; rm -f $O/g/bench.log
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-400
