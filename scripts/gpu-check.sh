#!/usr/bin/env bash
# The one-call GPU check (see the device README): on a GPU machine, configure
# for sm_90 with Ninja, build everything, run every test, run compute-sanitizer
# (memcheck, racecheck, synccheck, initcheck) on the test binaries, run the
# benchmarks with JSON output, write logs and results into OUT, and print a
# short summary last.
#   usage: scripts/gpu-check.sh OUT [STAGES]
#   OUT receives six files (build.log, ctest.log, sanitizer.log, bench.log and
#   bench/{benchmarks.json,report.md}); the device tool returns at most 8 files from
#   $OUT, so a call that adds more than two of its own loses some (2983dba lost its JSON).
#   Exits non-zero when a build, a test, a sanitizer run or a benchmark failed.
#   STAGES: comma list of build,test,sanitize,bench (default: all four)
#   BENCH_ARGS: extra arguments for every benchmark binary (e.g. --benchmark_filter=...).
#               Default: three repetitions of every row in random order, reported as their
#               median. On the H200 the clock moves under power management: in the run of
#               ef7a83a the repetitions of a GEMM row spread by 2% at the median and by up
#               to 26%, so one pass in a fixed order skews whichever rows follow heavy ones.
#               Setting BENCH_ARGS replaces the default; add the two flags back
#               (--benchmark_repetitions=3 --benchmark_enable_random_interleaving=true) for
#               figures meant for bench/results.
#   SANITIZE_FILTER: Catch2 filter for the sanitizer runs (default: skip hidden, [large] and
#                    [not_under_sanitizer] cases; racecheck also skips [racecheck_slow])
#   SANITIZE_TOOLS: compute-sanitizer tools to run (default: memcheck racecheck synccheck initcheck)
#   SANITIZE_BINARIES: test binaries to run them on, by name (default: every tests/test_*)
#   SANITIZE_TIMEOUT: seconds allowed per tool and binary (default: 300)
#   SANITIZE_JOBS: tool-and-binary runs at once (default: 1). The H100 of session 10 ran 16
#                  at once beside 8 tests without a timeout; one process each keeps the
#                  four tools on a slow binary from adding up.
#   SANITIZE_WITH_TESTS: 1 runs the sanitizers in the background while the test stage runs
#                  (the leak test, which compares device-wide free memory, after both)
#   SANITIZE_NO_API_ERRORS: binaries run with --report-api-errors no (default: test_nccl
#                    test_nccl_gemm: NCCL's communicator set-up probes kernels that have no
#                    sm_90 image and ignores the cudaErrorNoKernelImageForDevice it gets, which
#                    memcheck would count as 20 errors per communicator; memory errors still count)
#   BUILD_TARGETS: build only these targets (space-separated; default: everything), for a
#                  call that checks a few binaries; the bench stage then runs the bench_*
#                  binaries that were built
#   TEST_REGEX: ctest -R filter for the test stage (default: every test)
#   TEST_JOBS: run the tests this many at a time (default: 1), all but the leak test, which
#              compares device-wide free memory and then runs alone
#   BUILD: the build tree that the test and sanitize stages use (default: build/h200), so
#          that test binaries built elsewhere for sm_90 can be sanitized from BUILD/tests;
#          the build and bench stages always use the h200 preset (build/h200)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-check.sh OUT [STAGES]}
stages=${2:-build,test,sanitize,bench}
mkdir -p "$out"
source scripts/gpu-env.sh
build=${BUILD:-build/h200}
summary=()
fail=0
note() { summary+=("$(printf '%-10s %s' "$1" "$2")"); }
has() { [[ ",$stages," == *",$1,"* ]]; }
t0=$SECONDS

if has build; then
  s=$SECONDS
  if cmake --preset h200 >"$out/build.log" 2>&1 && cmake --build --preset h200 -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} -- -k 0 >>"$out/build.log" 2>&1; then
    note build "ok ($((SECONDS - s)) s)"
    # The build's wall time is its longest units' (16 cores): say which they were.
    note units "$(awk 'NR > 1 { n = split($4, part, "/"); printf "%d %s\n", ($2 - $1) / 1000, part[n] }' \
      build/h200/.ninja_log 2>/dev/null | sort -rn | head -4 | awk '{ printf "%s %s s, ", $2, $1 }')"
  else
    note build "FAILED ($((SECONDS - s)) s): see build.log"; tail -40 "$out/build.log"; fail=1
  fi
fi

# One tool on one test binary: its lines into $3, also appended to sanitizer.log as soon
# as the run ends (so a call cut short keeps what finished), its error count (a failed run
# without a count counts as one) into $3.errors.
sanitize_one() {
  local tool=$1 bin=$2 piece=$3 extra=() tool_filter=$filter started=$SECONDS log rc n
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  [[ " ${SANITIZE_NO_API_ERRORS-test_nccl test_nccl_gemm} " == *" $(basename "$bin") "* ]] && extra+=(--report-api-errors no)
  # Cases of hundreds of launches take many minutes under racecheck; each binary
  # keeps a smaller case that covers the same kernels for it.
  [ "$tool" = racecheck ] && tool_filter="$filter~[racecheck_slow]"
  log=$(timeout "${SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 "$bin" "$tool_filter" 2>&1)
  rc=$?
  n=$(grep -oE '(ERROR SUMMARY: |RACECHECK SUMMARY: )[0-9]+' <<<"$log" | grep -oE '[0-9]+' | tail -1)
  { echo "== $tool $(basename "$bin") rc=$rc errors=${n:-?} ($((SECONDS - started)) s)"; grep -E 'SUMMARY|test cases|FAILED|with expansion|^  |=========  ' <<<"$log" | head -40; } >"$piece"
  [ "$rc" -ne 0 ] && [ "${n:-0}" -eq 0 ] && echo "$tool $(basename "$bin"): exit $rc" >>"$piece" && n=1
  echo "${n:-0}" >"$piece.errors"
  cat "$piece" >>"$out/sanitizer.log"
}

# Every tool on every binary, SANITIZE_JOBS processes at once; writes sanitizer.log and
# prints one "<tool> <errors>" line per tool, then "sanitize <seconds>".
sanitize_all() {
  local s=$SECONDS pieces tool bin piece errors jobs=${SANITIZE_JOBS:-1}
  [[ "$jobs" =~ ^[1-9][0-9]*$ ]] || jobs=1
  filter=${SANITIZE_FILTER:-~[.]~[large]~[not_under_sanitizer]}
  : >"$out/sanitizer.log"
  pieces=$(mktemp -d)
  local bins=("$build"/tests/test_*)
  [ -n "${SANITIZE_BINARIES:-}" ] && read -r -a bins <<<"$(printf "$build/tests/%s " $SANITIZE_BINARIES)"
  local tools=(${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck})
  for tool in "${tools[@]}"; do
    for bin in "${bins[@]}"; do
      piece="$pieces/$tool-$(basename "$bin")"
      if [ ! -x "$bin" ]; then
        [ -n "${SANITIZE_BINARIES:-}" ] && echo "== $tool $(basename "$bin"): not built" | tee "$piece" >>"$out/sanitizer.log" &&
          echo 1 >"$piece.errors"
        continue
      fi
      while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
      sanitize_one "$tool" "$bin" "$piece" &
    done
  done
  wait
  for tool in "${tools[@]}"; do
    errors=0
    for bin in "${bins[@]}"; do
      piece="$pieces/$tool-$(basename "$bin")"
      if [ -f "$piece.errors" ]; then
        errors=$((errors + $(cat "$piece.errors")))
      elif [ -x "$bin" ]; then  # started but left no count: a failure
        echo "== $tool $(basename "$bin"): no result" >>"$out/sanitizer.log"
        errors=$((errors + 1))
      fi
    done
    echo "$tool $errors"
  done
  rm -rf "$pieces"
  echo "sanitize $((SECONDS - s))"
}

# With SANITIZE_WITH_TESTS=1 the sanitizers start first, in the background, and the
# tests run beside them; the leak test waits for them.
sanitize_notes=$(mktemp)
sanitize_pid=""
if has sanitize && has test && [ "${SANITIZE_WITH_TESTS:-0}" = 1 ]; then
  sanitize_all >"$sanitize_notes" &
  sanitize_pid=$!
fi

if has test; then
  s=$SECONDS
  # The leak test compares device-wide free memory before and after: it runs alone.
  leak_test="without a leak"
  if [ "${TEST_JOBS:-1}" -gt 1 ] || [ -n "$sanitize_pid" ]; then
    (cd "$build" && ctest --output-on-failure --timeout 600 -j "${TEST_JOBS:-1}" -E "$leak_test" ${TEST_REGEX:+-R "$TEST_REGEX"}) >"$out/ctest.log" 2>&1 || fail=1
    [ -n "$sanitize_pid" ] && wait "$sanitize_pid"
    (cd "$build" && ctest --output-on-failure --timeout 600 -R "$leak_test") >>"$out/ctest.log" 2>&1 || fail=1
  else
    (cd "$build" && ctest --output-on-failure --timeout 600 ${TEST_REGEX:+-R "$TEST_REGEX"}) >"$out/ctest.log" 2>&1 || fail=1
  fi
  note test "$(grep -E 'tests passed|tests failed' "$out/ctest.log" | tr '\n' ';') ($((SECONDS - s)) s)"
  grep -E '\(Failed\)|\(Timeout\)|\(SEGFAULT\)|Not Run' "$out/ctest.log" | head -20
  grep -c '(Skipped)' "$out/ctest.log" | xargs -I{} echo "skipped tests: {}"
fi

if has sanitize; then
  [ -n "$sanitize_pid" ] || sanitize_all >"$sanitize_notes"
  # Every tool reports a line, and the stage its time; anything less is a failure.
  [ "$(wc -l <"$sanitize_notes")" -eq "$(($(wc -w <<<"${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}") + 1))" ] ||
    { note sanitize "FAILED: $(wc -l <"$sanitize_notes") result lines"; fail=1; }
  while read -r tool value; do
    if [ "$tool" = sanitize ]; then
      note sanitize "done ($value s)"
    else
      note "$tool" "$value errors"
      [ "$value" -eq 0 ] || fail=1
    fi
  done <"$sanitize_notes"
  rm -f "$sanitize_notes"
fi

if has bench; then
  s=$SECONDS
  FOUNDRY_PRESET=h200 FOUNDRY_SKIP_DEPS=1 FOUNDRY_SKIP_BUILD=1 scripts/bench.sh "$out/bench" ${BENCH_ARGS---benchmark_repetitions=3 --benchmark_enable_random_interleaving=true} >"$out/bench.log" 2>&1
  rc=$?
  note bench "exit $rc ($((SECONDS - s)) s)"
  [ "$rc" -eq 0 ] || fail=1
  [ -f "$out/bench/report.md" ] && head -60 "$out/bench/report.md"
fi

echo
echo "== gpu-check summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $((SECONDS - t0)) s)"
printf '%s\n' "${summary[@]}"
exit $fail
