#!/bin/bash
# Session 14, call 1: session 13's g1.sh (the whole suite on main, the four tools on
# test_gemm_skinny and test_gemm_dispatch), and beside the tests the small-product probe
# (small_probe.cu: hot per-call times against cuBLAS, then one call of each under ncu).
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
scripts/gpu-check.sh $O/a build > $O/s1-build-summary.txt 2>&1 || { tail -30 $O/s1-build-summary.txt; exit 1; }
tail -2 $O/s1-build-summary.txt; rm -f $O/a/build.log
P=bench/results/h200/runs/session14
( nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
    -I .device-deps/include $P/small_probe.cu -o /tmp/small_probe -L.device-deps/lib/x86_64-linux-gnu \
    -lbenchmark -lcublas > $O/s1-probe-build.txt 2>&1 ) &
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=8 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_skinny test_gemm_dispatch" scripts/gpu-check.sh $O/a test,sanitize
grep -h "^== " $O/a/sanitizer.log
wait
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
timeout 60 /tmp/small_probe > $O/s1-probe.txt 2>&1; cat $O/s1-probe.txt
PROBE_PROFILE=1 timeout 90 ncu --profile-from-start off --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size \
  --csv /tmp/small_probe > $O/s1-probe-ncu.csv 2>&1; echo "ncu rc=$?"; wc -l $O/s1-probe-ncu.csv
