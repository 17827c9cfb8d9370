#!/bin/bash
# Session 11, call 3 (same machine): bench_gemm's fp32 rows and the fp32 sweep, with rung 3's
# 128 x 64 tile for C of 17-64 columns (16384x32x16384 took 1503 us in 128 x 128 tiles on an
# H100, cuBLAS 540) and misaligned fp32 operands packed for the float4 loads (the sweep's
# foundry_unpacked rows time rung 3 without the copies on the 9 problems whose plan packs).
O=$1; cd /tmp/t || exit 1
[ -x build/h200/bench/bench_gemm_sweep_fp32 ] || scripts/gpu-check.sh /tmp/build build > /dev/null 2>&1
BENCH_BINARIES="bench_gemm bench_gemm_sweep_fp32"  BENCH_ARGS="--benchmark_filter=gemm_f32/(foundry|cublas)/|gemm_sweep_fp32 --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true" \
  timeout ${T2:-260} scripts/gpu-check.sh $O/c bench > /tmp/c-summary.txt 2>&1
echo "gemm rc=$?"; rm -f $O/c/bench.log
for f in $O/c/bench/benchmarks.json; do [ -f $f ] && python3 - "$f" <<'PY'
import json,sys,collections,statistics
d=json.load(open(sys.argv[1])); m=collections.defaultdict(list)
for b in d.get('benchmarks',[]):
    if b.get('run_type')=='iteration': m[b.get('run_name',b['name'])].append(b['real_time'])
unpacked={k.split('/')[2] for k in m if '/foundry_unpacked/' in k}
for k,v in m.items():
    if 'sweep' in k and k.split('/')[2] not in unpacked and not any(x in k for x in ('x32x','x23x','x37x','x64x','x16x')): continue
    print(f"{k:72s} {statistics.median(v):10.2f}")
PY
done
# Kernel time and DRAM bytes of small rows, where foundry takes 6-29 us against cuBLAS's 3-10
# (H100), and of 10535x4849x17 (C of misaligned rows, 0.71x): whether
# the kernels or what lies between them take the time.
timeout ${T3:-100} ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base \
  build/h200/bench/bench_gemm_sweep_fp32 --benchmark_filter='/(608x118x51|5789x645x1|1110x610x2|183x1381x19|9x570x26|10535x4849x17)_' \
  > $O/ncu-small.csv 2> $O/ncu-small.err; echo "ncu rc=$?"
python3 - $O/ncu-small.csv <<'PY'
import csv,sys,collections
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]
if not rows: sys.exit()
h=rows[0]; ki=h.index('Kernel Name'); vi=h.index('Metric Value'); mi=h.index('Metric Name')
t=collections.defaultdict(list)
for r in rows[1:]:
    try: t[(r[ki][:150],r[mi])].append(float(r[vi]))
    except ValueError: pass
for (k,m),v in sorted(t.items()): v.sort(); print(f"{len(v):4d} {m:24s} median {v[len(v)//2]:14.1f}  {k}")
PY
