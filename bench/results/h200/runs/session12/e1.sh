#!/bin/bash
# Session 12's changes, first call of the next GPU session (H100 or H200): full build; every
# test 8 at a time while the four tools run on the GEMM binaries whose host code changed in
# session 12 (rung 2, rung 3's as-planned launch and the split-K reduce as templates; rung 4's
# tiling fitted to the device's shared memory; alpha = 0; the skip of sm_90-only binaries), 12
# processes at once, the leak test after both. (e2.sh runs the sweeps, the fp32 one with the
# narrowed 32 x 32 rule of session 11 that no GPU has run yet.)
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
scripts/gpu-check.sh $O/a build > $O/a-summary.txt 2>&1 || { tail -30 $O/a-summary.txt; exit 1; }
tail -2 $O/a-summary.txt; rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_fp32 test_gemm_dispatch test_gemm_tensor_core" scripts/gpu-check.sh $O/a test,sanitize
grep -h "^== " $O/a/sanitizer.log
