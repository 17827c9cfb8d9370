#!/bin/bash
# Session 14, call 3 (the device budget left no room for the whole suite,
# which s1 ran on b5665cb): the GEMM test binaries that reach the skinny rung (test_gemm_skinny,
# test_gemm_dispatch, test_gemm_tf32) and the four tools on test_gemm_skinny, for the
# tensor-core kernel's first round issued before the staging and the CUDA-core split along n;
# the small-product probe; the three sweeps and bench_gemm_skinny in one run of the script.
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
BUILD_TARGETS="test_gemm_skinny test_gemm_dispatch test_gemm_tf32 bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 \
bench_gemm_sweep_fp32 bench_gemm_skinny" scripts/gpu-check.sh $O/a build > $O/s3-build-summary.txt 2>&1 ||
  { tail -30 $O/s3-build-summary.txt; exit 1; }
tail -2 $O/s3-build-summary.txt; rm -f $O/a/build.log
P=bench/results/h200/runs/session14
( nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
    -I .device-deps/include $P/small_probe.cu -o /tmp/small_probe -L.device-deps/lib/x86_64-linux-gnu \
    -lbenchmark -lcublas > $O/s3-probe-build.txt 2>&1 ) &
( for t in test_gemm_skinny test_gemm_dispatch test_gemm_tf32; do
    timeout 150 build/h200/tests/$t > $O/s3-$t.txt 2>&1; echo "$t rc=$? $(tail -2 $O/s3-$t.txt | tr '\n' ' ')"
  done ) &
SANITIZE_JOBS=4 SANITIZE_TIMEOUT=${ST:-150} SANITIZE_BINARIES="test_gemm_skinny" scripts/gpu-check.sh $O/a sanitize \
  > $O/s3-sanitize-summary.txt 2>&1
grep -h "^== " $O/a/sanitizer.log
wait
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
timeout 60 /tmp/small_probe > $O/s3-probe.txt 2>&1; cat $O/s3-probe.txt
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 120 scripts/gpu-check.sh $O/g bench > $O/s3-bench-summary.txt 2>&1; echo "bench rc=$?"; rm -f $O/g/bench.log
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-400
