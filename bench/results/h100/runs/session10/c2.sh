#!/bin/bash
# Session 10, call 5: the scan at 16 vectors a thread: test_scan while the four sanitizers
# run on it, issue 18's three benchmark binaries in one run of the project's script, then
# bench_pipeline alone (issue 19's rows for the current schedule).
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
BUILD_TARGETS="test_scan bench_scan bench_histogram bench_transpose bench_pipeline" scripts/gpu-check.sh $O/a build > /tmp/a-summary.txt 2>&1 || { tail -30 /tmp/a-summary.txt; exit 1; }
tail -2 /tmp/a-summary.txt
for t in memcheck racecheck synccheck initcheck; do
  SANITIZE_TIMEOUT=${ST:-150} SANITIZE_TOOLS=$t SANITIZE_BINARIES=test_scan scripts/gpu-check.sh /tmp/s/$t sanitize > /tmp/s-$t.txt 2>&1 &
done
source scripts/gpu-env.sh
s=$SECONDS
(cd build/h200 && ctest --output-on-failure --timeout 300 -j 8 -R "^test_scan:") > $O/a/ctest.log 2>&1
wait
echo "tests and sanitizers: $((SECONDS - s)) s"
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run" $O/a/ctest.log | head -20
echo "skipped: $(grep -c '(Skipped)' $O/a/ctest.log)"
cat /tmp/s/*/sanitizer.log > $O/sanitizer.log
grep -h "^== " $O/sanitizer.log
BENCH_BINARIES="bench_scan bench_histogram bench_transpose" timeout ${TB:-200} scripts/gpu-check.sh $O/b bench > $O/b-summary.txt 2>&1
echo "bench rc=$?"; tail -3 $O/b-summary.txt
BENCH_BINARIES="bench_pipeline" timeout ${TP:-200} scripts/gpu-check.sh $O/p bench > $O/p-summary.txt 2>&1
echo "pipeline rc=$?"; tail -3 $O/p-summary.txt
rm -f $O/a/build.log $O/b/bench.log $O/p/bench.log
