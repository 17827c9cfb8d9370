#!/bin/bash
# Session 20. Main (67d1b36: session 18's trigger patch and session 19's wgmma predicate landed,
# verified in s13) with the two plan patches of runs/session19 that s13 measured beside it:
# model-for-large-fallbacks.patch (125x10970x318 16-bit 20.5 -> 14.3 us, 4228x263x2646
# 129 -> 65, 127x5368x617 23 -> 18; 15992x9x14282 455 -> 479) and rung3-small-c-splits.patch
# (256x256x16384 fp32 103 -> 58, 39x384x8368 36 -> 28). Both change only the plan; this call is
# their verification: the whole suite, the four tools on the binaries whose plans they change
# (test_gemm_dispatch, test_gemm_fp32, test_gemm_tensor_core), then the sweeps of that tree.
# Command (carry .device-deps, .snap; .snap/tree.tgz = `git archive HEAD`):
#   rm -rf /tmp/t && mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session20/s16.sh $OUT
O=$1; S=$O/s16-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
cd /tmp/t || exit 1
for f in model-for-large-fallbacks rung3-small-c-splits; do
  patch -p1 < bench/results/h200/runs/session19/$f.patch >> $S 2>&1 || { cat $S; exit 1; }
done
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_dispatch test_gemm_fp32 test_gemm_tensor_core" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 100 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
tail -4 $S
