#!/bin/bash
# Session 9, call B: issue 18's three binaries in one run of the project's script (every
# row, 3 repetitions in random order), then bench_gemm's fp32 rows and the fp32 sweep.
O=$1; cd /tmp/t || exit 1
[ -x build/h200/bench/bench_scan ] || BUILD_TARGETS="bench_scan bench_histogram bench_transpose bench_gemm bench_gemm_sweep_fp32" scripts/gpu-check.sh /tmp/build build > /dev/null 2>&1
BENCH_BINARIES="bench_scan bench_histogram bench_transpose" timeout ${T1:-360} scripts/gpu-check.sh $O/b bench > $O/b-summary.txt 2>&1
echo "b rc=$?"; tail -4 $O/b-summary.txt
BENCH_BINARIES="bench_gemm bench_gemm_sweep_fp32" BENCH_ARGS="--benchmark_filter=gemm_f32/|gemm_sweep_fp32 --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true" timeout ${T2:-200} scripts/gpu-check.sh $O/c bench > $O/c-summary.txt 2>&1
echo "c rc=$?"; tail -4 $O/c-summary.txt
for f in $O/b/bench/benchmarks.json $O/c/bench/benchmarks.json; do [ -f $f ] && python3 - "$f" <<'PY'
import json,sys,collections,statistics
d=json.load(open(sys.argv[1])); m=collections.defaultdict(list)
for b in d.get('benchmarks',[]):
    if b.get('run_type')=='iteration': m[b.get('run_name',b['name'])].append(b['real_time'])
for k,v in m.items():
    if 'sweep' in k or '/naive' in k: continue
    print(f"{k:72s} {statistics.median(v):10.2f}")
PY
done
