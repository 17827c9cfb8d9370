#!/bin/bash
# Session 21, the last call: main with the split-K reduce's late trigger and the refitted time
# model (gemm_pack.cuh), the whole suite, the four tools on test_gemm_dispatch, test_gemm_skinny and
# test_gemm_fp32 (their splits run the reduce; not test_gemm_tensor_core and test_gemm_wgmma, whose
# racechecks take 229 and 104 s: the budget left was 477 s), the sweeps and bench_gemm_skinny
# (built with every test and example, but no other benchmark: bench_gemm alone takes 149 s),
# then the fallback probe (built here from runs/session20/fallback_probe.cu on the same tree
# and carried in .probe/). ~300 s on an H100.
# Command (carry .device-deps, .snap, .probe; .snap/tree.tgz = `git archive` of the tree):
#   rm -rf /tmp/t && mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session21/s21.sh $OUT
O=$1; S=$O/s21-summary.txt; P=$PWD/.probe
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
cd /tmp/t || exit 1
T="test_core test_gemm_dispatch test_gemm_fp32 test_gemm_skinny test_gemm_tensor_core test_gemm_tf32 test_gemm_wgmma test_graph test_histogram test_memory test_pipeline test_reduce test_reduce_naive test_reliability test_reliability_checks test_runtime test_scan test_stencil test_transform test_transform_reduce test_transpose test_vector_split test_warp_block test_nccl test_nccl_gemm foundry_header_cost"
E="$(for e in atomics_contention bank_conflicts bench_your_kernel coalescing cuda_graph debugging gemm_ladder instruction_throughput launch_sizing pinned_vs_pageable profiling_nvtx read_only_memory register_spills small_copies_antipattern stream_overlap unified_memory_prefetch vector_add warp_divergence; do printf "example_%s " $e; done)"
BUILD_TARGETS="$T $E bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_dispatch test_gemm_skinny test_gemm_fp32" \
  scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 100 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
export LD_LIBRARY_PATH=$PWD/.device-deps/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
timeout 60 $P/fallback_probe > $O/s21-fallback-probe.csv 2>> $S; echo "probe rc=$? at ${SECONDS}s" >> $S
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
echo "done at ${SECONDS}s" >> $S
tail -4 $S
