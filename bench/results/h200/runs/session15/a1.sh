#!/bin/bash
# Session 15, call 1 (after n1 and n3b on an H100): the wgmma epilogue staged through shared
# memory where C's rows are off 32-byte sectors, rung 5's split up to 64 slices, the slices
# reduce up to 2^18 elements. The six GEMM test binaries (at once), the four tools on
# test_gemm_wgmma, the three sweeps in one run of the project's script, then probe15 (hot
# per-call times against cuBLAS) and ncu's warp states on the 16-bit one-row skinny kernels.
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session15
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
( nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
    -I .device-deps/include $P/probe15.cu -o /tmp/probe15 -L.device-deps/lib/x86_64-linux-gnu \
    -lbenchmark -lcublas > $O/a1-probe-build.txt 2>&1 ) &
T="test_gemm_wgmma test_gemm_dispatch test_gemm_tf32 test_gemm_tensor_core test_gemm_fp32 test_gemm_skinny"
BUILD_TARGETS="$T bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" \
  scripts/gpu-check.sh $O/a build > $O/a1-build-summary.txt 2>&1 || { tail -30 $O/a1-build-summary.txt; exit 1; }
tail -1 $O/a1-build-summary.txt; rm -f $O/a/build.log
for t in $T; do ( timeout 200 build/h200/tests/$t > $O/a1-$t.txt 2>&1; echo "$t rc=$? $(tail -2 $O/a1-$t.txt | tr '\n' ' ')" ) & done; wait
SANITIZE_JOBS=4 SANITIZE_TIMEOUT=200 SANITIZE_BINARIES="test_gemm_wgmma" scripts/gpu-check.sh $O/a sanitize > $O/a1-sanitize.txt 2>&1
grep -h "^== " $O/a/sanitizer.log; rm -f $O/a/sanitizer.log
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" \
  timeout 150 scripts/gpu-check.sh $O/g bench > $O/a1-bench-summary.txt 2>&1; echo "bench rc=$?"; rm -f $O/g/bench.log
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
B16="301x1x87_rt_ct_p2_5_3 1x247x37_cn_rn_p0_3_6 1x2869x1368_cn_cn_p1_2_0 1x687x9767_cn_rt_p6_3_2 10535x4849x17_rt_rt_p5_1_2 2502x11840x18_rt_cn_p4_7_6 15654x3498x96_rt_ct_p1_4_3 654x3234x130_ct_ct_p6_5_1 256x256x16384_rn_rn_p0_0_0 128x1024x16384_rn_rn_p0_0_0 16384x16384x16_rn_rn_p0_0_0"
( timeout 60 /tmp/probe15 bf16 $B16; timeout 30 /tmp/probe15 fp32 301x1x87_rt_ct_p2_5_3 1x247x37_cn_rn_p0_3_6 ) > $O/a1-probe.txt 2>&1
cut -c1-160 $O/a1-probe.txt
PROBE_PROFILE=1 timeout 100 ncu --profile-from-start off -k regex:skinny_along --section SpeedOfLight \
  --section WarpStateStats --section LaunchStats --section Occupancy /tmp/probe15 bf16 301x1x87_rt_ct_p2_5_3 \
  1x247x37_cn_rn_p0_3_6 1x2869x1368_cn_cn_p1_2_0 > $O/a1-ncu.txt 2>&1; echo "ncu rc=$?"
