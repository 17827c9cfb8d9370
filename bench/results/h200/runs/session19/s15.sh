#!/bin/bash
# Session 19, the smallest call: main with model-for-large-fallbacks.patch and
# rung3-small-c-splits.patch, the bf16 and fp32 sweeps' rows whose plans they change (foundry
# and cuBLAS), with two unchanged rows to place the machine against s12. Measures, verifies
# nothing. Command (carry .device-deps, .snap; .snap/tree.tgz = `git archive HEAD`):
#   rm -rf /tmp/f && mkdir -p /tmp/f && tar xzf .snap/tree.tgz -C /tmp/f && cp -r .device-deps /tmp/f/ &&
#     bash /tmp/f/bench/results/h200/runs/session19/s15.sh $OUT
O=$1; S=$O/s15-summary.txt; cd /tmp/f || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
for f in model-for-large-fallbacks rung3-small-c-splits; do patch -p1 < bench/results/h200/runs/session19/$f.patch > /dev/null || exit 1; done
BUILD_TARGETS="bench_gemm_sweep_bf16 bench_gemm_sweep_fp32" scripts/gpu-check.sh /tmp/of build >> $S 2>&1 || { tail $S; exit 1; }
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
same='4096x4096x4096_rn_rn|1024x1024x8192_rn_rn'
b=build/h200/bench/bench_gemm_sweep
${b}_bf16 --benchmark_filter="(15992x9x14282_ct_cn_p5_1_6|127x5368x617_rn_cn_p3_2_3|125x10970x318_rn_cn_p4_4_6|4228x263x2646_rn_rt_p4_6_2|$same)" \
  --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true --benchmark_out=$O/s15-bf16.json > /dev/null 2>> $S
${b}_fp32 --benchmark_filter="(39x384x8368_ct_rn_p5_0_4|256x256x16384_rn_rn|$same)" \
  --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true --benchmark_out=$O/s15-fp32.json > /dev/null 2>> $S
echo "done at ${SECONDS}s" >> $S; grep -v "^\[" $S | tail -8
