#!/bin/bash
# Session 19. Main with runs/session18/fallback-trigger-after-k.patch and
# runs/session19/wgmma-stores-c-directly.patch (the epilogue's rule as one predicate that a host
# test checks; the kernel's choice unchanged; test_gemm_wgmma joins the tools): the whole suite,
# the four tools on test_gemm_tensor_core, test_gemm_dispatch and test_gemm_wgmma (s12 ran them
# on test_gemm_skinny, which neither patch touches), the sweeps. Beside it, main with
# model-for-large-fallbacks.patch (the time model judges large products too, where rung 4's
# fallback is the alternative): the 16-bit sweeps' rows whose plan it changes, foundry and cuBLAS;
# and rung3-small-c-splits.patch (rung 3 splits K up to 64 ways where C has at most 2^16
# elements, as rung 5): the two fp32 rows whose plan it changes.
# Command (carry .device-deps, .snap; .snap/tree.tgz = `git archive HEAD`):
#   rm -rf /tmp/t /tmp/f && mkdir -p /tmp/t /tmp/f && tar xzf .snap/tree.tgz -C /tmp/t && tar xzf .snap/tree.tgz -C /tmp/f &&
#     cp -r .device-deps /tmp/t/ && cp -r .device-deps /tmp/f/ && bash /tmp/t/bench/results/h200/runs/session19/s13.sh $OUT
O=$1; S=$O/s13-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
(cd /tmp/t && patch -p1 < bench/results/h200/runs/session18/fallback-trigger-after-k.patch >> $S 2>&1 &&
  patch -p1 < bench/results/h200/runs/session19/wgmma-stores-c-directly.patch >> $S 2>&1) || { cat $S; exit 1; }
(cd /tmp/f && for f in model-for-large-fallbacks rung3-small-c-splits; do patch -p1 < bench/results/h200/runs/session19/$f.patch > /dev/null; done &&
  BUILD_TARGETS="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" nice scripts/gpu-check.sh /tmp/of build > /tmp/f-build.txt 2>&1) &
cd /tmp/t
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_tensor_core test_gemm_dispatch test_gemm_wgmma" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
wait
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
tail -3 /tmp/f-build.txt >> $S
rows='15992x9x14282_ct_cn_p5_1_6|127x5368x617_rn_cn_p3_2_3|125x10970x318_rn_cn_p4_4_6|4228x263x2646_rn_rt_p4_6_2'
for p in bf16 fp16; do
  /tmp/f/build/h200/bench/bench_gemm_sweep_$p --benchmark_filter="($rows)" --benchmark_repetitions=3 \
    --benchmark_enable_random_interleaving=true --benchmark_out=$O/s13-model-$p.json > /dev/null 2>> $S
done
/tmp/f/build/h200/bench/bench_gemm_sweep_fp32 --benchmark_filter="(39x384x8368_ct_rn_p5_0_4|256x256x16384_rn_rn)" \
  --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true --benchmark_out=$O/s13-splits-fp32.json > /dev/null 2>> $S
echo "model rows done at ${SECONDS}s" >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 100 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
grep -v "^\[" $S | tail -40
