#!/bin/bash
# Session 18, call 4: s8.sh's two changes (rungs 3 and 4 trigger the next launch after their K
# loop; the wgmma kernel stages C where a unit's K fits the ring) measured only, since 455 s
# of the budget were left after two calls found no machine: not the whole suite. The three
# sweeps built and run from main (2721286, /tmp/b) and from main with the changes (/tmp/t) on
# the same machine, then test_gemm_dispatch and test_gemm_wgmma of the changed tree.
# Command (the working tree is the changed tree; carry .device-deps, .snap; .snap/base.tgz = main):
#   rm -rf /tmp/t /tmp/b && mkdir -p /tmp/b && cp -r . /tmp/t && tar xzf .snap/base.tgz -C /tmp/b &&
#     cp -r .device-deps /tmp/b/ && bash /tmp/t/bench/results/h200/runs/session18/s9.sh $OUT
O=$1
S=$O/s9-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
SW="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32"
(cd /tmp/b && BUILD_TARGETS="$SW" scripts/gpu-check.sh /tmp/ob build > /tmp/b-build.txt 2>&1) &
(cd /tmp/t && BUILD_TARGETS="$SW test_gemm_dispatch test_gemm_wgmma" scripts/gpu-check.sh $O/t build >> $S 2>&1)
wait; grep -A2 "gpu-check summary" /tmp/b-build.txt >> $S; rm -f $O/t/build.log
for v in t b; do
  (cd /tmp/$v && BENCH_BINARIES="$SW" timeout 60 scripts/gpu-check.sh $O/$v bench >> $S 2>&1; echo "$v bench rc=$? at ${SECONDS}s" >> $S)
  rm -f $O/$v/bench.log $O/$v/bench/report.md
  python3 /tmp/t/scripts/bench_report.py --no-plot --markdown /tmp/r-$v.md $O/$v/bench/benchmarks.json > /dev/null &&
    { echo "== $v"; grep -E "^\| (bf16|fp16|fp32) " /tmp/r-$v.md | cut -c1-300; } >> $S
done
export LD_LIBRARY_PATH=/tmp/t/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
for bin in test_gemm_dispatch test_gemm_wgmma; do
  [ $SECONDS -lt 400 ] && { timeout $((430 - SECONDS)) /tmp/t/build/h200/tests/$bin 2>&1 | tail -3 | sed "s/^/$bin: /" >> $S; }
done
grep -v "^\[" $S | grep -v "^$" | tail -30
