#!/usr/bin/env bash
# The multi-GPU run of foundry::nccl (issue 25) on however many GPUs this machine has:
# builds the NCCL tests and benchmark for sm_90 (preset h200), runs every NCCL test case
# (the multi-GPU ones loop over 2..all GPUs themselves; with one GPU they say SKIPPED),
# compute-sanitizer memcheck on the small cases, bench_nccl (1, 2, 4, 8 GPUs where present
# and the machine's own count), NCCL's own nccl-tests all_reduce_perf when it is installed,
# then the report.
#   usage: scripts/multi-gpu.sh OUT [STAGES]
#   OUT receives at most eight files (the device tool returns no more): build.log, ctest.log,
#   sanitizer.log, bench.log, topology.txt, nccl-tests.log, bench/{benchmarks.json,report.md}.
#   Exits non-zero when the build, a test, memcheck or a benchmark failed; 2 without a GPU.
#   BENCH_ARGS: arguments for bench_nccl (default: three repetitions in random order, the
#               median reported, as scripts/gpu-check.sh; e.g. --benchmark_filter=allreduce).
#   STAGES: comma list of build,test,sanitize,bench (default: all four), as the second
#           argument (as scripts/gpu-check.sh takes it) or the environment variable
#   BUILD: the build tree (default build/h200)
# NVLink multicast (NVLS) is never used on the lent machines: NCCL_NVLS_ENABLE=0, always.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/multi-gpu.sh OUT [STAGES]}
stages=${2:-${STAGES:-build,test,sanitize,bench}}
has() { [[ ",$stages," == *",$1,"* ]]; }
mkdir -p "$out/bench"
source scripts/gpu-env.sh
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "$gpus" -lt 1 ]; then
  echo "multi-gpu: no CUDA GPU on this machine (nvidia-smi lists none)" >&2
  exit 2
fi
build=${BUILD:-build/h200}
summary=()
fail=0
note() { summary+=("$(printf '%-10s %s' "$1" "$2")"); }
t0=$SECONDS
{ nvidia-smi -L; echo; nvidia-smi topo -m; echo; echo "NCCL_ROOT=${NCCL_ROOT:-<toolkit>} NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"; } >"$out/topology.txt" 2>&1

if has build; then
  s=$SECONDS
  if cmake --preset h200 >"$out/build.log" 2>&1 &&
    cmake --build --preset h200 -j "$(nproc)" --target test_nccl test_nccl_gemm bench_nccl >>"$out/build.log" 2>&1; then
    note build "ok ($((SECONDS - s)) s)"
  else
    note build "FAILED ($((SECONDS - s)) s): see build.log (foundry::nccl needs nccl.h: set NCCL_ROOT)"
    tail -30 "$out/build.log"
    fail=1
  fi
fi

if has test; then
  s=$SECONDS
  (cd "$build" && ctest --output-on-failure --timeout 900 -R '^test_nccl') >"$out/ctest.log" 2>&1 || fail=1
  note test "$(grep -E 'tests passed|tests failed' "$out/ctest.log" | tr '\n' ';') on $gpus GPU(s) ($((SECONDS - s)) s)"
  grep -E '\(Failed\)|\(Timeout\)|\(SEGFAULT\)|Not Run' "$out/ctest.log" | head -20
  note skipped "$(grep -c '(Skipped)' "$out/ctest.log") (a multi-GPU case on one GPU says SKIPPED)"
fi

if has sanitize; then
  s=$SECONDS
  : >"$out/sanitizer.log"
  errors=0
  # Small cases: the one-GPU collectives, the thread-per-rank communicator, the error paths,
  # and the sharded GEMM on every GPU count (its shapes are at most 257 x 129 x 512). Cases
  # tagged [not_under_sanitizer] (device-wide free memory compared) are left out, as gpu-check.sh does.
  for run in "test_nccl|[nccl]~[multi_gpu]~[not_under_sanitizer]" "test_nccl|[multi_gpu]~[not_under_sanitizer]" \
    "test_nccl_gemm|[nccl]~[not_under_sanitizer]"; do
    bin=$build/tests/${run%%|*}
    filter=${run#*|}
    # --report-api-errors no: NCCL's communicator set-up probes kernels that have no sm_90
    # image and ignores the error it gets; memcheck would count each probe (memory errors count).
    log=$(timeout 900 compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 99 "$bin" "$filter" 2>&1)
    rc=$?
    n=$(grep -oE 'ERROR SUMMARY: [0-9]+' <<<"$log" | grep -oE '[0-9]+' | tail -1)
    { echo "== memcheck $(basename "$bin") $filter rc=$rc errors=${n:-?}"; grep -E 'SUMMARY|test cases|FAILED|SKIPPED|=========  ' <<<"$log" | head -40; } >>"$out/sanitizer.log"
    errors=$((errors + ${n:-0}))
    [ "$rc" -ne 0 ] && [ "${n:-0}" -eq 0 ] && errors=$((errors + 1))
  done
  note memcheck "$errors errors ($((SECONDS - s)) s)"
  [ "$errors" -eq 0 ] || fail=1
fi

if has bench; then
  s=$SECONDS
  raw=$out/bench/benchmarks.json
  "$build/bench/bench_nccl" --benchmark_out="$raw" --benchmark_out_format=json \
    ${BENCH_ARGS---benchmark_repetitions=3 --benchmark_enable_random_interleaving=true} >"$out/bench.log" 2>&1
  rc=$?
  note bench "exit $rc ($((SECONDS - s)) s)"
  [ "$rc" -eq 0 ] || fail=1
  py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3
  # --no-plot: a roofline.png would be a ninth file, and the device tool returns eight.
  "$py" scripts/bench_report.py "$raw" --markdown "$out/bench/report.md" --no-plot >>"$out/bench.log" 2>&1 || fail=1
  # NCCL's own figure for the same operation, when nccl-tests is installed (issue 25's yardstick).
  if command -v all_reduce_perf >/dev/null; then
    all_reduce_perf -b 8 -e 1G -f 8 -g "$gpus" >"$out/nccl-tests.log" 2>&1 || note nccl-tests "exit $?"
  else
    echo "nccl-tests (all_reduce_perf) not installed: compare with the allreduce/nccl rows (plain NCCL calls)" >"$out/nccl-tests.log"
  fi
  [ -f "$out/bench/report.md" ] && grep -A40 "^### Multi-GPU" "$out/bench/report.md" | head -60
fi

echo
echo "== multi-gpu summary ($gpus x $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $((SECONDS - t0)) s)"
printf '%s\n' "${summary[@]}"
exit $fail
