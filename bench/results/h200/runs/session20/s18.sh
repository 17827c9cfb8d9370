#!/bin/bash
# Session 20, not yet run: main with rung3-32-row-tiles.patch (rung 3's 32 x 128 and 128 x 32
# tiles for C of at most 32 rows or columns, 6 blocks a SM, no spills), built whole: the suite,
# the four tools on test_gemm_fp32 and test_gemm_dispatch, then the fp32 sweep beside main's
# (built in /tmp/m) for the three rows whose plan it changes (plan printer): 32x16384x16384
# (822 us on the H100 in s16, cuBLAS 502), 16384x32x16384 (868, 541), 1950x23x670 (17.3, 10.9).
# ~450 s on an H100. Command (carry .device-deps, .snap; .snap/tree.tgz = `git archive HEAD`):
#   rm -rf /tmp/t /tmp/m && mkdir -p /tmp/t /tmp/m && tar xzf .snap/tree.tgz -C /tmp/t && tar xzf .snap/tree.tgz -C /tmp/m &&
#     cp -r .device-deps /tmp/t/ && cp -r .device-deps /tmp/m/ && bash /tmp/t/bench/results/h200/runs/session20/s18.sh $OUT
O=$1; S=$O/s18-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
cd /tmp/t || exit 1
patch -p1 < bench/results/h200/runs/session20/rung3-32-row-tiles.patch >> $S 2>&1 || { cat $S; exit 1; }
(cd /tmp/m && BUILD_TARGETS="bench_gemm_sweep_fp32" nice scripts/gpu-check.sh /tmp/om build > /tmp/m-build.txt 2>&1) &
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_fp32 test_gemm_dispatch" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
wait
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
rows='(32x16384x16384_rn_rn|16384x32x16384_rn_rn|1950x23x670_rt_rt_p3_2_2)'
for tree in t m; do
  /tmp/$tree/build/h200/bench/bench_gemm_sweep_fp32 --benchmark_filter="$rows" --benchmark_repetitions=3 \
    --benchmark_enable_random_interleaving=true --benchmark_out=$O/s18-rows-$tree.json > /dev/null 2>> $S
done
echo "rows done at ${SECONDS}s" >> $S
tail -4 $S
