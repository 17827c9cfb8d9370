#!/bin/bash
# Next GPU session, after n1.sh on its machine and build (written in session 14, not yet run):
# split-reduce-slices.patch (the split-K reduce of a small C, 8 warps to an element; skinny
# max_splits 64 -> 256). The small-product probe built from main and from the patch, both run;
# then the patched test_gemm_skinny and test_gemm_fp32, and the four tools on test_gemm_skinny.
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session14
probe() { nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
  -I .device-deps/include $P/small_probe.cu -o $1 -L.device-deps/lib/x86_64-linux-gnu -lbenchmark -lcublas; }
probe /tmp/probe_main > $O/n3-probe-build.txt 2>&1 || exit 1
patch -p1 < $P/split-reduce-slices.patch > $O/n3-patch.txt 2>&1 || { cat $O/n3-patch.txt; exit 1; }
probe /tmp/probe_patched >> $O/n3-probe-build.txt 2>&1 &
BUILD_TARGETS="test_gemm_skinny test_gemm_fp32" scripts/gpu-check.sh $O/a build > $O/n3-build-summary.txt 2>&1 ||
  { tail -30 $O/n3-build-summary.txt; exit 1; }
wait
for t in test_gemm_skinny test_gemm_fp32; do
  timeout 150 build/h200/tests/$t > $O/n3-$t.txt 2>&1; echo "$t rc=$? $(tail -2 $O/n3-$t.txt | tr '\n' ' ')"
done
SANITIZE_JOBS=4 SANITIZE_BINARIES="test_gemm_skinny" scripts/gpu-check.sh $O/a sanitize > $O/n3-sanitize.txt 2>&1
grep -h "^== " $O/a/sanitizer.log
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
timeout 60 /tmp/probe_main > $O/n3-probe-main.txt 2>&1; timeout 60 /tmp/probe_patched > $O/n3-probe-patched.txt 2>&1
paste -d'\n' $O/n3-probe-main.txt $O/n3-probe-patched.txt | grep -E "^fp32|^bf16|^fp16" | cut -c1-150
