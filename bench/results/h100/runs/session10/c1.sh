#!/bin/bash
# Session 10, call 4: the histogram's byte kernel at 8 vectors in flight and the scan of
# 128- and 200-byte elements: their tests while the four sanitizers run on both binaries,
# then issue 18's three benchmark binaries in one run of the project's script.
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
T="test_scan test_histogram"
BUILD_TARGETS="$T bench_scan bench_histogram bench_transpose" scripts/gpu-check.sh $O/a build > /tmp/a-summary.txt 2>&1 || { tail -30 /tmp/a-summary.txt; exit 1; }
tail -2 /tmp/a-summary.txt
for b in $T; do
  for t in memcheck racecheck synccheck initcheck; do
    SANITIZE_TIMEOUT=${ST:-200} SANITIZE_TOOLS=$t SANITIZE_BINARIES=$b scripts/gpu-check.sh /tmp/s/$b-$t sanitize > /tmp/s-$b-$t.txt 2>&1 &
  done
done
source scripts/gpu-env.sh
s=$SECONDS
(cd build/h200 && ctest --output-on-failure --timeout 300 -j 8 -R "^($(echo $T | tr ' ' '|')):") > $O/a/ctest.log 2>&1
wait
echo "tests and sanitizers: $((SECONDS - s)) s"
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run" $O/a/ctest.log | head -20
echo "skipped: $(grep -c '(Skipped)' $O/a/ctest.log)"
cat /tmp/s/*/sanitizer.log > $O/sanitizer.log
grep -h "^== " $O/sanitizer.log
BENCH_BINARIES="bench_scan bench_histogram bench_transpose" timeout ${TB:-300} scripts/gpu-check.sh $O/b bench > $O/b-summary.txt 2>&1
echo "bench rc=$?"; tail -3 $O/b-summary.txt
