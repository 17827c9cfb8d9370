#!/bin/bash
# Session 16, call 4 (fresh machine): the final tree. Session 15's two patches with the narrow
# layout only where it adds blocks to a small grid (q2), the test's expectations fixed (q2's one
# failure: 16 x 301 x 87 fp32 splits the wide tiles into more blocks than the narrow layout
# makes), and the along-n epilogue shared by the four warps (each thread adds and stores its
# share of the tile; warp 0 alone did all of it). The whole suite with the four tools on
# test_gemm_skinny; the sweeps; probe15 from q2's tree (/tmp/m, .snap/main.tgz) and from this one.
# Command (carry .device-deps, .snap):
#   rm -rf /tmp/m /tmp/t && mkdir -p /tmp/m /tmp/t && tar xzf .snap/main.tgz -C /tmp/m &&
#     tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/m/ && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session16/q4.sh $OUT
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session15
S=$O/q4-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
probe() { (cd $2 && nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
  -I .device-deps/include $P/probe15.cu -o $1 -L.device-deps/lib/x86_64-linux-gnu -lbenchmark -lcublas); }
( probe /tmp/probe_main /tmp/m; probe /tmp/probe_new /tmp/t ) > /tmp/probe-build.txt 2>&1 &
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=8 TEST_JOBS=8 SANITIZE_TIMEOUT=200 \
  SANITIZE_BINARIES="test_gemm_skinny" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" \
  timeout 120 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$?" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
wait; tail -n 3 /tmp/probe-build.txt >> $S
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
F="9x570x26_cn_rn_p6_2_2 39x13x32_cn_cn_p4_7_0 18x13x11_rt_ct_p1_6_0 1283x3x31_cn_rn_p4_0_3 492x2x10_rt_rn_p2_1_6 16x16384x300_rn_rn_p0_1_0 16x16384x16384_rn_rn_p0_1_0 16x16384x16384_rn_rn_p0_0_0 8x16384x16384_rn_rn_p0_1_0"
B="301x1x87_rt_ct_p2_5_3 1x247x37_cn_rn_p0_3_6 1x16384x16384_rn_rn_p0_3_0 1x16384x16384_rn_rn_p0_0_0"
for x in main new; do
  ( timeout 60 /tmp/probe_$x fp32 $F; timeout 40 /tmp/probe_$x bf16 $B ) > $O/q4-probe-$x.txt 2>&1
done
grep -v "^\[" $S | tail -32
paste -d'\n' $O/q4-probe-main.txt $O/q4-probe-new.txt | cut -c1-150
