#!/bin/bash
# Session 11, call 2 (on the machine that d1.sh built on): bench_pipeline alone (issue 19's
# rows for the current schedule; it no longer pins and fills its host arrays each run).
# On an H200 (H200=1), first issue 18's three binaries in one run of the project's script.
O=$1; cd /tmp/t || exit 1
[ -x build/h200/bench/bench_pipeline ] || scripts/gpu-check.sh /tmp/build build > /dev/null 2>&1
if [ "${H200:-0}" = 1 ]; then
  BENCH_BINARIES="bench_scan bench_histogram bench_transpose" timeout ${T0:-200} scripts/gpu-check.sh $O/m bench > /tmp/m-summary.txt 2>&1
  echo "issue 18 rc=$?"; rm -f $O/m/bench.log
fi
BENCH_BINARIES="bench_pipeline" timeout ${T1:-300} scripts/gpu-check.sh $O/p bench > /tmp/p-summary.txt 2>&1
echo "pipeline rc=$?"; tail -3 /tmp/p-summary.txt; rm -f $O/p/bench.log
for f in $O/p/bench/benchmarks.json; do [ -f $f ] && python3 - "$f" <<'PY'
import json,sys,collections,statistics
d=json.load(open(sys.argv[1])); m=collections.defaultdict(list)
for b in d.get('benchmarks',[]):
    if b.get('run_type')=='iteration': m[b.get('run_name',b['name'])].append(b['real_time'])
for k,v in m.items():
    if 'sweep' in k and 'x32x' not in k and 'x23x' not in k and 'x37x' not in k: continue
    print(f"{k:72s} {statistics.median(v):10.2f}")
PY
done
