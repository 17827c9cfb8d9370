#!/bin/bash
# Next GPU session, after f1.sh on its machine (written in session 15, not yet run):
# skinny-scalar-columns.patch (the CUDA-core along-n kernel holds 2 columns a lane, 16 rows in
# flight, where B is read one element at a time). probe15 built from main (/tmp/m) and from the
# patch, both run on the one-row rows it aims at and on misaligned large ones (B's ld off by 3:
# the scalar path's bandwidth); the patched test_gemm_skinny, the four tools on it, the three
# sweeps. On f1's machine, from the repository root (carry .device-deps and .snap):
#   rm -rf /tmp/m && mkdir -p /tmp/m && tar xzf .snap/tree.tgz -C /tmp/m && cp -r .device-deps /tmp/m/ &&
#     bash /tmp/t/bench/results/h200/runs/session15/p1.sh $OUT
# /tmp/t is f1's tree and build (patched here); /tmp/m an unpatched copy for main's probe.
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session15
[ -d /tmp/m/include ] || { echo "p1: /tmp/m (an unpatched snapshot of main) is missing"; exit 1; }
probe() { (cd $2 && nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
  -I .device-deps/include $P/probe15.cu -o $1 -L.device-deps/lib/x86_64-linux-gnu -lbenchmark -lcublas); }
probe /tmp/probe_main /tmp/m > $O/p1-probe-build-main.txt 2>&1 &
patch -p1 < $P/skinny-scalar-columns.patch > $O/p1-patch.txt 2>&1 || { cat $O/p1-patch.txt; exit 1; }
probe /tmp/probe_patched /tmp/t > $O/p1-probe-build.txt 2>&1 &
BUILD_TARGETS="test_gemm_skinny bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" \
  scripts/gpu-check.sh $O/a build > $O/p1-summary.txt 2>&1 || { tail -30 $O/p1-summary.txt; exit 1; }
wait; rm -f $O/a/build.log
timeout 150 build/h200/tests/test_gemm_skinny > /tmp/p1-skinny.txt 2>&1; echo "test_gemm_skinny rc=$? $(tail -2 /tmp/p1-skinny.txt | tr '\n' ' ')" >> $O/p1-summary.txt
SANITIZE_JOBS=4 SANITIZE_BINARIES="test_gemm_skinny" scripts/gpu-check.sh $O/a sanitize >> $O/p1-summary.txt 2>&1
grep -h "^== " $O/a/sanitizer.log >> $O/p1-summary.txt
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32" \
  timeout 150 scripts/gpu-check.sh $O/g bench >> $O/p1-summary.txt 2>&1; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $O/p1-summary.txt
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
S="301x1x87_rt_ct_p2_5_3 1x247x37_cn_rn_p0_3_6 82x14x11373_rt_ct_p6_3_5 1x16384x16384_rn_rn_p0_3_0 16384x1x16384_rn_rn_p3_0_0 4x16384x16384_rn_rn_p0_3_0"
for x in main patched; do for t in bf16 fp32; do timeout 60 /tmp/probe_$x $t $S; done > $O/p1-probe-$x.txt 2>&1; done
grep -v "^\[" $O/p1-summary.txt | tail -25
paste -d'\n' $O/p1-probe-main.txt $O/p1-probe-patched.txt | cut -c1-150
