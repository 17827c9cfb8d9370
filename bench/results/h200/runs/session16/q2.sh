#!/bin/bash
# Session 16, call 2 (fresh machine): session 15's two patches as landed, with the skinny
# one's narrow layout (2 columns a lane) only where B is read one element at a time and the
# wide layout's grid fills less than half the slots (q1: the narrow layout everywhere ran
# 1 x 16384 x 16384 bf16, ldb off by 3, in 967 us against 386). /tmp/t is the patched tree
# (.snap/tree.tgz), /tmp/m main before them (.snap/main.tgz) for probe15's baseline. The whole
# suite; the four tools on test_gemm_skinny; racecheck on test_gemm_tensor_core's fallback
# cases (q1's whole-binary racecheck ran out of time; its other three tools found 0 errors and
# rung 4 has not changed since); the sweeps; probe15 from main and from the patches.
# Command, from the repository root (carry .device-deps and .snap):
#   rm -rf /tmp/m /tmp/t && mkdir -p /tmp/m /tmp/t && tar xzf .snap/main.tgz -C /tmp/m &&
#     tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/m/ && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session16/q2.sh $OUT
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session15
S=$O/q2-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
probe() { (cd $2 && nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
  -I .device-deps/include $P/probe15.cu -o $1 -L.device-deps/lib/x86_64-linux-gnu -lbenchmark -lcublas); }
( probe /tmp/probe_main /tmp/m; probe /tmp/probe_patched /tmp/t ) > /tmp/probe-build.txt 2>&1 &
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
race() { timeout 240 compute-sanitizer --tool racecheck --error-exitcode 99 build/h200/tests/test_gemm_tensor_core "$1" \
    > /tmp/race$2.txt 2>&1; echo "racecheck test_gemm_tensor_core '$1' rc=$?" >> /tmp/race$2.txt; }
( race "*sectors*" 1 & race "gemm_tensor_core falls back*" 2; wait
  grep -hE "SUMMARY|test cases|rc=" /tmp/race1.txt /tmp/race2.txt > $O/q2-racecheck-tensor-core.txt ) &
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=8 TEST_JOBS=8 SANITIZE_TIMEOUT=200 \
  SANITIZE_BINARIES="test_gemm_skinny" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
wait
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" \
  timeout 120 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$?" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
tail -3 /tmp/probe-build.txt >> $S
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
A="301x1x87_rt_ct_p2_5_3 1x247x37_cn_rn_p0_3_6 1x16384x16384_rn_rn_p0_3_0 4x16384x16384_rn_rn_p0_3_0 1x4096x4096_rn_rn_p0_1_0"
B="5789x645x1_cn_ct_p6_0_4 117x10579x22_ct_ct_p2_2_2 4228x263x2646_rn_rt_p4_6_2"
for x in main patched; do
  ( for t in bf16 fp32; do timeout 30 /tmp/probe_$x $t $A; done; timeout 30 /tmp/probe_$x bf16 $B ) > $O/q2-probe-$x.txt 2>&1
done
grep -v "^\[" $S | tail -32; cat $O/q2-racecheck-tensor-core.txt
paste -d'\n' $O/q2-probe-main.txt $O/q2-probe-patched.txt | cut -c1-150
