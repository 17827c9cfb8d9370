#!/bin/bash
# Session 18, call 2: every kernel of a GEMM (the copies of misaligned operands, the product of
# each rung from 3 up, the split-K reduce) launched as a programmatic dependent (PDL, sm_90):
# allow_dependent_launch() and wait_for_prior_grids() first in each kernel, so that a call's
# second and third kernels are resident before the first ends. Why: fp16's small products run
# 4.6-9 us where cuBLAS's fp16 kernels take 3.2-4.6, and the split ones are two launches
# (1492x37x139 fp16: fallback + reduce, 9.0 us against 4.6). PDL halved a back-to-back saxpy
# and took a two-launch sum from 5.9 to 3.5 us (issue 17). Predicted: the two- and three-launch
# rows 1-2 us faster, one-launch rows as before. Also (probe only, not landed): the wgmma
# epilogue forced through the swizzled staging tile (a row's 128 bytes a store) on the
# output-bound 16384x16384xK rows (bf16 442-476 us, cuBLAS 355-372; rung 3 fp32 347).
# Full build, the whole suite while the four tools run on test_gemm_dispatch, test_gemm_skinny,
# test_gemm_fp32 and test_gemm_wgmma, the three sweeps and bench_gemm_skinny, then probe15 with
# and without the staged epilogue. Command (carry .device-deps, .snap):
#   rm -rf /tmp/t && mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session18/s7.sh $OUT
O=$1; cd /tmp/t || exit 1
S=$O/s7-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
P=bench/results/h200/runs/session15
rm -rf /tmp/v && cp -r include /tmp/v && sed -i 's/    if (c_rows_on_sectors(p)) {/    if (false \&\& c_rows_on_sectors(p)) {/' \
  /tmp/v/foundry/gemm/gemm_wgmma.cuh && grep -c "false && c_rows_on_sectors" /tmp/v/foundry/gemm/gemm_wgmma.cuh >> $S
for v in probe15:include probe15s:/tmp/v; do
  ( nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I ${v#*:} -I bench \
      -I .device-deps/include $P/probe15.cu -o /tmp/${v%%:*} -L.device-deps/lib/x86_64-linux-gnu \
      -lbenchmark -lcublas > /tmp/${v%%:*}-build.txt 2>&1 ) &
done
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=16 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-200} \
  SANITIZE_BINARIES="test_gemm_dispatch test_gemm_skinny test_gemm_fp32 test_gemm_wgmma" \
  scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 150 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
wait
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
if [ $SECONDS -lt 500 ]; then
  for b in probe15 probe15s; do
    echo "== $b" >> $O/s7-probe.txt
    timeout 25 /tmp/$b bf16 16384x16384x1_rn_rn_p0_0_0 16384x16384x16_rn_rn_p0_0_0 16384x16384x64_rn_rn_p0_0_0 \
      8192x8192x1024_rn_rn_p0_0_0 4096x4096x4096_rn_rn_p0_0_0 >> $O/s7-probe.txt 2>&1
  done
  timeout 25 /tmp/probe15 fp16 1492x37x139_rn_ct_p6_2_0 25x176x187_cn_rt_p4_1_0 206x120x2_rt_rt_p5_1_0 \
    12x470x7800_rt_rn_p6_1_5 1024x1024x8192_rn_rn_p0_0_0 >> $O/s7-probe.txt 2>&1
fi
grep -v "^\[" $S | tail -32; cut -c1-150 $O/s7-probe.txt 2>/dev/null
