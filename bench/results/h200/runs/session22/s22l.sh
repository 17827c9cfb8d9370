#!/bin/bash
# Session 22, for a short budget (~430 s on an H100): s22.sh without main's baseline or the
# probe, and the sweeps right after the build, so that a call cut short by the budget still
# brings them back. Main with reduce-late-trigger.patch and model-refit.patch; the whole
# suite; the four tools on the GEMM binaries and issue 19's tests.
# Command (carry .device-deps, .snap; .snap/tree.tgz = `git archive HEAD | gzip`):
#   rm -rf /tmp/t && mkdir -p /tmp/t && tar xzf .snap/tree.tgz -C /tmp/t && cp -r .device-deps /tmp/t/ &&
#     bash /tmp/t/bench/results/h200/runs/session22/s22l.sh $OUT
O=$1; S=$O/s22-summary.txt; R=bench/results/h200/runs/session21
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S
cd /tmp/t || exit 1
for p in reduce-late-trigger model-refit; do patch -p1 < $R/$p.patch >> $S 2>&1 || { cat $S; exit 1; }; done
scripts/gpu-check.sh $O/a build >> $S 2>&1 || { tail -30 $S; exit 1; }
rm -f $O/a/build.log
BENCH_BINARIES="bench_gemm_sweep_bf16 bench_gemm_sweep_fp16 bench_gemm_sweep_fp32 bench_gemm_skinny" \
  timeout 100 scripts/gpu-check.sh $O/g bench >> $S 2>&1; echo "bench rc=$? at ${SECONDS}s" >> $S; rm -f $O/g/bench.log $O/g/bench/report.md
SANITIZE_WITH_TESTS=1 SANITIZE_JOBS=12 TEST_JOBS=8 SANITIZE_TIMEOUT=${ST:-240} \
  SANITIZE_BINARIES="test_gemm_dispatch test_gemm_wgmma test_gemm_skinny test_gemm_tensor_core test_gemm_fp32 test_pipeline test_graph test_memory" \
  scripts/gpu-check.sh $O/a test,sanitize >> $S 2>&1
grep -h "^== " $O/a/sanitizer.log >> $S
python3 scripts/bench_report.py --no-plot --markdown /tmp/r.md $O/g/bench/benchmarks.json > /dev/null &&
  grep -E "^\| (bf16|fp16|fp32) " /tmp/r.md | cut -c1-300 >> $S
echo "done at ${SECONDS}s" >> $S
tail -4 $S
