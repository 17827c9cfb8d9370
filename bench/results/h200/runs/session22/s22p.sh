#!/bin/bash
# Session 22, for a budget too short to build on the device: s22.sh's check (main with
# reduce-late-trigger.patch and model-refit.patch: the sweeps first, then the whole suite and
# the four tools on the GEMM binaries and issue 19's tests) on binaries built on the CPU
# machine, in a git worktree at /tmp/w22 with both patches (h200 preset, build/h200), packed by
# runs/session22/pack-prebuilt.sh into .prebuilt/ (carried). The tree and the build are
# unpacked at the same absolute paths, so that ctest's files hold. On an H200 (unless ROWS19=0), then
# issue 19's rows from the same binaries, as runs/session17/s4.sh (~250 s more).
# Command (carry .device-deps, .prebuilt, .probe/trigger_probe, .probe/plan_space_probe): bash bench/results/h200/runs/session22/s22p.sh $OUT
O=$1; S=$O/s22-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
. bench/results/h200/runs/session22/unpack-prebuilt.sh && unpack_prebuilt || exit 1
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 100 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_dispatch test_gemm_wgmma test_gemm_skinny test_gemm_tensor_core test_gemm_fp32 test_pipeline test_graph test_memory" \
  scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
echo "check done at ${SECONDS}s" >> $S
# runs/session22/trigger_probe.cu, built on the CPU machine (carry .probe/trigger_probe): ~10 s
[ -x $ROOT/.probe/trigger_probe ] && { LD_LIBRARY_PATH=$W/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} timeout 60 $ROOT/.probe/trigger_probe > $O/s22-trigger-probe.csv 2>> $S; \
  echo "trigger probe rc=$? at ${SECONDS}s" >> $S; }
# runs/session23/plan_space_probe.cu (main's plans and their alternatives on issue 21's worst
# shapes; built on the CPU machine, carry .probe/plan_space_probe): ~30 s
[ -x $ROOT/.probe/plan_space_probe ] && { LD_LIBRARY_PATH=$W/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} timeout 60 \
  $ROOT/.probe/plan_space_probe > $O/s23-plan-space.csv 2> $O/s23-plan-space.err; echo "plan space probe rc=$? at ${SECONDS}s" >> $S; }
# On an H200, issue 19's rows from the same binaries (runs/session17/s4.sh's benchmarks and link probe).
if [ "${ROWS19:-1}" = 1 ] && nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  P=bench/results/h200/runs/session13
  ( nvcc -O3 -arch=sm_90 -std=c++17 $P/link_probe.cu -o /tmp/link_probe && timeout 40 /tmp/link_probe 256 ) \
    > $O/s4-link-probe.txt 2>&1
  BENCH_BINARIES="bench_gemm bench_transfer bench_graph bench_pipeline" timeout ${T:-300} scripts/gpu-check.sh $O/p bench \
    > $O/s4-bench-summary.txt 2>&1; echo "issue 19 bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/p/bench.log $O/p/bench/report.md
fi
echo "done at ${SECONDS}s" >> $S
tail -4 $S
