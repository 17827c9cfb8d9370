#!/bin/bash
# Session 26's check of main with the three plan changes (wgmma's 128 x 64 tiles beyond
# N = 64, the fallback's split model, the skinny rung's shared-K slices), on the build packed
# here (runs/session22/pack-prebuilt.sh into .prebuilt): first the bf16 and fp16 sweeps, main
# before the changes (.probe/sweep_{bf16,fp16}_old, built at 73072cb) against the pack's,
# old/new/new/old/old/new, each row checked against cuBLAS before it is timed; then the whole
# suite with compute-sanitizer beside it (all four tools on the binaries whose plans changed,
# memcheck on the other GEMM binaries), cut at BUDGET seconds of command. Between them, the
# plan-space probe of this tree.
# Carry .device-deps (without libCatch2WithMain.a), .prebuilt, .probe. Command:
#   BUDGET=560 bash bench/results/h100/runs/session26/s26.sh $OUT
O=$1; S=$O/s26-summary.txt; B=${BUDGET:-560}
left() { echo $((B - SECONDS)); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
. bench/results/h200/runs/session22/unpack-prebuilt.sh && unpack_prebuilt || exit 1
export LD_LIBRARY_PATH=$W/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
# .probe carries probe.tar.xz (the stripped binaries, xz: the tree must stay under 64 MiB).
[ -f $ROOT/.probe/probe.tar.xz ] && tar xJf $ROOT/.probe/probe.tar.xz -C $ROOT/.probe
mkdir -p $O/ab
for ty in bf16 fp16; do
  for v in old new new old old new; do
    bin=$ROOT/.probe/sweep_${ty}_old; [ $v = new ] && bin=$W/build/h200/bench/bench_gemm_sweep_$ty
    timeout 60 $bin --benchmark_out=$O/ab/sweep-$ty-$v-$SECONDS.json --benchmark_out_format=json \
      > /dev/null 2>> $O/ab/sweep-stderr.txt || echo "sweep $ty $v failed" >> $S
  done
done
tar czf $O/ab-sweeps.tar.gz -C $O ab && rm -rf $O/ab
echo "sweeps done at ${SECONDS}s" >> $S
# runs/session23/plan_space_probe.cu built from this tree (.probe/plan_space_probe): the chosen
# plan and its alternatives on issue 21's worst shapes (~30 s).
timeout 60 $ROOT/.probe/plan_space_probe > $O/s26-plan-space.csv 2> $O/s26-plan-space.err
echo "plan space probe rc=$? at ${SECONDS}s" >> $S
SANITIZE_TOOLS=memcheck SANITIZE_JOBS=4 SANITIZE_TIMEOUT=$(( $(left) - 25 )) \
  SANITIZE_BINARIES="test_gemm_tensor_core test_gemm_fp32 test_reliability_checks test_gemm_tf32" \
  timeout $(( $(left) - 10 )) scripts/gpu-check.sh $O/m sanitize > /dev/null 2>&1 &
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=$(( $(left) - 25 )) \
  SANITIZE_BINARIES="test_gemm_dispatch test_gemm_wgmma test_gemm_skinny" \
  timeout $(( $(left) - 10 )) scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1; echo "check rc=$? at ${SECONDS}s" >> $S
wait
grep -h "^== " $O/a/sanitizer.log $O/m/sanitizer.log >> $S
grep -E "tests passed|tests failed" $O/a/ctest.log >> $S
echo "done at ${SECONDS}s" >> $S
