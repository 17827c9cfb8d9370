#!/bin/bash
# Session 16, call 1 (fresh machine): session 15's two host-tested patches on a GPU, as the
# whole suite. /tmp/m is main's snapshot (3b7decb, kernels of f1); /tmp/t the same tree with
# skinny-scalar-columns.patch and rung4-fallback-staged.patch applied. Builds everything from
# /tmp/t, runs the whole suite with the four tools on the patched binaries (test_gemm_skinny,
# test_gemm_tensor_core), the three sweeps in one run of the project's script, and probe15
# built from main and from the patches on the rows they aim at and on misaligned large skinny
# ones (the scalar path's bandwidth must not drop). Command, from the repository root (carry
# .device-deps and .snap):
#   rm -rf /tmp/m /tmp/t && mkdir -p /tmp/m && tar xzf .snap/tree.tgz -C /tmp/m &&
#     cp -r .device-deps /tmp/m/ && cp -r /tmp/m /tmp/t &&
#     bash /tmp/t/bench/results/h200/runs/session16/q1.sh $OUT
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session15
S=$O/q1-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
for f in skinny-scalar-columns rung4-fallback-staged; do
  patch -p1 < $P/$f.patch >> $S 2>&1 || { cat $S; exit 1; }
done
probe() { (cd $2 && nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
  -I .device-deps/include $P/probe15.cu -o $1 -L.device-deps/lib/x86_64-linux-gnu -lbenchmark -lcublas); }
( probe /tmp/probe_main /tmp/m; probe /tmp/probe_patched /tmp/t ) > /tmp/probe-build.txt 2>&1 &
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=8 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-200} \
  SANITIZE_BINARIES="test_gemm_skinny test_gemm_tensor_core" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" \
  timeout 150 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$?" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
wait; cat /tmp/probe-build.txt | tail -5 >> $S
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
A="301x1x87_rt_ct_p2_5_3 1x247x37_cn_rn_p0_3_6 82x14x11373_rt_ct_p6_3_5 1x16384x16384_rn_rn_p0_3_0 16384x1x16384_rn_rn_p3_0_0 4x16384x16384_rn_rn_p0_3_0"
B="5789x645x1_cn_ct_p6_0_4 117x10579x22_ct_ct_p2_2_2 4228x263x2646_rn_rt_p4_6_2 608x118x51_rt_rn_p4_1_1"
for x in main patched; do
  ( for t in bf16 fp32; do timeout 40 /tmp/probe_$x $t $A; done; timeout 40 /tmp/probe_$x bf16 $B ) > $O/q1-probe-$x.txt 2>&1
done
grep -v "^\[" $S | tail -30
paste -d'\n' $O/q1-probe-main.txt $O/q1-probe-patched.txt | cut -c1-150
