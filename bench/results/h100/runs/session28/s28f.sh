#!/bin/bash
# Session 28's fourth call: the bf16 and fp16 sweeps of small-fallback-tile.patch (over 98fa555,
# .probe/sweep_<precision>_fb) against the landed tree (.probe/sweep_<precision>_landed),
# alternated landed/fb/fb/landed, each row checked against cuBLAS before it is timed. No test
# suite: data for the next session, nothing lands from it.
# Carry .device-deps (without lib/libCatch2WithMain.a) and .probe. Command:
#   bash bench/results/h100/runs/session28/s28f.sh $OUT
export PATH=$PATH:/usr/local/cuda/bin
O=$1; S=$O/s28f-summary.txt; P=$PWD/.probe
nvidia-smi --query-gpu=name,driver_version --format=csv > $S
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
tar xJf $P/probe.tar.xz -C $P || exit 1
mkdir -p $O/sw
for ty in bf16 fp16; do
  for v in landed fb fb landed; do
    timeout 90 $P/sweep_${ty}_$v --benchmark_out=$O/sw/sweep-$ty-$v-$SECONDS.json --benchmark_out_format=json \
      > /dev/null 2>> $O/sw/sweep-stderr.txt || echo "sweep $ty $v failed" >> $S
  done
done
grep -c "error_occurred\": true" $O/sw/*.json >> $S
tar czf $O/s28f-sweeps.tar.gz -C $O sw && rm -rf $O/sw
echo "done at ${SECONDS}s" >> $S
cat $S
