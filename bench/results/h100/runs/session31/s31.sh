#!/bin/bash
# Session 31's device calls (s30.sh with the probe run on any card; none was lent, so it has not
# run yet). The pack in .prebuilt (runs/session22/pack-prebuilt.sh) is the tree the call carries
# (session 31 built f3e044b: main with runs/session30/along-k-shape-by-rows.patch).
# .probe/probe.tar.xz, where carried, holds skinny_along_k_probe builds (runs/session31/
# build-probes.sh): the tree before the change (s30main) and after (byrows), run first in one
# order and then the reverse. PHASE picks the rest:
#   check: the whole suite with all four tools on every test binary (the default on an H200);
#   h100:  the whole suite, all four tools on SANITIZE_ALL, memcheck on SANITIZE_MEMCHECK
#          (the default elsewhere);
#   rows:  the project's benchmark stage (three repetitions, random interleaving) on the GEMM
#          and issue 19 binaries, the link probe, and every example;
#   rest:  the benchmark stage on every other binary;
#   skinny: the benchmark stage on bench_gemm_skinny alone (also after another phase with
#           SKINNY_BENCH=1).
# Then, where .probe/wb.tar.xz is carried and time is left, a branch's GEMM test and skinny
# benchmark binaries (build-wb.sh). After check or h100, initcheck on test_reliability alone (sessions 25 and 27 saw reports
# there only beside other instrumented processes).
# Carry .device-deps (without lib/libCatch2WithMain.a), .prebuilt, .probe. Command:
#   BUDGET=560 bash bench/results/h100/runs/session31/s31.sh $OUT
export PATH=$PATH:/usr/local/cuda/bin
O=$1; S=$O/s31-summary.txt; B=${BUDGET:-560}
left() { echo $((B - SECONDS)); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
h200=0; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1
PHASE=${PHASE:-$([ $h200 = 1 ] && echo check || echo h100)}
echo "phase $PHASE" >> $S
. bench/results/h200/runs/session22/unpack-prebuilt.sh && unpack_prebuilt || exit 1
export LD_LIBRARY_PATH=$W/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
if [ -f $ROOT/.probe/probe.tar.xz ]; then
  tar xJf $ROOT/.probe/probe.tar.xz -C $ROOT/.probe || exit 1
  # In one order and then the reverse, so that a drift of the clocks shows between two runs.
  probes=$(cd $ROOT/.probe && ls skinny_probe_* 2> /dev/null | sort)
  for p in $probes $(echo $probes | tr ' ' '\n' | sort -r); do
    timeout 60 $ROOT/.probe/$p >> $O/s31-skinny-probe.csv 2>> $O/s31-skinny-probe.err || echo "$p failed" >> $S
  done
  echo "skinny probes done at ${SECONDS}s ($(wc -l < $O/s31-skinny-probe.csv) lines)" >> $S
fi
if [ $PHASE = h100 ] || [ $PHASE = check ]; then
  if [ $PHASE = check ]; then
    # Every binary, the slowest under the tools first (session 26's times), so that none
    # starts late; racecheck (the slowest tool) in a run of its own beside the other three.
    slow="test_gemm_tensor_core test_transpose test_stencil test_gemm_wgmma test_gemm_skinny test_scan test_gemm_dispatch test_gemm_fp32 test_nccl_gemm"
    all="$slow $(cd build/h200/tests && ls test_* | grep -v '\.' | grep -vxF -f <(tr ' ' '\n' <<< "$slow") | tr '\n' ' ')"
    mem=$all; mem_tools=racecheck; mem_jobs=5; all_tools="memcheck synccheck initcheck"; all_jobs=8; test_jobs=6
  else
    all=${SANITIZE_ALL:-test_gemm_tensor_core test_gemm_dispatch test_gemm_skinny}
    mem=${SANITIZE_MEMCHECK:-test_gemm_fp32 test_gemm_tf32 test_gemm_wgmma test_transform test_reduce test_scan test_histogram test_graph test_pipeline}
    mem_tools=memcheck; mem_jobs=3; all_tools="memcheck racecheck synccheck initcheck"; all_jobs=12; test_jobs=8
  fi
  [ -n "$mem" ] && SANITIZE_TOOLS=$mem_tools SANITIZE_JOBS=$mem_jobs SANITIZE_TIMEOUT=$(( $(left) - 60 )) SANITIZE_BINARIES="$mem" \
    timeout $(( $(left) - 50 )) scripts/gpu-check.sh $O/m sanitize > $O/m-summary.txt 2>&1 &
  SANITIZE_TOOLS=$all_tools SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=$all_jobs TEST_JOBS=$test_jobs SANITIZE_TIMEOUT=$(( $(left) - 60 )) SANITIZE_BINARIES="$all" \
    timeout $(( $(left) - 50 )) scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1; echo "check rc=$? at ${SECONDS}s" >> $S
  wait; grep -A8 "gpu-check summary" $O/m-summary.txt >> $S 2> /dev/null; rm -f $O/m-summary.txt
  timeout $(( $(left) - 10 )) compute-sanitizer --tool initcheck --error-exitcode 99 build/h200/tests/test_reliability \
    "~[.]~[large]~[not_under_sanitizer]" > $O/initcheck-reliability-alone.txt 2>&1
  echo "initcheck test_reliability alone rc=$? at ${SECONDS}s: $(grep -E 'ERROR SUMMARY' $O/initcheck-reliability-alone.txt)" >> $S
  grep -h "^== " $O/a/sanitizer.log $O/m/sanitizer.log >> $S 2> /dev/null
  grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" $O/a/ctest.log >> $S
  tar czf $O/s31-logs.tar.gz -C $O a $( [ -d $O/m ] && echo m ) initcheck-reliability-alone.txt && rm -rf $O/a $O/m $O/initcheck-reliability-alone.txt
fi
if [ $PHASE = rows ]; then
  ( nvcc -O3 -arch=sm_90 -std=c++17 $ROOT/bench/results/h200/runs/session13/link_probe.cu -o /tmp/link_probe &&
    timeout 40 /tmp/link_probe 256 ) > $O/s31-link-probe.txt 2>&1
  BENCH_BINARIES="bench_gemm bench_gemm_skinny bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_transfer bench_graph bench_pipeline" \
    timeout $(( $(left) - 60 )) scripts/gpu-check.sh $O/p bench >> $S 2>&1; echo "rows rc=$? at ${SECONDS}s" >> $S
  mkdir -p $O/ex
  for e in build/h200/examples/example_*; do
    [ -x $e ] || continue
    timeout 30 $e > $O/ex/$(basename $e).txt 2>&1; echo "$(basename $e) rc=$?" >> $S
    [ $(left) -lt 15 ] && break
  done
  tar czf $O/s31-examples.tar.gz -C $O ex && rm -rf $O/ex
fi
if [ $PHASE = skinny ] || [ "${SKINNY_BENCH:-0}" = 1 ]; then  # the skinny rows, as the project's benchmark stage runs them
  BENCH_BINARIES="bench_gemm_skinny" timeout $(( $(left) - 10 )) scripts/gpu-check.sh $O/p bench >> $S 2>&1
  echo "skinny rc=$? at ${SECONDS}s" >> $S; tar czf $O/s31-skinny-bench.tar.gz -C $O p && rm -rf $O/p
fi
if [ -f $ROOT/.probe/wb.tar.xz ] && [ $(left) -gt 120 ]; then
  # A branch's binaries (build-wb.sh): its GEMM tests, GPU cases included, memcheck on the
  # dispatch test's GPU cases, and its bench_gemm_skinny's 16-bit rows (three repetitions).
  mkdir -p $O/wb /tmp/wb && tar xJf $ROOT/.probe/wb.tar.xz -C /tmp/wb || echo "wb: unpack failed" >> $S
  for t in test_gemm_dispatch test_gemm_wgmma test_gemm_skinny; do
    [ -x /tmp/wb/$t ] || continue
    timeout $(( $(left) - 60 )) /tmp/wb/$t > $O/wb/$t.txt 2>&1; echo "wb $t rc=$? at ${SECONDS}s: $(tail -2 $O/wb/$t.txt | tr '\n' ' ')" >> $S
  done
  timeout $(( $(left) - 50 )) compute-sanitizer --tool memcheck --error-exitcode 99 /tmp/wb/test_gemm_dispatch \
    "[gpu]~[.]~[large]~[not_under_sanitizer]" > $O/wb/memcheck-test_gemm_dispatch.txt 2>&1
  echo "wb memcheck test_gemm_dispatch rc=$? at ${SECONDS}s: $(grep -E 'ERROR SUMMARY' $O/wb/memcheck-test_gemm_dispatch.txt)" >> $S
  timeout $(( $(left) - 10 )) /tmp/wb/bench_gemm_skinny --benchmark_filter='_(bf16|fp16)/' --benchmark_repetitions=3 \
    --benchmark_enable_random_interleaving=true --benchmark_out=$O/wb/bench_gemm_skinny.json > $O/wb/bench.txt 2>&1
  echo "wb bench_gemm_skinny rc=$? at ${SECONDS}s" >> $S
  tar czf $O/s31-wb.tar.gz -C $O wb && rm -rf $O/wb
fi
if [ $PHASE = rest ]; then
  BENCH_BINARIES="bench_transform bench_reduce bench_transform_reduce bench_scan bench_histogram bench_transpose bench_stencil bench_harness" \
    timeout $(( $(left) - 20 )) scripts/gpu-check.sh $O/p bench >> $S 2>&1; echo "rest rc=$? at ${SECONDS}s" >> $S
fi
echo "done at ${SECONDS}s" >> $S
cat $S
