#!/bin/bash
# Session 9, call C (issue 20): bench_gemm's 16-bit rows before the redesign (33853d6) and
# after (this tree), built and run in one call, alternated twice, 3 repetitions each.
O=$1; R=$PWD; cd /tmp/t || exit 1
source scripts/gpu-env.sh
mkdir -p /tmp/before && tar xzf $R/.snap/before.tgz -C /tmp/before && cp -r .device-deps /tmp/before/
(cd /tmp/before && cmake --preset h200 > /tmp/before-cfg.log 2>&1 && cmake --build --preset h200 --target bench_gemm -j 8 > /tmp/before-build.log 2>&1) &
(cmake --preset h200 > /dev/null 2>&1; cmake --build --preset h200 --target bench_gemm -j 8 > /tmp/after-build.log 2>&1) &
wait
ls -la /tmp/before/build/h200/bench/bench_gemm build/h200/bench/bench_gemm || { tail -20 /tmp/before-build.log /tmp/after-build.log; exit 1; }
F="--benchmark_filter=gemm_(bf16|f16)/(foundry|cublas)/ --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true"
for i in 1 2; do
  /tmp/before/build/h200/bench/bench_gemm $F --benchmark_out=$O/gemm16-before-$i.json --benchmark_out_format=json > /dev/null 2>&1; echo "before $i rc=$?"
  build/h200/bench/bench_gemm $F --benchmark_out=$O/gemm16-after-$i.json --benchmark_out_format=json > /dev/null 2>&1; echo "after $i rc=$?"
done
for i in 1 2; do python3 scripts/bench_compare.py $O/gemm16-before-$i.json $O/gemm16-after-$i.json | tail -8; done
