#!/bin/bash
# Session 27's second call, NOT RUN (no machine came; the budget went on failed starts): the
# fallback's cap for a small C at 64 slices (small-c-fallback-64.patch over main) against 32 (the
# landed small_c_max_fallback_splits, the first call's small-c-fallback-splits.patch) and main,
# in the bf16 and fp16 sweeps (.probe/sweep_<precision>_{main,cap,cap64}, alternated
# main/cap/cap64/cap64/cap/main, each row checked against cuBLAS before it is timed); then that
# tree's test_gemm_dispatch (.probe/test_gemm_dispatch_cap64) alone, and under each of the four
# compute-sanitizer tools at once (gpu-check.sh's filter and memcheck's leak check: no hidden, [large] or
# [not_under_sanitizer] cases; racecheck also skips [racecheck_slow]).
# Carry .device-deps (without lib/libCatch2WithMain.a) and .probe (probe.tar.xz). Command:
#   bash bench/results/h100/runs/session27/s27c.sh $OUT
export PATH=$PATH:/usr/local/cuda/bin
O=$1; S=$O/s27c-summary.txt; P=$PWD/.probe
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
tar xJf $P/probe.tar.xz -C $P || exit 1
mkdir -p $O/sw
for ty in bf16 fp16; do
  for v in main cap cap64 cap64 cap main; do
    timeout 90 $P/sweep_${ty}_$v --benchmark_out=$O/sw/sweep-$ty-$v-$SECONDS.json --benchmark_out_format=json \
      > /dev/null 2>> $O/sw/sweep-stderr.txt || echo "sweep $ty $v failed" >> $S
  done
done
tar czf $O/s27c-sweeps.tar.gz -C $O sw && rm -rf $O/sw
echo "sweeps done at ${SECONDS}s" >> $S
T=$P/test_gemm_dispatch_cap64
$T > $O/s27c-dispatch.txt 2>&1; echo "test_gemm_dispatch rc=$? at ${SECONDS}s: $(grep -E 'test cases|passed|failed' $O/s27c-dispatch.txt | tail -1)" >> $S
F="~[.]~[large]~[not_under_sanitizer]"
for tool in memcheck racecheck synccheck initcheck; do
  f=$F; x=; [ $tool = racecheck ] && f="$F~[racecheck_slow]"; [ $tool = memcheck ] && x="--leak-check full"
  (timeout 300 compute-sanitizer --tool $tool $x --error-exitcode 99 $T "$f" > $O/san-$tool.txt 2>&1
   echo "== $tool test_gemm_dispatch rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/san-$tool.txt | tail -1) at ${SECONDS}s" >> $O/san.txt) &
done
wait
cat $O/san.txt >> $S
tar czf $O/s27c-logs.tar.gz -C $O s27c-dispatch.txt san-memcheck.txt san-racecheck.txt san-synccheck.txt san-initcheck.txt && rm -f $O/san-*.txt $O/san.txt
echo "done at ${SECONDS}s" >> $S
cat $S
