#!/bin/bash
# Session 13, call 3 (after f2.sh, on its machine or a fresh one): the full build; every test
# 8 at a time while the four tools run on test_gemm_skinny (the tensor-core skinny kernel),
# test_gemm_dispatch (its new plan cases) and test_gemm_tensor_core (racecheck did not finish
# in session 12's 170 s), 12 processes at once, the leak test after both.
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
scripts/gpu-check.sh $O/a build > $O/f3-build-summary.txt 2>&1 || { tail -30 $O/f3-build-summary.txt; exit 1; }
tail -2 $O/f3-build-summary.txt; rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-300} \
  SANITIZE_BINARIES="test_gemm_skinny test_gemm_dispatch test_gemm_tensor_core" scripts/gpu-check.sh $O/a test,sanitize
grep -h "^== " $O/a/sanitizer.log
