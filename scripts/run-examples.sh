#!/usr/bin/env bash
# Runs the pattern tour (docs/guide.md) on a GPU machine and saves what it printed in ONE
# file, OUT/examples.txt (the device tool returns at most 8 files from $OUT and
# scripts/gpu-check.sh already writes six): each section after a line "=== NAME ===", so
# that `scripts/snippets.py --split examples.txt` files them under
# bench/results/h200/examples/ and refreshes docs/guide.md. The file grows as the run goes,
# so a run stopped at the device tool's limit still returns what it did.
#   1. every tour example at its full size (=== NAME ===), and the resources ptxas gave
#      register_spills' kernels (=== register_spills_resources ===)
#   2. compute-sanitizer over every example with --small (memcheck; racecheck and synccheck
#      on the ones with shared memory): every run must report 0 errors and exit 0
#   3. the deliberate bug: `example_debugging --fault` under memcheck must be reported
#      ("Invalid __global__ write")
#   4. if ncu is installed: ncu --nvtx --nvtx-include on profiling_nvtx, which must profile
#      the kernels of the range "sum: foundry" (at least one) and none of the others
#   Steps 2-4 go to the section "=== tools ===", the summary last.
#   usage: scripts/run-examples.sh OUT [BUILD]   (BUILD: default build/h200, already built:
#          BUILD_TARGETS="example_launch_sizing ..." scripts/gpu-check.sh OUT build)
#   EXAMPLES_BUDGET: seconds this script may take (default 420); a step that would start
#          after it is spent is skipped and counts as a failure, so that the summary is
#          written inside the device tool's 10-minute limit.
#   Exits 1 if an example failed, a sanitizer found an error, the fault went unreported,
#   the NVTX filter selected the wrong kernels, or a step was skipped for time.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:?usage: scripts/run-examples.sh OUT [BUILD]}
build=${2:-build/h200}
budget=${EXAMPLES_BUDGET:-420}
export PATH="$PATH:/usr/local/cuda/bin"
examples=(launch_sizing warp_divergence coalescing bank_conflicts register_spills read_only_memory
          instruction_throughput atomics_contention debugging profiling_nvtx)
shared_memory=(bank_conflicts atomics_contention)
mkdir -p "$out"
all="$out/examples.txt"
: >"$all"
fail=0
summary=()

# Seconds a step may take: at most CAP, and no more than what is left of the budget (0 when
# too little is left to start one).
allowance() {
  local left=$((budget - SECONDS))
  if [ "$left" -lt 20 ]; then echo 0; elif [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}

for name in "${examples[@]}"; do
  bin="$build/examples/example_$name"
  if [ ! -x "$bin" ]; then
    summary+=("$(printf '%-24s not built' "$name")"); fail=1; continue
  fi
  limit=$(allowance 120)
  if [ "$limit" -eq 0 ]; then
    summary+=("$(printf '%-24s skipped: time budget spent' "$name")"); fail=1; continue
  fi
  s=$SECONDS
  text=$(timeout "$limit" "$bin" 2>&1)
  rc=$?
  { echo "=== $name ==="; printf '%s\n' "$text"; } >>"$all"
  summary+=("$(printf '%-24s exit %d (%d s)' "$name" "$rc" "$((SECONDS - s))")")
  [ "$rc" -eq 0 ] || fail=1
done

# The resources the compiler gave register_spills' kernels, as its binary records them.
if command -v cuobjdump >/dev/null && [ -x "$build/examples/example_register_spills" ]; then
  { echo "=== register_spills_resources ==="
    cuobjdump --dump-resource-usage "$build/examples/example_register_spills" 2>&1 |
      awk '/Function .*blend_/ { sub(/.*blend_/, "blend_"); sub(/EPKfPfm:.*/, ""); name = $0;
                                 if ((getline line) > 0) { sub(/^ +/, "", line); print name ": " line } }'; } >>"$all"
fi

echo "=== tools ===" >>"$all"
# compute-sanitizer: "ERROR SUMMARY: 0 errors" / "RACECHECK SUMMARY: 0 hazards" wanted.
# Prints "ERRORS EXIT INVALID_WRITES" (ERRORS "?" when no summary line was printed).
sanitize() {  # tool name args...
  local tool=$1 name=$2; shift 2
  local log rc n writes limit
  limit=$(allowance 180)
  if [ "$limit" -eq 0 ]; then echo "? skipped 0"; return; fi
  log=$(timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 99 "$build/examples/example_$name" "$@" 2>&1)
  rc=$?
  n=$(grep -oE '(ERROR SUMMARY: |RACECHECK SUMMARY: )[0-9]+' <<<"$log" | grep -oE '[0-9]+' | tail -1)
  writes=$(grep -c 'Invalid __global__ write' <<<"$log")
  { echo "== $tool $name $* rc=$rc errors=${n:-?}"; grep -E 'SUMMARY|Invalid|at .* in |by thread|Address' <<<"$log" | head -20; } >>"$all"
  echo "${n:-?} $rc $writes"
}
if command -v compute-sanitizer >/dev/null; then
  for name in "${examples[@]}"; do
    [ -x "$build/examples/example_$name" ] || continue
    tool_list=(memcheck)
    [[ " ${shared_memory[*]} " == *" $name "* ]] && tool_list+=(racecheck synccheck)
    for tool in "${tool_list[@]}"; do
      read -r n rc writes < <(sanitize "$tool" "$name" --small)
      summary+=("$(printf '%-24s %s --small: %s errors, exit %s' "$name" "$tool" "$n" "$rc")")
      [ "$n" = 0 ] && [ "$rc" = 0 ] || fail=1
    done
  done
  if [ -x "$build/examples/example_debugging" ]; then
    read -r n rc writes < <(sanitize memcheck debugging --fault)
    if [ "$n" != "?" ] && [ "$n" -gt 0 ] && [ "$writes" -gt 0 ]; then
      summary+=("$(printf '%-24s memcheck --fault: caught (%s errors, exit %s), as it should be' debugging "$n" "$rc")")
    else
      summary+=("$(printf '%-24s memcheck --fault: NOT caught (%s errors, exit %s)' debugging "$n" "$rc")"); fail=1
    fi
  fi
else
  summary+=("compute-sanitizer not found: sanitizer stage skipped"); fail=1
fi

# ncu prints one line per profiled kernel: "  NAME (GRID)x(BLOCK), Context 1, Stream ...";
# demangled names, so that the naive kernels show their namespace.
filter="foundry@sum: foundry/"
if command -v ncu >/dev/null && [ -x "$build/examples/example_profiling_nvtx" ]; then
  limit=$(allowance 120)
  if [ "$limit" -eq 0 ]; then
    summary+=("$(printf '%-24s ncu: skipped: time budget spent' profiling_nvtx)"); fail=1
  else
    log=$(timeout "$limit" ncu --nvtx --nvtx-include "$filter" --print-kernel-base demangled \
          --metrics gpu__time_duration.sum "$build/examples/example_profiling_nvtx" --small 2>&1)
    rc=$?
    launch_line='^  [^ =].*\([0-9]+, [0-9]+, [0-9]+\)x\('
    { echo "== ncu --nvtx --nvtx-include \"$filter\" --metrics gpu__time_duration.sum example_profiling_nvtx --small (rc=$rc)"
      grep -E "$launch_line|gpu__time_duration|==PROF==|==ERROR==|==WARNING==" <<<"$log" | head -40; } >>"$all"
    kernels=$(grep -cE "$launch_line" <<<"$log")
    others=$(grep -E "$launch_line" <<<"$log" | grep -cE 'generate|naive')
    summary+=("$(printf '%-24s ncu --nvtx-include "%s": %s kernels profiled, %s outside the range (exit %s)' \
      profiling_nvtx "$filter" "$kernels" "$others" "$rc")")
    [ "$rc" -eq 0 ] && [ "$kernels" -gt 0 ] && [ "$others" -eq 0 ] || fail=1
  fi
else
  summary+=("ncu not found: the NVTX filter was not shown")
fi

{ echo; echo "== summary ($SECONDS s)"; printf '%s\n' "${summary[@]}"; } >>"$all"
echo "== run-examples summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null), $SECONDS s)"
printf '%s\n' "${summary[@]}"
exit $fail
