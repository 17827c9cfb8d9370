#!/bin/bash
# Session 17, call 2: where the sweep's small products spend their time. probe15 (hot
# per-call times and plans) on the small rows that lose most, then one call of each under
# ncu (kernel by kernel: duration, launch shape, instructions, stall reasons), foundry's
# kernels and cuBLAS's side by side. Main's kernels (69fa2ca). Command (carry .device-deps, .snap):
#   rm -rf /tmp/t && mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session17/p2.sh $OUT
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session15
nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
  -I .device-deps/include $P/probe15.cu -o /tmp/probe15 -L.device-deps/lib/x86_64-linux-gnu \
  -lbenchmark -lcublas > $O/p2-build.txt 2>&1 || { cat $O/p2-build.txt; exit 1; }
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
F32="9x570x26_cn_rn_p6_2_2 18x13x11_rt_ct_p1_6_0 492x2x10_rt_rn_p2_1_6 301x1x87_rt_ct_p2_5_3 1492x37x139_rn_ct_p6_2_0"
B16="301x1x87_rt_ct_p2_5_3 1x2869x1368_cn_cn_p1_2_0 1x247x37_cn_rn_p0_3_6 16x17x396_rn_cn_p0_7_4"
H16="25x176x187_cn_rt_p4_1_0 1492x37x139_rn_ct_p6_2_0 608x118x51_rt_rn_p4_1_1 49x571x2_rn_cn_p1_0_7"
{ /tmp/probe15 fp32 $F32; /tmp/probe15 bf16 $B16; /tmp/probe15 fp16 $H16; } > $O/p2-probe.txt 2>&1
M=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block,smsp__inst_executed.sum,smsp__average_warp_latency_per_inst_issued.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,sm__cycles_elapsed.max
for prec in fp32 bf16 fp16; do
  case $prec in fp32) L=$F32;; bf16) L=$B16;; fp16) L=$H16;; esac
  PROBE_PROFILE=1 timeout 150 ncu --profile-from-start off --metrics $M /tmp/probe15 $prec $L > $O/p2-ncu-$prec.txt 2>&1
done
cut -c1-200 $O/p2-probe.txt
for f in $O/p2-ncu-*.txt; do grep -E "^  [a-zA-Z_].*\(|gpu__time_duration|launch__grid_size|smsp__inst_executed" $f | awk '{print $1, $2, $3}' | cut -c1-120; done | head -150
