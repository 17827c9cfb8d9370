#!/bin/bash
# Session 18, call 3 (the last of the budget): two changes on top of s7 (PDL for every GEMM
# kernel, landed).
# 1. Rungs 3 and 4 (fast and fallback) let the next kernel launch after their K loop instead of
#    at their start: with the trigger first, rows of many blocks ran 3-19% slower in s7
#    (125x10970x318 16-bit fallback 19.2 -> 22.6 us, 102x1461x554 in all three types), likely
#    the next kernels' blocks made resident early, unevenly, beside the K loop (issue 17 moved
#    its reductions' trigger after the main loop for the same reason).
# 2. The wgmma kernel stages C through the warps' swizzled tiles (one 128-byte row a store)
#    where a unit's K fits the ring (steps <= stages): s7's probe had 16384x16384x{1,16,64} bf16
#    471/441/447 -> 384/390/417 us staged (cuBLAS 384/361/382), 8192x8192x1024 267 -> 276.
# Full build, the whole suite while the four tools run on test_gemm_dispatch, test_gemm_fp32,
# test_gemm_wgmma and test_gemm_tensor_core, then the three sweeps and bench_gemm_skinny.
# Command (carry .device-deps, .snap):
#   rm -rf /tmp/t && mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session18/s8.sh $OUT
O=$1; cd /tmp/t || exit 1
S=$O/s8-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=16 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-150} \
  SANITIZE_BINARIES="test_gemm_dispatch test_gemm_fp32 test_gemm_wgmma test_gemm_tensor_core" \
  scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
if [ $SECONDS -lt 450 ]; then
  BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
    timeout 100 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S
  rm -f $O/g/bench.log $O/g/bench/report.md
  python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
    grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
fi
grep -v "^\[" $S | tail -40
