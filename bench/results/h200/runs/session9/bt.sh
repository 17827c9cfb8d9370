#!/bin/bash
# Session 9, targeted call: the test binaries that include the changed headers' code paths
# (scan, histogram, rung 3's plans), their tests while the four sanitizers run on four of
# them, then bench_scan and bench_histogram (foundry, candidates and CUB; 3 repetitions).
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
T="test_scan test_histogram test_gemm_fp32 test_gemm_dispatch test_gemm_tf32 test_gemm_skinny test_reliability_checks test_reliability"
BUILD_TARGETS="$T bench_scan bench_histogram" scripts/gpu-check.sh $O/a build > /tmp/a-summary.txt 2>&1 || { tail -30 /tmp/a-summary.txt; exit 1; }
tail -2 /tmp/a-summary.txt
for b in test_scan test_histogram test_gemm_fp32 test_gemm_dispatch; do
  for t in memcheck racecheck synccheck initcheck; do
    SANITIZE_TIMEOUT=${ST:-180} SANITIZE_TOOLS=$t SANITIZE_BINARIES=$b scripts/gpu-check.sh /tmp/s/$b-$t sanitize > /tmp/s-$b-$t.txt 2>&1 &
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
BENCH_BINARIES="bench_scan bench_histogram" BENCH_ARGS="--benchmark_filter=/(foundry|cub) --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true" timeout ${TB:-240} scripts/gpu-check.sh $O/b bench > /tmp/b-summary.txt 2>&1
echo "bench rc=$?"
f=$O/b/bench/benchmarks.json; [ -f $f ] && python3 - "$f" <<'PY'
import json,sys,collections,statistics
d=json.load(open(sys.argv[1])); m=collections.defaultdict(list)
for b in d.get('benchmarks',[]):
    if b.get('run_type')=='iteration': m[b.get('run_name',b['name'])].append(b['real_time'])
for k,v in m.items(): print(f"{k:72s} {statistics.median(v):10.2f}")
PY
