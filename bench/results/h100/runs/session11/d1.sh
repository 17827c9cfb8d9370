#!/bin/bash
# Session 11, call 1: full build; every test 8 at a time while the four tools run on the
# binaries whose code changed in session 10 (12 processes at once), the leak test after both.
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
scripts/gpu-check.sh $O/a build > $O/a-summary.txt 2>&1 || { tail -30 $O/a-summary.txt; exit 1; }
tail -2 $O/a-summary.txt; rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_scan test_gemm_fp32 test_gemm_dispatch" scripts/gpu-check.sh $O/a test,sanitize
grep -h "^== " $O/a/sanitizer.log
