#!/bin/bash
# Session 11, call 2 (on the machine that d1.sh built on): issue 19's rows in one run of the
# project's script (bench_transfer, bench_graph and bench_pipeline; bench_pipeline no longer
# pins and fills its host arrays each run, which kept it past 200 s before).
# With H200=1 and time left (T0), issue 18's three binaries after it, in a run of their own.
O=$1; cd /tmp/t || exit 1
[ -x build/h200/bench/bench_pipeline ] || scripts/gpu-check.sh /tmp/build build > /dev/null 2>&1
BENCH_BINARIES="bench_transfer bench_graph bench_pipeline" timeout ${T1:-480} scripts/gpu-check.sh $O/p bench > /tmp/p-summary.txt 2>&1
echo "issue 19 rc=$?"; tail -3 /tmp/p-summary.txt; rm -f $O/p/bench.log
if [ "${H200:-0}" = 1 ] && [ "${T0:-0}" -gt 0 ]; then
  BENCH_BINARIES="bench_scan bench_histogram bench_transpose" timeout ${T0} scripts/gpu-check.sh $O/m bench > /tmp/m-summary.txt 2>&1
  echo "issue 18 rc=$?"; rm -f $O/m/bench.log
fi
[ -f $O/p/bench/benchmarks.json ] && python3 - $O/p/bench/benchmarks.json <<'PY'
import json,sys,collections,statistics
d=json.load(open(sys.argv[1])); m=collections.defaultdict(list)
for b in d.get('benchmarks',[]):
    if b.get('run_type')=='iteration': m[b.get('run_name',b['name'])].append(b['real_time'])
for k,v in m.items():
    if any(x in k for x in ('pipeline','launch','round_trips','managed','/268435456')): print(f"{k:72s} {statistics.median(v):10.2f}")
PY
