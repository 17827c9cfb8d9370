#!/bin/bash
# Session 19, the small call for when s13 no longer fits the budget: the three sweeps only, on
# main with runs/session18/fallback-trigger-after-k.patch (/tmp/t) and on main with
# model-for-large-fallbacks.patch and rung3-small-c-splits.patch (/tmp/f), built side by side and
# run one after the other on the same machine. Measures, verifies nothing. Command (carry
# .device-deps, .snap; .snap/tree.tgz = `git archive HEAD`):
#   rm -rf /tmp/t /tmp/f && mkdir -p /tmp/t /tmp/f && tar xzf .snap/tree.tgz -C /tmp/t && tar xzf .snap/tree.tgz -C /tmp/f &&
#     cp -r .device-deps /tmp/t/ && cp -r .device-deps /tmp/f/ && bash /tmp/t/bench/results/h200/runs/session19/s14.sh $OUT
O=$1; S=$O/s14-summary.txt; R=bench/results/h200/runs
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
(cd /tmp/t && patch -p1 < $R/session18/fallback-trigger-after-k.patch > /dev/null) || exit 1
(cd /tmp/f && for f in model-for-large-fallbacks rung3-small-c-splits; do patch -p1 < $R/session19/$f.patch > /dev/null; done) || exit 1
sweeps="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32"
(cd /tmp/f && BUILD_TARGETS="$sweeps" scripts/gpu-check.sh /tmp/of build > /tmp/f-build.txt 2>&1) &
cd /tmp/t && BUILD_TARGETS="$sweeps" scripts/gpu-check.sh /tmp/ot build >> $S 2>&1; wait; tail -4 /tmp/f-build.txt >> $S
for t in t f; do
  (cd /tmp/$t && BENCH_BINARIES="$sweeps" timeout 100 scripts/gpu-check.sh $O/$t bench >> $S 2>&1; echo "$t bench rc=$? at ${SECONDS}s" >> $S
   rm -f $O/$t/bench.log $O/$t/bench/report.md
   python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/$t/bench/benchmarks.json > /dev/null &&
     grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S)
done
grep -v "^\[" $S | grep -v "^|" | tail -20; grep "^| \(bf16\|fp16\|fp32\) " $S
