#!/bin/bash
# Session 17, call 1: main with session 16's along-k-epilogue.patch applied and the
# read-through items (the wgmma kernel's C staging on rung 4's swizzled tile,
# `store_accumulators_staged` gone; the slices reduce through `detail::blend`), as one
# snapshot: full build, the whole suite while the four tools run on test_gemm_skinny,
# test_gemm_wgmma and test_gemm_dispatch, the three sweeps, then probe15's hot per-call times
# on the rows the changes aim at if time is left. Command (carry .device-deps, .snap):
#   rm -rf /tmp/t && mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session17/s1.sh $OUT
O=$1; cd /tmp/t || exit 1
S=$O/s1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
P=bench/results/h200/runs/session15
( nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
    -I .device-deps/include $P/probe15.cu -o /tmp/probe15 -L.device-deps/lib/x86_64-linux-gnu \
    -lbenchmark -lcublas > /tmp/probe-build.txt 2>&1 ) &
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-200} \
  SANITIZE_BINARIES="test_gemm_skinny test_gemm_wgmma test_gemm_dispatch" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" \
  timeout 120 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
wait
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
if [ $SECONDS -lt 540 ]; then
  ( timeout 25 /tmp/probe15 fp32 16x17x396_rn_cn_p0_7_4 13x8192x4096_rn_rn_p0_0_0 9x570x26_cn_rn_p6_2_2
    timeout 20 /tmp/probe15 fp16 6085x6x228_ct_cn_p2_7_3 4096x4096x4096_rn_rn_p0_0_0 10535x4849x17_rt_rt_p5_1_2 ) > $O/s1-probe.txt 2>&1
fi
grep -v "^\[" $S | tail -40; cut -c1-150 $O/s1-probe.txt 2>/dev/null
