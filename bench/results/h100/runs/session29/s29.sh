#!/bin/bash
# Session 29's device calls. The pack in .prebuilt (runs/session22/pack-prebuilt.sh) is built from
# the tree the call carries: first call, main with runs/session28/small-fallback-tile.patch
# (rung 4's fallback in 32 x 32 tiles where its 64 x 64 grid fills at most half the SMs); second
# call, main (c33b338, which holds it) with rung 3's half tiles where its throughput model puts
# them clearly faster (SWEEP_TYPES=fp32 PROBE=0, SANITIZE_ALL naming the fp32 GEMM binaries).
# On an H100 (PHASE unset): the bf16 and fp16 sweeps (SWEEP_TYPES) of main
# (.probe/sweep_<precision>_main) and of the pack, alternated main/new/new/main; then the whole suite with compute-sanitizer beside
# it (all four tools on SANITIZE_ALL, memcheck on SANITIZE_MEMCHECK), cut at BUDGET seconds.
# On an H200, PHASE picks the part of the H200 program that this call runs:
#   check: the whole suite with all four tools on every test binary (the default there);
#   rows:  the project's benchmark stage (three repetitions, random interleaving) on the GEMM
#          and issue 19 binaries, the link probe, and every example;
#   rest:  the benchmark stage on every other binary.
# Before the suite (h100 and check): runs/session29/rung3_tile_probe.cu (.probe/rung3_tile_probe),
# cut at PROBE_SECONDS (120).
# Then initcheck on test_reliability alone (sessions 25 and 27 saw reports there only beside
# other instrumented processes).
# Carry .device-deps (without lib/libCatch2WithMain.a), .prebuilt, .probe (probe.tar.xz). Command:
#   BUDGET=560 bash bench/results/h100/runs/session29/s29.sh $OUT
export PATH=$PATH:/usr/local/cuda/bin
O=$1; S=$O/s29-summary.txt; B=${BUDGET:-560}
left() { echo $((B - SECONDS)); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
h200=0; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1
PHASE=${PHASE:-$([ $h200 = 1 ] && echo check || echo h100)}
echo "phase $PHASE" >> $S
. bench/results/h200/runs/session22/unpack-prebuilt.sh && unpack_prebuilt || exit 1
export LD_LIBRARY_PATH=$W/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
if [ $PHASE = h100 ]; then
  tar xJf $ROOT/.probe/probe.tar.xz -C $ROOT/.probe || exit 1
  mkdir -p $O/sw
  for ty in ${SWEEP_TYPES:-bf16 fp16}; do
    for v in main new new main; do
      bin=$W/build/h200/bench/bench_gemm_sweep_$ty; [ $v != new ] && bin=$ROOT/.probe/sweep_${ty}_$v
      [ -x $bin ] || continue
      timeout 90 $bin --benchmark_out=$O/sw/sweep-$ty-$v-$SECONDS.json --benchmark_out_format=json \
        > /dev/null 2>> $O/sw/sweep-stderr.txt || echo "sweep $ty $v failed" >> $S
    done
  done
  tar czf $O/s29-sweeps.tar.gz -C $O sw && rm -rf $O/sw
  echo "sweeps done at ${SECONDS}s" >> $S
fi
if [ $PHASE = h100 ] || [ $PHASE = check ]; then
  [ "${PROBE:-1}" = 1 ] && [ -f $ROOT/.probe/probe.tar.xz ] && tar xJf $ROOT/.probe/probe.tar.xz -C $ROOT/.probe rung3_tile_probe &&
    timeout ${PROBE_SECONDS:-120} $ROOT/.probe/rung3_tile_probe > $O/s29-rung3-tiles.csv 2> $O/s29-rung3-tiles.err
  echo "rung 3 tile probe rc=$? at ${SECONDS}s ($(wc -l < $O/s29-rung3-tiles.csv) lines)" >> $S
fi
if [ $PHASE = h100 ] || [ $PHASE = check ]; then
  if [ $PHASE = check ]; then
    all=$(cd build/h200/tests && ls test_* | grep -v '\.' | tr '\n' ' '); mem=""
  else
    all=${SANITIZE_ALL:-test_gemm_tensor_core test_gemm_dispatch test_gemm_skinny}
    mem=${SANITIZE_MEMCHECK:-test_gemm_fp32 test_gemm_tf32 test_gemm_wgmma test_transform test_reduce test_scan test_histogram test_graph test_pipeline}
  fi
  [ -n "$mem" ] && SANITIZE_TOOLS=memcheck SANITIZE_JOBS=3 SANITIZE_TIMEOUT=$(( $(left) - 60 )) SANITIZE_BINARIES="$mem" \
    timeout $(( $(left) - 50 )) scripts/gpu-check.sh $O/m sanitize > /dev/null 2>&1 &
  SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=$(( $(left) - 60 )) SANITIZE_BINARIES="$all" \
    timeout $(( $(left) - 50 )) scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1; echo "check rc=$? at ${SECONDS}s" >> $S
  wait
  timeout $(( $(left) - 10 )) compute-sanitizer --tool initcheck --error-exitcode 99 build/h200/tests/test_reliability \
    "~[.]~[large]~[not_under_sanitizer]" > $O/initcheck-reliability-alone.txt 2>&1
  echo "initcheck test_reliability alone rc=$? at ${SECONDS}s: $(grep -E 'ERROR SUMMARY' $O/initcheck-reliability-alone.txt)" >> $S
  grep -h "^== " $O/a/sanitizer.log $O/m/sanitizer.log >> $S 2> /dev/null
  grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" $O/a/ctest.log >> $S
  tar czf $O/s29-logs.tar.gz -C $O a $( [ -d $O/m ] && echo m ) initcheck-reliability-alone.txt && rm -rf $O/a $O/m $O/initcheck-reliability-alone.txt
fi
if [ $PHASE = rows ]; then
  ( nvcc -O3 -arch=sm_90 -std=c++17 $ROOT/bench/results/h200/runs/session13/link_probe.cu -o /tmp/link_probe &&
    timeout 40 /tmp/link_probe 256 ) > $O/s29-link-probe.txt 2>&1
  BENCH_BINARIES="bench_gemm bench_gemm_skinny bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_transfer bench_graph bench_pipeline" \
    timeout $(( $(left) - 60 )) scripts/gpu-check.sh $O/p bench >> $S 2>&1; echo "rows rc=$? at ${SECONDS}s" >> $S
  mkdir -p $O/ex
  for e in build/h200/examples/example_*; do
    [ -x $e ] || continue
    timeout 30 $e > $O/ex/$(basename $e).txt 2>&1; echo "$(basename $e) rc=$?" >> $S
    [ $(left) -lt 15 ] && break
  done
  tar czf $O/s29-examples.tar.gz -C $O ex && rm -rf $O/ex
fi
if [ $PHASE = rest ]; then
  BENCH_BINARIES="bench_transform bench_reduce bench_transform_reduce bench_scan bench_histogram bench_transpose bench_stencil bench_harness" \
    timeout $(( $(left) - 20 )) scripts/gpu-check.sh $O/p bench >> $S 2>&1; echo "rest rc=$? at ${SECONDS}s" >> $S
fi
echo "done at ${SECONDS}s" >> $S
cat $S
