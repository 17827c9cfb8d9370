#!/bin/bash
# Session 16, call 3 (no full build): does staging only a short K's part of A's chunk speed
# up the CUDA-core skinny kernel on small products, and do its 16-20 bytes of ptxas spills
# (16-row fp32 kernels) cost the large ones? probe15 from /tmp/m (the patches of q2, staging
# the whole chunk) and /tmp/t (short K staged), hot per call on the small fp32 rows of the
# sweep and on large 16- and 8-row ones (vector and scalar B, along n and along k); then ncu
# on both builds' kernels for 9x570x26 and 39x13x32 fp32. Command (carry .device-deps, .snap):
#   rm -rf /tmp/m /tmp/t && mkdir -p /tmp/m /tmp/t && tar xzf .snap/main.tgz -C /tmp/m &&
#     tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/m/ && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session16/q3.sh $OUT
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session15
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/q3-probe.txt
probe() { (cd $2 && nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
  -I .device-deps/include $P/probe15.cu -o $1 -L.device-deps/lib/x86_64-linux-gnu -lbenchmark -lcublas); }
probe /tmp/probe_main /tmp/m > /tmp/b1.txt 2>&1 & probe /tmp/probe_new /tmp/t > /tmp/b2.txt 2>&1; wait
tail -3 /tmp/b1.txt /tmp/b2.txt >> $O/q3-probe.txt
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
A="9x570x26_cn_rn_p6_2_2 39x13x32_cn_cn_p4_7_0 18x13x11_rt_ct_p1_6_0 16x17x396_rn_cn_p0_7_4 1283x3x31_cn_rn_p4_0_3 492x2x10_rt_rn_p2_1_6 16x16384x16384_rn_rn_p0_1_0 16x16384x16384_rn_rn_p0_0_0 8x16384x16384_rn_rn_p0_1_0 13x8192x4096_rn_cn_p0_1_0 16x16384x300_rn_rn_p0_1_0"
for x in main new; do echo "== $x" >> $O/q3-probe.txt; timeout 60 /tmp/probe_$x fp32 $A >> $O/q3-probe.txt 2>&1; done
for x in main new; do
  PROBE_PROFILE=1 timeout 90 ncu --profile-from-start off -k regex:skinny_along --section SpeedOfLight \
    --section WarpStateStats --section LaunchStats --metrics smsp__inst_executed.sum,smsp__inst_executed.max \
    /tmp/probe_$x fp32 9x570x26_cn_rn_p6_2_2 39x13x32_cn_cn_p4_7_0 > $O/q3-ncu-$x.txt 2>&1; echo "ncu $x rc=$?"
done
cut -c1-160 $O/q3-probe.txt
grep -E "skinny_along|Duration|inst_executed|Warp Cycles Per Issued|Grid Size|Registers" $O/q3-ncu-*.txt | cut -c1-160
