#!/bin/bash
# Session 26, after the depth guard of the narrow wgmma tiles (47d07c0):
# test_gemm_wgmma in full, the bf16 and fp16 sweeps (3 repetitions, interleaved, as
# gpu-check.sh runs them) for the README's H100 table, then memcheck on test_gemm_wgmma,
# from binaries built on the CPU machine (.probe/probe-b.tar.xz). Carry .device-deps and .probe.
#   bash bench/results/h100/runs/session26/s26b.sh $OUT
O=$1; S=$O/s26b-summary.txt; P=.probe
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
tar xJf $P/probe-b.tar.xz -C $P
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $S
timeout 70 $P/test_gemm_wgmma > $O/test_gemm_wgmma.txt 2>&1
echo "test_gemm_wgmma rc=$? $(tail -2 $O/test_gemm_wgmma.txt | head -1) (${SECONDS}s)" >> $S
for ty in bf16 fp16; do
  timeout 40 $P/bench_gemm_sweep_$ty --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true \
    --benchmark_out=$O/s26b-sweep-$ty.json --benchmark_out_format=json > /dev/null 2>> $S
  echo "sweep $ty rc=$? (${SECONDS}s)" >> $S
done
timeout 90 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 $P/test_gemm_wgmma \
  '~[.]~[large]~[not_under_sanitizer]' > $O/memcheck.txt 2>&1
echo "memcheck test_gemm_wgmma rc=$? $(grep -E 'ERROR SUMMARY' $O/memcheck.txt | tail -1) (${SECONDS}s)" >> $S
