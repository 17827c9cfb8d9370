#!/bin/bash
# Session 17, call 5: s3's change made safe for the large products. s3 (the skinny kernels
# staging only the part of A that a short K reads) passed the whole suite and the tools, and
# cut the small rows (9x570x26 fp32 7.7 -> 5.9 us, 18x13x11 6.9 -> 4.7), but its loop over
# k_staged's rounds moved the large ones by 10-30% (16384x16x16384 fp32 685 -> 902 us). Now a
# whole chunk is staged by the loop as it was, the shorter rounds only for a chunk that the
# slice's end shortens, and only in the along-n kernel (the along-k kernel spilled 4-36 bytes
# with it); ptxas: along-k unchanged, along-n no spills. Full build, the whole suite while the
# four tools run on test_gemm_skinny and test_gemm_dispatch, the three sweeps and
# bench_gemm_skinny, then probe15 on the small rows and the large skinny ones. Command (carry
# .device-deps, .snap):
#   rm -rf /tmp/t && mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session17/s5.sh $OUT
O=$1; cd /tmp/t || exit 1
S=$O/s5-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
P=bench/results/h200/runs/session15
( nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
    -I .device-deps/include $P/probe15.cu -o /tmp/probe15 -L.device-deps/lib/x86_64-linux-gnu \
    -lbenchmark -lcublas > /tmp/probe-build.txt 2>&1 ) &
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-200} \
  SANITIZE_BINARIES="test_gemm_skinny test_gemm_dispatch" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 150 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
wait
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
if [ $SECONDS -lt 430 ]; then
  ( timeout 40 /tmp/probe15 fp32 9x570x26_cn_rn_p6_2_2 18x13x11_rt_ct_p1_6_0 492x2x10_rt_rn_p2_1_6 301x1x87_rt_ct_p2_5_3 \
      1283x3x31_cn_rn_p4_0_3 16x16384x16384_rn_rn_p0_0_0 16384x16x16384_rn_rn_p0_0_0 16384x4x16384_rn_rn_p0_0_0
    timeout 30 /tmp/probe15 bf16 301x1x87_rt_ct_p2_5_3 1x2869x1368_cn_cn_p1_2_0 1x247x37_cn_rn_p0_3_6 \
      1x16384x16384_rn_rn_p0_0_0 16384x1x16384_rn_rn_p0_0_0 ) > $O/s5-probe.txt 2>&1
fi
grep -v "^\[" $S | tail -40; cut -c1-150 $O/s5-probe.txt 2>/dev/null
