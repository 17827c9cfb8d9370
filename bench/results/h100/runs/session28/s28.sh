#!/bin/bash
# Session 28's device calls: the pack in .prebuilt (runs/session22/pack-prebuilt.sh) is main with
# this session's working tree, the same tree the call carries. First call: the skinny
# tensor-core kernel loads its first round of the large operand before it stages the small one;
# fp32 products take the skinny rung only up to 8 rows and from 2 MiB of large operand; rung 3
# splits few 32 x 32 tiles to slices of 8. Second call (NCU=0, .probe holding the main sweeps
# alone): the same without the early loads (they lost), and 16-bit products for the tensor-core
# skinny kernel from 1 MiB of large operand. In order:
# 1. the three sweeps, each row checked against cuBLAS before it is timed: main
#    (.probe/sweep_<precision>_main), the pack (new) and, for 16-bit, the pack with
#    16-bit products of 2 to 8 rows under 2 MiB of large operand off the skinny rung
#    (.probe/sweep_<precision>_c, runs/session28/tiny-16-bit-off-skinny.patch over the pack's
#    tree), alternated main/new/c/c/new/main;
# 2. ncu's duration of the skinny kernel on a tiny row, main and new;
# 3. the whole suite with compute-sanitizer beside it (all four tools on SANITIZE_ALL, memcheck
#    on SANITIZE_MEMCHECK), cut at BUDGET seconds of command; then initcheck on test_reliability
#    alone (sessions 25 and 27 saw reports there only beside other instrumented processes).
# Carry .device-deps (without lib/libCatch2WithMain.a), .prebuilt, .probe (probe.tar.xz). Command:
#   BUDGET=560 bash bench/results/h100/runs/session28/s28.sh $OUT
export PATH=$PATH:/usr/local/cuda/bin
O=$1; S=$O/s28-summary.txt; B=${BUDGET:-560}
left() { echo $((B - SECONDS)); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
PATCHES=""
. bench/results/h200/runs/session22/unpack-prebuilt.sh && unpack_prebuilt || exit 1
export LD_LIBRARY_PATH=$W/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
tar xJf $ROOT/.probe/probe.tar.xz -C $ROOT/.probe || exit 1
mkdir -p $O/sw
for ty in bf16 fp16 fp32; do
  for v in main new c c new main; do
    bin=$W/build/h200/bench/bench_gemm_sweep_$ty; [ $v != new ] && bin=$ROOT/.probe/sweep_${ty}_$v
    [ -x $bin ] || continue
    timeout 90 $bin --benchmark_out=$O/sw/sweep-$ty-$v-$SECONDS.json --benchmark_out_format=json \
      > /dev/null 2>> $O/sw/sweep-stderr.txt || echo "sweep $ty $v failed" >> $S
  done
done
tar czf $O/s28-sweeps.tar.gz -C $O sw && rm -rf $O/sw
echo "sweeps done at ${SECONDS}s" >> $S
if [ "${NCU:-1}" = 1 ] && command -v ncu > /dev/null; then
  for v in main new; do
    bin=$W/build/h200/bench/bench_gemm_sweep_fp16; [ $v = main ] && bin=$ROOT/.probe/sweep_fp16_main
    for row in fp16/foundry/1283x3x31 fp16/foundry/2x5851x224; do
      timeout 40 ncu --clock-control none --metrics gpu__time_duration.sum --csv --launch-skip 300 --launch-count 20 \
        $bin --benchmark_filter="^gemm_sweep_$row" 2>&1 | grep -E '^"' | sed "s|^|$v,$row,|" >> $O/s28-ncu-tiny.csv
    done
  done
  echo "ncu done at ${SECONDS}s" >> $S
fi
SANITIZE_TOOLS=memcheck SANITIZE_JOBS=4 SANITIZE_TIMEOUT=$(( $(left) - 60 )) \
  SANITIZE_BINARIES="${SANITIZE_MEMCHECK:-test_gemm_tensor_core test_gemm_tf32 test_gemm_wgmma test_transform test_reduce test_transform_reduce test_scan test_histogram test_stencil test_graph test_pipeline}" \
  timeout $(( $(left) - 50 )) scripts/gpu-check.sh $O/m sanitize > /dev/null 2>&1 &
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=$(( $(left) - 60 )) \
  SANITIZE_BINARIES="${SANITIZE_ALL:-test_gemm_skinny test_gemm_dispatch test_gemm_fp32}" \
  timeout $(( $(left) - 50 )) scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1; echo "check rc=$? at ${SECONDS}s" >> $S
wait
timeout $(( $(left) - 10 )) compute-sanitizer --tool initcheck --error-exitcode 99 build/h200/tests/test_reliability \
  "~[.]~[large]~[not_under_sanitizer]" > $O/initcheck-reliability-alone.txt 2>&1; echo "initcheck test_reliability alone rc=$? at ${SECONDS}s: $(grep -E 'ERROR SUMMARY' $O/initcheck-reliability-alone.txt)" >> $S
grep -h "^== " $O/a/sanitizer.log $O/m/sanitizer.log >> $S
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" $O/a/ctest.log >> $S
tar czf $O/s28-logs.tar.gz -C $O a m initcheck-reliability-alone.txt && rm -rf $O/a $O/m $O/initcheck-reliability-alone.txt
echo "done at ${SECONDS}s" >> $S
cat $S
