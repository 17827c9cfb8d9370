#!/bin/bash
# Session 28's third call: where the tiny 16-bit calls spend their time, for the next session.
# ncu with warm caches (--cache-control none: the sweep runs each row back to back, so its
# instruction and data caches are warm) on the landed tree's fp16 sweep binary
# (.probe/sweep_fp16_landed, built from 98fa555): the speed of light, launch, occupancy,
# warp-state and scheduler sections of one launch each of foundry's and cuBLAS's kernels on
# rows at 0.72-0.75 of cuBLAS. Carry .device-deps (without lib/libCatch2WithMain.a) and .probe.
#   bash bench/results/h100/runs/session28/s28n.sh $OUT
export PATH=$PATH:/usr/local/cuda/bin
O=$1; P=$PWD/.probe
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
tar xJf $P/probe.tar.xz -C $P || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/s28n-ncu.txt
for row in foundry/608x118x51 cublas/608x118x51 foundry/25x176x187 cublas/25x176x187 foundry/301x1x87 cublas/301x1x87; do
  echo "=== fp16/$row" >> $O/s28n-ncu.txt
  timeout 60 ncu --cache-control none --clock-control none --launch-skip 200 --launch-count 3 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
    --section SchedulerStats $P/sweep_fp16_landed --benchmark_filter="^gemm_sweep_fp16/$row" \
    2>&1 | grep -v -E "^(Run on|CPU Caches|  L[123]|Load Average|cccl|gemm_sweep|---|Benchmark|[0-9]{4}-)" >> $O/s28n-ncu.txt
done
echo "done at ${SECONDS}s" >> $O/s28n-ncu.txt
tail -3 $O/s28n-ncu.txt
