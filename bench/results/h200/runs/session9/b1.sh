#!/bin/bash
# Session 9, call A: full build; then every test (8 at a time, the leak test alone at the
# end) while the four sanitizers run on the changed binaries, all processes at once.
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
scripts/gpu-check.sh $O/a build > $O/a-summary.txt 2>&1 || { tail -30 $O/a-summary.txt; exit 1; }
tail -3 $O/a-summary.txt
for b in test_scan test_histogram test_gemm_fp32 test_gemm_dispatch; do
  for t in memcheck racecheck synccheck initcheck; do
    SANITIZE_TIMEOUT=${ST:-200} SANITIZE_TOOLS=$t SANITIZE_BINARIES=$b scripts/gpu-check.sh /tmp/s/$b-$t sanitize > /tmp/s-$b-$t.txt 2>&1 &
  done
done
source scripts/gpu-env.sh
s=$SECONDS
(cd build/h200 && ctest --output-on-failure --timeout 400 -j 8 -E "without a leak") > $O/a/ctest.log 2>&1
wait
(cd build/h200 && ctest --output-on-failure --timeout 400 -R "without a leak") >> $O/a/ctest.log 2>&1
echo "tests and sanitizers: $((SECONDS - s)) s"
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run" $O/a/ctest.log | head -20
echo "skipped: $(grep -c '(Skipped)' $O/a/ctest.log)"
cat /tmp/s/*/sanitizer.log > $O/sanitizer.log
grep -h "^== " $O/sanitizer.log
