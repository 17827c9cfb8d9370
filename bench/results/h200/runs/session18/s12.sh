#!/bin/bash
# Written in session 18 for the next GPU session (not run yet). Main with two patches that were
# measured (wgmma-short-k-staged) or only compiled (stage-a-element-helper), the whole suite, the
# four tools on test_gemm_wgmma, test_gemm_skinny and test_gemm_dispatch, the sweeps and
# bench_gemm_skinny; beside it, main with fallback-trigger-after-k.patch alone, its
# test_gemm_tensor_core in full, to name the assertion that failed once with it in session 18.
# Land each patch of the first tree that passes (the sweeps' large skinny rows: 16384x16x16384
# fp32 683 us, 16x16384x16384 445, must hold for the stage_a patch). Command (carry
# .device-deps, .snap; .snap/tree.tgz = `git archive HEAD`):
#   rm -rf /tmp/t /tmp/f && mkdir -p /tmp/t /tmp/f && tar xzf .snap/tree.tgz -C /tmp/t && tar xzf .snap/tree.tgz -C /tmp/f &&
#     cp -r .device-deps /tmp/t/ && cp -r .device-deps /tmp/f/ && bash /tmp/t/bench/results/h200/runs/session18/s12.sh $OUT
O=$1; R=bench/results/h200/runs/session18
S=$O/s12-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
(cd /tmp/t && for f in wgmma-short-k-staged stage-a-element-helper; do patch -p1 < $R/$f.patch >> $S 2>&1 || exit 1; done) || { cat $S; exit 1; }
(cd /tmp/f && patch -p1 < $R/fallback-trigger-after-k.patch > /dev/null && BUILD_TARGETS=test_gemm_tensor_core \
  nice scripts/gpu-check.sh /tmp/of build > /tmp/f-build.txt 2>&1) &
cd /tmp/t
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-200} \
  SANITIZE_BINARIES="test_gemm_wgmma test_gemm_skinny test_gemm_dispatch" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 100 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
wait
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
[ $SECONDS -lt 520 ] && timeout $((560 - SECONDS)) /tmp/f/build/h200/tests/test_gemm_tensor_core > $O/s12-fallback-trigger.txt 2>&1
echo "fallback-trigger test rc=$? at ${SECONDS}s" >> $S
grep -v "^\[" $S | tail -30; grep -B5 -A25 "FAILED" $O/s12-fallback-trigger.txt | head -60
