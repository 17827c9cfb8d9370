#!/bin/bash
# Session 16, call 5 (the last 240 s of the budget; not the whole suite): the along-k skinny
# epilogue by halving exchanges (sum_lanes_and_store: 31-62 shuffles for 32-64 results where a
# tree a result took 160-320, every lane storing), as along-k-epilogue.patch. probe15 from main
# (/tmp/m) and the patch (/tmp/t) on the along-k rows, then the patched test_gemm_skinny with
# memcheck and racecheck. Command (carry .device-deps, .snap):
#   rm -rf /tmp/m /tmp/t && mkdir -p /tmp/m /tmp/t && tar xzf .snap/main.tgz -C /tmp/m &&
#     tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/m/ && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session16/q5.sh $OUT
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session15
S=$O/q5-summary.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $S
probe() { (cd $2 && nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
  -I .device-deps/include $P/probe15.cu -o $1 -L.device-deps/lib/x86_64-linux-gnu -lbenchmark -lcublas); }
probe /tmp/probe_main /tmp/m > /tmp/b1.txt 2>&1 & probe /tmp/probe_new /tmp/t > /tmp/b2.txt 2>&1 &
BUILD_TARGETS=test_gemm_skinny scripts/gpu-check.sh /tmp/a build > /tmp/build.txt 2>&1 &
wait; tail -n 2 /tmp/b1.txt /tmp/b2.txt /tmp/build.txt >> $S
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
F="16x17x396_rn_cn_p0_7_4 13x8192x4096_rn_cn_p0_1_0 13x8192x4096_rn_cn_p0_0_0 3x8192x4096_rn_cn_p0_1_0"
B="16x17x396_rn_cn_p0_7_4 1x2869x1368_cn_cn_p1_2_0 1x687x9767_cn_rt_p6_3_2 1x16384x16384_rn_cn_p0_0_0"
for x in main new; do
  ( timeout 25 /tmp/probe_$x fp32 $F; timeout 25 /tmp/probe_$x bf16 $B; timeout 15 /tmp/probe_$x fp16 6085x6x228_ct_cn_p2_7_3 ) > $O/q5-probe-$x.txt 2>&1
done
T=build/h200/tests/test_gemm_skinny
( timeout 60 $T > /tmp/t1.txt 2>&1; echo "test rc=$? $(tail -2 /tmp/t1.txt | tr '\n' ' ')" >> $S ) &
( timeout 90 compute-sanitizer --tool memcheck --error-exitcode 99 $T "~[.]~[large]~[not_under_sanitizer]" > /tmp/s1.txt 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' /tmp/s1.txt)" >> $S ) &
( timeout 90 compute-sanitizer --tool racecheck --error-exitcode 99 $T "~[.]~[large]~[not_under_sanitizer]~[racecheck_slow]" > /tmp/s2.txt 2>&1
  echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' /tmp/s2.txt)" >> $S ) &
wait
cat $S; paste -d'\n' $O/q5-probe-main.txt $O/q5-probe-new.txt | cut -c1-150
