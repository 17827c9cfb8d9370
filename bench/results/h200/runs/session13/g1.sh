#!/bin/bash
# Next GPU session, call 1 (written in session 13, not yet run): the whole suite on main with
# the skinny rung's final dispatch (tensor cores for 16-bit 2-8 rows, not along k with scalar
# loads), which no GPU has run (the H100's f3 ran the kernel with the 2-32 row dispatch); the
# four tools on test_gemm_skinny and test_gemm_dispatch beside the tests.
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
scripts/gpu-check.sh $O/a build > $O/g1-build-summary.txt 2>&1 || { tail -30 $O/g1-build-summary.txt; exit 1; }
tail -2 $O/g1-build-summary.txt; rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=8 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_skinny test_gemm_dispatch" scripts/gpu-check.sh $O/a test,sanitize
grep -h "^== " $O/a/sanitizer.log
