#!/bin/bash
# Session 22: runs/session21/s21.sh with issue 19's tests (test_pipeline, test_graph, test_memory)
# under the tools too. Main with reduce-late-trigger.patch and model-refit.patch (in that order), the whole suite, the four tools on test_gemm_dispatch,
# test_gemm_wgmma, test_gemm_skinny, test_gemm_tensor_core and test_gemm_fp32, the sweeps and
# bench_gemm_skinny, the fallback probe built on the patched tree, and main's 16-bit sweeps
# built beside it in /tmp/m (the baseline on the same machine). ~480 s on an H100.
# Command (carry .device-deps, .snap; .snap/tree.tgz = `git archive HEAD | gzip`):
#   rm -rf /tmp/t /tmp/m && mkdir -p /tmp/t /tmp/m && tar xzf .snap/tree.tgz -C /tmp/t && tar xzf .snap/tree.tgz -C /tmp/m &&
#     cp -r .device-deps /tmp/t/ && cp -r .device-deps /tmp/m/ && bash /tmp/t/bench/results/h200/runs/session22/s22.sh $OUT
# LEAN=1 (a short budget): neither main's sweeps nor the probe.
O=$1; S=$O/s22-summary.txt; R=bench/results/h200/runs/session21
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
cd /tmp/t || exit 1
for p in reduce-late-trigger model-refit; do patch -p1 < $R/$p.patch >> $S 2>&1 || { cat $S; exit 1; }; done
[ "${LEAN:-0}" = 1 ] || (cd /tmp/m && BUILD_TARGETS="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16" nice scripts/gpu-check.sh /tmp/om build > /tmp/m-build.txt 2>&1) &
[ "${LEAN:-0}" = 1 ] || (nice nvcc -O3 -std=c++20 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench -I bench/include \
  bench/results/h200/runs/session20/fallback_probe.cu -lcublas -lbenchmark -L .device-deps/lib/x86_64-linux-gnu \
  -I .device-deps/include -o /tmp/fallback_probe > /tmp/probe-build.txt 2>&1) &
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_dispatch test_gemm_wgmma test_gemm_skinny test_gemm_tensor_core test_gemm_fp32 test_pipeline test_graph test_memory" \
  scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
wait
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
[ "${LEAN:-0}" = 1 ] || timeout 60 /tmp/fallback_probe > $O/s22-fallback-probe.csv 2>> $S; echo "probe rc=$? at ${SECONDS}s" >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 100 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
[ "${LEAN:-0}" = 1 ] || for x in bf16 fp16; do /tmp/m/build/h200/bench/bench_gemm_sweep_$x --benchmark_repetitions=3 \
  --benchmark_enable_random_interleaving=true --benchmark_filter=foundry --benchmark_out=$O/s22-main-$x.json > /dev/null 2>> $S; done
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
echo "done at ${SECONDS}s" >> $S
tail -4 $S
