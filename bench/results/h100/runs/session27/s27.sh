#!/bin/bash
# Session 27's device call: the pack in .prebuilt (runs/session22/pack-prebuilt.sh) is main +
# small-c-fallback-splits.patch (this folder) + runs/session26/small-grid-no-pdl.patch, checked
# and measured on whichever GPU comes. In order:
# 1. the plan-space probe timed as the sweep times its rows (runs/session27/plan_space_probe.cu,
#    built from main into .probe/plan_space_probe), on issue 21's worst problems;
# 2. the three sweeps, each row checked against cuBLAS before it is timed: main
#    (.probe/sweep_<precision>_main), main + the small-C splits (.probe/sweep_<precision>_cap,
#    16-bit only) and the pack (new), alternated main/cap/new/new/cap/main;
# 3. ncu's duration of each kernel on two tiny rows (foundry and cuBLAS);
# 4. the whole suite with compute-sanitizer beside it (all four tools on SANITIZE_ALL, memcheck
#    on SANITIZE_MEMCHECK), cut at BUDGET seconds of command.
# Carry .device-deps (without lib/libCatch2WithMain.a), .prebuilt, .probe (probe.tar.xz). Command:
#   BUDGET=555 bash bench/results/h100/runs/session27/s27.sh $OUT
export PATH=$PATH:/usr/local/cuda/bin
O=$1; S=$O/s27-summary.txt; B=${BUDGET:-560}
left() { echo $((B - SECONDS)); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
# The pack's sources: main with the two patches, applied to the copy the tests run in.
PATCHES=${PATCHES-"bench/results/h100/runs/session27/small-c-fallback-splits.patch bench/results/h100/runs/session26/small-grid-no-pdl.patch"}
. bench/results/h200/runs/session22/unpack-prebuilt.sh && unpack_prebuilt || exit 1
export LD_LIBRARY_PATH=$W/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
[ -f $ROOT/.probe/probe.tar.xz ] && tar xJf $ROOT/.probe/probe.tar.xz -C $ROOT/.probe
if [ "${PROBE:-1}" = 1 ]; then
  timeout 120 $ROOT/.probe/plan_space_probe > $O/s27-plan-space.csv 2> $O/s27-plan-space.err
  echo "plan space probe rc=$? at ${SECONDS}s" >> $S
fi
mkdir -p $O/sw
for ty in bf16 fp16 fp32; do
  for v in main cap new new cap main; do
    bin=$W/build/h200/bench/bench_gemm_sweep_$ty; [ $v != new ] && bin=$ROOT/.probe/sweep_${ty}_$v
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
SANITIZE_TOOLS=memcheck SANITIZE_JOBS=4 SANITIZE_TIMEOUT=$(( $(left) - 25 )) \
  SANITIZE_BINARIES="${SANITIZE_MEMCHECK:-test_gemm_tensor_core test_gemm_fp32 test_gemm_tf32 test_transform test_reduce test_transform_reduce test_scan test_histogram test_stencil}" \
  timeout $(( $(left) - 10 )) scripts/gpu-check.sh $O/m sanitize > /dev/null 2>&1 &
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=$(( $(left) - 25 )) \
  SANITIZE_BINARIES="${SANITIZE_ALL:-test_gemm_dispatch test_gemm_wgmma test_gemm_skinny test_reliability test_reliability_checks test_graph test_pipeline}" \
  timeout $(( $(left) - 10 )) scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1; echo "check rc=$? at ${SECONDS}s" >> $S
wait
grep -h "^== " $O/a/sanitizer.log $O/m/sanitizer.log >> $S
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" $O/a/ctest.log >> $S
tar czf $O/s27-logs.tar.gz -C $O a m && rm -rf $O/a $O/m
echo "done at ${SECONDS}s" >> $S
cat $S
