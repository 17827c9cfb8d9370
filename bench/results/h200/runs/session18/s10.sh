#!/bin/bash
# Session 18, calls 5 and 6 (s10-summary.txt and s11-summary.txt; call 6 with rung 3 back to
# main's trigger-first): s9.sh cut down to the 365 s of budget left (two more calls had found no
# machine): only the changed tree's three sweeps (the working tree: main 2721286 with s8.sh's
# two changes), on an H100 to compare row by row with s7's sweeps (main's kernels, an H100).
# Not a verification: no tests. Command (carry .device-deps):
#   bash bench/results/h200/runs/session18/s10.sh $OUT
O=$1
S=$O/s10-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
SW="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32"
BUILD_TARGETS="$SW" scripts/gpu-check.sh $O/t build >> $S 2>&1 || { tail -20 $S; exit 1; }
rm -f $O/t/build.log
BENCH_BINARIES="$SW" timeout 60 scripts/gpu-check.sh $O/t bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S
rm -f $O/t/bench.log $O/t/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/t/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
grep -v "^\[" $S | grep -v "^$" | tail -12
