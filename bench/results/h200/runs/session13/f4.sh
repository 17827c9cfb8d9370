#!/bin/bash
# Session 13: issue 19's rows in one run of the project's script on the H200 (bench_transfer,
# bench_graph, bench_pipeline), on the machine of an earlier call or a fresh one (it builds the
# three if they are missing).
O=$1; cd /tmp/t || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/gpu.txt
[ -x build/h200/bench/bench_pipeline ] || BUILD_TARGETS="bench_transfer bench_graph bench_pipeline" \
  scripts/gpu-check.sh /tmp/build build > /dev/null 2>&1
BENCH_BINARIES="bench_transfer bench_graph bench_pipeline" timeout ${T1:-480} scripts/gpu-check.sh $O/p bench > /tmp/p-summary.txt 2>&1
echo "issue 19 rc=$?"; tail -3 /tmp/p-summary.txt; rm -f $O/p/bench.log
[ -f $O/p/bench/benchmarks.json ] && python3 - $O/p/bench/benchmarks.json <<'PY'
import json,sys,collections,statistics
d=json.load(open(sys.argv[1])); m=collections.defaultdict(list)
for b in d.get('benchmarks',[]):
    if b.get('run_type')=='iteration': m[b.get('run_name',b['name'])].append(b['real_time'])
for k,v in m.items():
    if any(x in k for x in ('pipeline','launch','round_trips','managed','/268435456')): print(f"{k:72s} {statistics.median(v):10.2f}")
PY
