#!/bin/bash
# Session 15, call 2 (fresh machine): the whole suite on the final tree (the wgmma epilogue
# staged where C's rows are off sectors, rung 3's staged epilogue,
# rung 5's split up to 64 for a small C), the four tools on test_gemm_fp32, test_gemm_wgmma
# and test_gemm_skinny beside the tests, the three sweeps in one run of the project's script,
# then probe15's hot per-call times on the rows these changes aim at. At most 8 files come
# back: summary, ctest and sanitizer logs, the sweeps' JSON, the probe.
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session15
S=$O/f1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
( nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
    -I .device-deps/include $P/probe15.cu -o /tmp/probe15 -L.device-deps/lib/x86_64-linux-gnu \
    -lbenchmark -lcublas > /tmp/probe-build.txt 2>&1 ) &
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=8 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_fp32 test_gemm_wgmma test_gemm_skinny" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" \
  timeout 150 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$?" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
wait
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
( timeout 60 /tmp/probe15 bf16 10535x4849x17_rt_rt_p5_1_2 2502x11840x18_rt_cn_p4_7_6 16384x16384x16_rn_rn_p0_0_0 \
    16384x16384x1_rn_rn_p0_0_0 256x256x16384_rn_rn_p0_0_0 128x1024x16384_rn_rn_p0_0_0 4096x4096x4096_rn_rn_p0_0_0
  timeout 60 /tmp/probe15 fp32 5789x645x1_cn_ct_p6_0_4 10535x4849x17_rt_rt_p5_1_2 2502x11840x18_rt_cn_p4_7_6 \
    654x3234x130_ct_ct_p6_5_1 1110x610x2_rn_ct_p1_4_7 4096x4096x4096_rn_rn_p0_0_0 ) > $O/f1-probe.txt 2>&1
cat $S | grep -v "^\[" | tail -40; cut -c1-150 $O/f1-probe.txt
