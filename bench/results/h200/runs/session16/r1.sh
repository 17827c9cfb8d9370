#!/bin/bash
# Next GPU session (written in session 16, not yet run): along-k-epilogue.patch (the along-k
# skinny epilogue by halving exchanges; q5 ran its test_gemm_skinny with memcheck and racecheck
# clean and measured 16x17x396 fp32 17.4 -> 9.5 us, 13x8192x4096 109.8 -> 99.1) on the whole
# suite: applied to main's snapshot, everything built, the whole suite with the four tools on
# test_gemm_skinny and test_gemm_dispatch, the three sweeps. If all pass, commit the patch
# (`git apply`) with the figures. Command (carry .device-deps, .snap):
#   rm -rf /tmp/t && mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session16/r1.sh $OUT
O=$1; cd /tmp/t || exit 1
S=$O/r1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
patch -p1 < bench/results/h200/runs/session16/along-k-epilogue.patch >> $S 2>&1 || { cat $S; exit 1; }
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=8 TEST_JOBS=8 SANITIZE_TIMEOUT=200 \
  SANITIZE_BINARIES="test_gemm_skinny test_gemm_dispatch" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" \
  timeout 120 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$?" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
grep -v "^\[" $S | tail -30
