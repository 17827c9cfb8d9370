#!/bin/bash
# Next GPU session (written in session 17, not yet run): two patches, not run on a GPU.
# 1. skinny-raw-loads.patch: the skinny kernels' scalar paths hold B's elements as loaded (a
#    register each, converted where the FMAs use them) instead of packing 16-bit pairs into
#    words as they arrive. Why: the 16-bit scalar rows ran slower than fp32 with twice the
#    bytes (301x1x87 bf16 11.2 us, fp32 6.0; 1x2869x1368 16.0 vs 13.3; 1x247x37 7.0 vs 4.4)
#    with ~10x fp32's long-scoreboard stalls an instruction under ncu at the same instruction
#    count (p2). ptxas: no spills; 6-32 more registers in the 16-bit scalar kernels.
#    Predicted: those rows at about fp32's times.
# 2. wgmma-narrow.patch: 128 x 64 wgmma tiles (m64n64k16, 8 stages of 24 KiB) for 16-bit
#    products of N at most 64, where m64n256 multiplies zeros in 3/4 or more of its tensor
#    work (16384x16x16384 bf16 279 us, cuBLAS 190). ptxas: 8 more kernel instances, no
#    spills; test_gemm_wgmma's host cases pass (layouts of B at 64 columns, the ring, the
#    plan rule) and a new GPU case covers N 1-64 in every layout, split-K, C off sectors.
#    Predicted: 16384x{16,32,64}x16384 at 190-200 us (memory-bound).
# Both applied to main's snapshot: full build, the whole suite while the four tools run on
# test_gemm_skinny, test_gemm_wgmma and test_gemm_dispatch, the three sweeps and
# bench_gemm_skinny, then probe15 on the rows they aim at and, if time is left, ncu on the
# N = 16 and 64 wgmma rows. If all pass and the other rows hold, `git apply` each patch with
# its figures (a failure names its binary: land the other). Command (carry .device-deps, .snap):
#   rm -rf /tmp/t && mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session17/s6.sh $OUT
O=$1; cd /tmp/t || exit 1
S=$O/s6-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
for f in skinny-raw-loads wgmma-narrow; do
  patch -p1 < bench/results/h200/runs/session17/$f.patch >> $S 2>&1 || { cat $S; exit 1; }
done
P=bench/results/h200/runs/session15
( nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
    -I .device-deps/include $P/probe15.cu -o /tmp/probe15 -L.device-deps/lib/x86_64-linux-gnu \
    -lbenchmark -lcublas > /tmp/probe-build.txt 2>&1 ) &
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-200} \
  SANITIZE_BINARIES="test_gemm_skinny test_gemm_wgmma test_gemm_dispatch" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 150 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
wait
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
if [ $SECONDS -lt 430 ]; then
  ( timeout 40 /tmp/probe15 bf16 301x1x87_rt_ct_p2_5_3 1x2869x1368_cn_cn_p1_2_0 1x247x37_cn_rn_p0_3_6 \
      1x687x9767_cn_rt_p6_3_2 1x891x7967_rt_rt_p6_6_1 1x16384x16384_rn_rn_p0_0_0 16384x1x16384_rn_rn_p0_0_0
    timeout 30 /tmp/probe15 fp32 301x1x87_rt_ct_p2_5_3 1x2869x1368_cn_cn_p1_2_0 1x247x37_cn_rn_p0_3_6
    timeout 40 /tmp/probe15 fp16 16384x16x16384_rn_rn_p0_0_0 16384x32x16384_rn_rn_p0_0_0 16384x64x16384_rn_rn_p0_0_0 \
      82x14x11373_rt_ct_p6_3_5 4096x4096x4096_rn_rn_p0_0_0 ) > $O/s6-probe.txt 2>&1
fi
# What binds wgmma where N is 16-64 and K deep, now on the narrow tiles: the tensor pipe or the loads.
if [ $SECONDS -lt 480 ]; then
  PROBE_PROFILE=1 timeout 90 ncu --profile-from-start off --section SpeedOfLight --section MemoryWorkloadAnalysis \
    /tmp/probe15 bf16 16384x16x16384_rn_rn_p0_0_0 16384x64x16384_rn_rn_p0_0_0 > $O/s6-ncu-wgmma.txt 2>&1
fi
grep -v "^\[" $S | tail -40; cut -c1-150 $O/s6-probe.txt 2>/dev/null; grep -E "^  [a-zA-Z_].*\(|Throughput|Duration|Busy" $O/s6-ncu-wgmma.txt 2>/dev/null | cut -c1-120
