#!/bin/bash
# n3.sh on a fresh machine (session 15): the two probes and the patched build at once, from an
# unpatched copy (/tmp/m) and the patched tree (/tmp/t).
O=$1; cd /tmp/t || exit 1
P=bench/results/h200/runs/session14
rm -rf /tmp/m && mkdir -p /tmp/m && tar xzf .snap/tree.tgz -C /tmp/m && cp -r .device-deps /tmp/m/
probe() { (cd $2 && nvcc -O3 -std=c++17 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
  -I .device-deps/include $P/small_probe.cu -o $1 -L.device-deps/lib/x86_64-linux-gnu -lbenchmark -lcublas); }
probe /tmp/probe_main /tmp/m > $O/n3-probe-build-main.txt 2>&1 &
patch -p1 < $P/split-reduce-slices.patch > $O/n3-patch.txt 2>&1 || { cat $O/n3-patch.txt; exit 1; }
probe /tmp/probe_patched /tmp/t > $O/n3-probe-build.txt 2>&1 &
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
