#!/bin/bash
# Session 20, for the next GPU session's first call (s17 with the patch, in one build): main with
# rung3-32-row-tiles.patch, the whole suite, the four tools on test_gemm_dispatch,
# test_gemm_wgmma, test_gemm_skinny, test_gemm_tensor_core and test_gemm_fp32, the sweeps and
# bench_gemm_skinny (the README's rows for the device: scripts/h200-report.sh, once the patch
# lands), and main's fp32 sweep, built beside it in /tmp/m, on the three rows whose plan the
# patch changes. ~450 s on an H100. Then runs/session17/s4.sh on the same warm machine, at once.
# Command (carry .device-deps, .snap; .snap/tree.tgz = `git archive HEAD`):
#   rm -rf /tmp/t /tmp/m && mkdir -p /tmp/t /tmp/m && tar xzf .snap/tree.tgz -C /tmp/t && tar xzf .snap/tree.tgz -C /tmp/m &&
#     cp -r .device-deps /tmp/t/ && cp -r .device-deps /tmp/m/ && bash /tmp/t/bench/results/h200/runs/session20/s19.sh $OUT
O=$1; S=$O/s19-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
cd /tmp/t || exit 1
patch -p1 < bench/results/h200/runs/session20/rung3-32-row-tiles.patch >> $S 2>&1 || { cat $S; exit 1; }
(cd /tmp/m && BUILD_TARGETS="bench_gemm_sweep_fp32" nice scripts/gpu-check.sh /tmp/om build > /tmp/m-build.txt 2>&1) &
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_dispatch test_gemm_wgmma test_gemm_skinny test_gemm_tensor_core test_gemm_fp32" \
  scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
wait
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 100 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
/tmp/m/build/h200/bench/bench_gemm_sweep_fp32 --benchmark_filter='(32x16384x16384_rn_rn|16384x32x16384_rn_rn|1950x23x670_rt_rt_p3_2_2)' \
  --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true --benchmark_out=$O/s19-main-rows.json > /dev/null 2>> $S
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
echo "done at ${SECONDS}s" >> $S
tail -4 $S
