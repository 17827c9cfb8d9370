#!/bin/bash
# Session 20, for the next H200: main as it is (185b86e or later), the whole suite, the four
# tools on the GEMM binaries whose kernels or plans changed since session 12 verified on an H200
# (test_gemm_dispatch, test_gemm_wgmma, test_gemm_skinny, test_gemm_tensor_core), the sweeps
# and bench_gemm_skinny (the README's H200 rows: scripts/h200-report.sh). ~410 s on an H100.
# Then runs/session17/s4.sh on the same warm machine, at once.
# Command (carry .device-deps, .snap; .snap/tree.tgz = `git archive HEAD`):
#   rm -rf /tmp/t && mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session20/s17.sh $OUT
O=$1; S=$O/s17-summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
cd /tmp/t || exit 1
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_dispatch test_gemm_wgmma test_gemm_skinny test_gemm_tensor_core" scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 100 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
tail -4 $S
