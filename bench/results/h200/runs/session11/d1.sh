#!/bin/bash
# Session 11, call 1: full build; every test 8 at a time (the leak test alone at the end,
# after the sanitizers, since it compares device-wide free memory) while the four tools run
# on the binaries whose code changed in session 10, twelve processes at once.
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
scripts/gpu-check.sh $O/a build > $O/a-summary.txt 2>&1 || { tail -30 $O/a-summary.txt; exit 1; }
tail -2 $O/a-summary.txt
SANITIZE_JOBS=12 SANITIZE_TIMEOUT=${ST:-240} SANITIZE_BINARIES="test_scan test_gemm_fp32 test_gemm_dispatch" \
  scripts/gpu-check.sh $O/s sanitize > /tmp/s-summary.txt 2>&1 &
source scripts/gpu-env.sh
s=$SECONDS
(cd build/h200 && ctest --output-on-failure --timeout 400 -j 8 -E "without a leak") > $O/a/ctest.log 2>&1
wait
(cd build/h200 && ctest --output-on-failure --timeout 400 -R "without a leak") >> $O/a/ctest.log 2>&1
echo "tests and sanitizers: $((SECONDS - s)) s"
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run" $O/a/ctest.log | head -20
echo "skipped: $(grep -c '(Skipped)' $O/a/ctest.log)"
tail -6 /tmp/s-summary.txt
grep -h "^== " $O/s/sanitizer.log
rm -f $O/a/build.log
