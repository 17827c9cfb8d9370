#!/bin/bash
# Session 23, for whatever device time is left: the check of main with session 21's
# reduce-late-trigger.patch and model-refit.patch, on the build packed here in .prebuilt/
# (runs/session22/pack-prebuilt.sh), in the order of what a short lease still returns:
# trigger_probe (~10 s), the sweeps (~20 s), plan_space_probe.cu (~30 s), then the whole suite
# with the four tools beside it (~232 s on an H100), cut at BUDGET seconds of command (default
# 360) so that $OUT comes back; issue 19's rows (unless ROWS19=0) only on an H200 with 250 s
# still to spare. runs/session22/s22p.sh is this script with BUDGET=590.
# SANITIZE_BINARIES (environment) replaces the list of binaries the four tools run on.
# Command (carry .device-deps, .prebuilt, .probe/trigger_probe, .probe/plan_space_probe):
#   BUDGET=360 bash bench/results/h200/runs/session23/s23.sh $OUT
O=$1; S=$O/s23-summary.txt; B=${BUDGET:-360}
left() { echo $((B - SECONDS)); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
. bench/results/h200/runs/session22/unpack-prebuilt.sh && unpack_prebuilt || exit 1
[ -x $ROOT/.probe/trigger_probe ] && { LD_LIBRARY_PATH=$W/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} timeout 40 $ROOT/.probe/trigger_probe > $O/s22-trigger-probe.csv 2>> $S; \
  echo "trigger probe rc=$? at ${SECONDS}s" >> $S; }
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 90 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
# runs/session23/plan_space_probe.cu (main's plans and their alternatives on issue 21's worst
# shapes; built on the CPU machine, carry .probe/plan_space_probe): ~30 s
[ -x $ROOT/.probe/plan_space_probe ] && { LD_LIBRARY_PATH=$W/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} timeout 60 \
  $ROOT/.probe/plan_space_probe > $O/s23-plan-space.csv 2> $O/s23-plan-space.err; echo "plan space probe rc=$? at ${SECONDS}s" >> $S; }
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=$(( $(left) - 20 )) \
  SANITIZE_BINARIES="${SANITIZE_BINARIES:-test_gemm_dispatch test_gemm_wgmma test_gemm_skinny test_gemm_tensor_core test_gemm_fp32 test_pipeline test_graph test_memory}" \
  timeout $(( $(left) - 5 )) scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1; echo "check rc=$? at ${SECONDS}s" >> $S
grep -h "^== " $O/a/sanitizer.log >> $S
grep -E "tests passed|tests failed" $O/a/ctest.log >> $S
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
# Issue 19's rows from the same binaries (runs/session17/s4.sh's benchmarks and link probe).
if [ "${ROWS19:-1}" = 1 ] && [ "$(left)" -gt 250 ] && nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  ( nvcc -O3 -arch=sm_90 -std=c++17 bench/results/h200/runs/session13/link_probe.cu -o /tmp/link_probe &&
    timeout 40 /tmp/link_probe 256 ) > $O/s4-link-probe.txt 2>&1
  BENCH_BINARIES="bench_gemm bench_transfer bench_graph bench_pipeline" timeout $(( $(left) - 5 )) scripts/gpu-check.sh $O/p bench \
    > $O/s4-bench-summary.txt 2>&1; echo "issue 19 bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/p/bench.log $O/p/bench/report.md
fi
echo "done at ${SECONDS}s" >> $S
