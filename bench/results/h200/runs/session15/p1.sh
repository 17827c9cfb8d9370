#!/bin/bash
# Next GPU session, after f1.sh on its machine (written in session 15, not yet run): two
# patches, host-tested only. skinny-scalar-columns.patch: the CUDA-core along-n kernel holds 2
# columns a lane, 16 rows in flight, where B is read one element at a time.
# rung4-fallback-staged.patch: rung 4's fallback stores C off sectors through swizzled 2 KiB
# tiles in its operand tiles. probe15 built from main (/tmp/m) and from the patches, both run on
# the rows they aim at and on misaligned large skinny ones (B's ld off by 3: the scalar path's
# bandwidth); the patched test_gemm_skinny and test_gemm_tensor_core, the four tools on them,
# the three sweeps. On f1's machine, from the repository root (carry .device-deps and .snap):
#   rm -rf /tmp/m && mkdir -p /tmp/m && tar xzf .snap/tree.tgz -C /tmp/m && cp -r .device-deps /tmp/m/ &&
#     bash /tmp/t/bench/results/h200/runs/session15/p1.sh $OUT
# /tmp/t is f1's tree and build (patched here); /tmp/m an unpatched copy for main's probe.
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session15
[ -d /tmp/m/include ] || { echo "p1: /tmp/m (an unpatched snapshot of main) is missing"; exit 1; }
probe() { (cd $2 && nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
  -I .device-deps/include $P/probe15.cu -o $1 -L.device-deps/lib/x86_64-linux-gnu -lbenchmark -lcublas); }
probe /tmp/probe_main /tmp/m > $O/p1-probe-build-main.txt 2>&1 &
for f in skinny-scalar-columns rung4-fallback-staged; do
  patch -p1 < $P/$f.patch >> $O/p1-patch.txt 2>&1 || { cat $O/p1-patch.txt; exit 1; }
done
probe /tmp/probe_patched /tmp/t > $O/p1-probe-build.txt 2>&1 &
BUILD_TARGETS="test_gemm_skinny test_gemm_tensor_core bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" \
  scripts/gpu-check.sh $O/a build > $O/p1-summary.txt 2>&1 || { tail -30 $O/p1-summary.txt; exit 1; }
wait; rm -f $O/a/build.log
[ -x /tmp/probe_main ] && [ -x /tmp/probe_patched ] && rm -f $O/p1-probe-build-main.txt $O/p1-probe-build.txt  # 8 files come back
for t in test_gemm_skinny test_gemm_tensor_core; do
  timeout 200 build/h200/tests/$t > /tmp/p1-$t.txt 2>&1; echo "$t rc=$? $(tail -2 /tmp/p1-$t.txt | tr '\n' ' ')" >> $O/p1-summary.txt
done
SANITIZE_JOBS=8 SANITIZE_BINARIES="test_gemm_skinny test_gemm_tensor_core" scripts/gpu-check.sh $O/a sanitize >> $O/p1-summary.txt 2>&1
grep -h "^== " $O/a/sanitizer.log >> $O/p1-summary.txt
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" \
  timeout 150 scripts/gpu-check.sh $O/g bench >> $O/p1-summary.txt 2>&1; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $O/p1-summary.txt
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
S="301x1x87_rt_ct_p2_5_3 1x247x37_cn_rn_p0_3_6 82x14x11373_rt_ct_p6_3_5 1x16384x16384_rn_rn_p0_3_0 16384x1x16384_rn_rn_p3_0_0 4x16384x16384_rn_rn_p0_3_0"
F="5789x645x1_cn_ct_p6_0_4 117x10579x22_ct_ct_p2_2_2 4228x263x2646_rn_rt_p4_6_2 608x118x51_rt_rn_p4_1_1"
for x in main patched; do
  ( for t in bf16 fp32; do timeout 60 /tmp/probe_$x $t $S; done; timeout 60 /tmp/probe_$x bf16 $F ) > $O/p1-probe-$x.txt 2>&1
done
grep -v "^\[" $O/p1-summary.txt | tail -25
paste -d'\n' $O/p1-probe-main.txt $O/p1-probe-patched.txt | cut -c1-150
