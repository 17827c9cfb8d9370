#!/bin/bash
# Session 27's first call: main (the pack of .prebuilt, runs/session22/pack-prebuilt.sh) checked
# and measured on whichever GPU comes. In order:
# 1. the plan-space probe timed as the sweep times its rows (runs/session27/plan_space_probe.cu,
#    built from this tree into .probe/plan_space_probe), on issue 21's worst problems;
# 2. the three sweeps, each row checked against cuBLAS before it is timed: the pack's binaries
#    against .probe/sweep_<precision>_nopdl (main with runs/session26/small-grid-no-pdl.patch)
#    and .probe/sweep_<precision>_cap (main with the fallback's 32 slices for a small C: this
#    session's small-c-fallback-splits.patch) where they were carried, alternated
#    main/nopdl/cap/cap/nopdl/main;
# 3. the whole suite with compute-sanitizer beside it (all four tools on SANITIZE_ALL, memcheck
#    on SANITIZE_MEMCHECK), cut at BUDGET seconds of command.
# Carry .device-deps (without lib/libCatch2WithMain.a), .prebuilt, .probe (probe.tar.xz). Command:
#   BUDGET=560 bash bench/results/h100/runs/session27/s27.sh $OUT
export PATH=$PATH:/usr/local/cuda/bin
O=$1; S=$O/s27-summary.txt; B=${BUDGET:-560}
left() { echo $((B - SECONDS)); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
. bench/results/h200/runs/session22/unpack-prebuilt.sh && unpack_prebuilt || exit 1
export LD_LIBRARY_PATH=$W/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
[ -f $ROOT/.probe/probe.tar.xz ] && tar xJf $ROOT/.probe/probe.tar.xz -C $ROOT/.probe
if [ "${PROBE:-1}" = 1 ]; then
  timeout 150 $ROOT/.probe/plan_space_probe > $O/s27-plan-space.csv 2> $O/s27-plan-space.err
  echo "plan space probe rc=$? at ${SECONDS}s" >> $S
fi
mkdir -p $O/sw
for ty in bf16 fp16 fp32; do
  for v in main nopdl cap cap nopdl main; do
    bin=$W/build/h200/bench/bench_gemm_sweep_$ty; [ $v != main ] && bin=$ROOT/.probe/sweep_${ty}_$v
    [ -x $bin ] || continue
    timeout 90 $bin --benchmark_out=$O/sw/sweep-$ty-$v-$SECONDS.json --benchmark_out_format=json \
      > /dev/null 2>> $O/sw/sweep-stderr.txt || echo "sweep $ty $v failed" >> $S
  done
done
tar czf $O/s27-sweeps.tar.gz -C $O sw && rm -rf $O/sw
echo "sweeps done at ${SECONDS}s" >> $S
# Each kernel's own duration on the tiny rows (foundry ~5 us a call, cuBLAS 3.3-4): is the gap
# the kernel or what lies between calls? 30 launches of the timed loop per row.
if [ "${NCU:-1}" = 1 ] && command -v ncu > /dev/null; then
  for row in fp16/foundry/1283x3x31 fp16/cublas/1283x3x31 fp16/foundry/608x118x51 fp16/cublas/608x118x51; do
    ty=${row%%/*}
    timeout 40 ncu --clock-control none --metrics gpu__time_duration.sum --csv --launch-skip 300 --launch-count 30 \
      $W/build/h200/bench/bench_gemm_sweep_$ty --benchmark_filter="^gemm_sweep_$row" 2>&1 | grep -E '^"' \
      | sed "s|^|$row,|" >> $O/s27-ncu-tiny.csv
  done
  echo "ncu done at ${SECONDS}s" >> $S
fi
# The cap's test_gemm_dispatch (its new GPU case runs 31 slices), alone and under memcheck.
if [ -x $ROOT/.probe/test_gemm_dispatch_cap ]; then
  (cd $W/build/h200/tests && $ROOT/.probe/test_gemm_dispatch_cap > $O/s27-cap-dispatch.txt 2>&1; echo "cap dispatch rc=$?" > $O/cap.txt
   timeout $(( $(left) - 20 )) compute-sanitizer --tool memcheck --error-exitcode 1 $ROOT/.probe/test_gemm_dispatch_cap "[gpu]" \
     > $O/s27-cap-memcheck.txt 2>&1
   echo "cap dispatch memcheck rc=$? at ${SECONDS}s" >> $O/cap.txt; tail -3 $O/s27-cap-dispatch.txt >> $O/cap.txt
   tail -2 $O/s27-cap-memcheck.txt >> $O/cap.txt) &
fi
SANITIZE_TOOLS=memcheck SANITIZE_JOBS=4 SANITIZE_TIMEOUT=$(( $(left) - 25 )) \
  SANITIZE_BINARIES="${SANITIZE_MEMCHECK:-test_gemm_tensor_core test_gemm_fp32 test_reliability_checks test_gemm_tf32}" \
  timeout $(( $(left) - 10 )) scripts/gpu-check.sh $O/m sanitize > /dev/null 2>&1 &
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=$(( $(left) - 25 )) \
  SANITIZE_BINARIES="${SANITIZE_ALL:-test_gemm_dispatch test_gemm_wgmma test_gemm_skinny}" \
  timeout $(( $(left) - 10 )) scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1; echo "check rc=$? at ${SECONDS}s" >> $S
wait
cat $O/cap.txt >> $S 2>/dev/null
grep -h "^== " $O/a/sanitizer.log $O/m/sanitizer.log >> $S
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" $O/a/ctest.log >> $S
mv $O/s27-cap-*.txt $O/a/ 2>/dev/null; tar czf $O/s27-logs.tar.gz -C $O a m && rm -rf $O/a $O/m
echo "done at ${SECONDS}s" >> $S
cat $S
