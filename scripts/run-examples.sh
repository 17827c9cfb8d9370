#!/usr/bin/env bash
# Runs the pattern tour (docs/guide.md) on a GPU machine and saves what it printed:
#   1. every tour example at its full size: OUT/examples/NAME.txt, and all of them in one
#      file, OUT/examples.txt, each after a line "=== NAME ===" (the device tool returns at
#      most 8 files from $OUT: fetch the one file, then split it here with
#      `scripts/snippets.py --split examples.txt`, which also refreshes docs/guide.md)
#   2. compute-sanitizer over every example with --small (memcheck; racecheck and synccheck
#      on the ones with shared memory): every run must report 0 errors
#   3. the deliberate bug: `example_debugging --fault` under memcheck must be reported
#      ("Invalid __global__ write")
#   4. if ncu is installed: ncu --nvtx --nvtx-include on profiling_nvtx, which must profile
#      the kernels of the range "sum: foundry" and none of the others
# Sanitizer and ncu logs go to OUT/examples-tools.txt (also a section of examples.txt).
#   usage: scripts/run-examples.sh OUT [BUILD]   (BUILD: default build/h200, already built:
#          BUILD_TARGETS="example_launch_sizing ..." scripts/gpu-check.sh OUT build)
#   Exits 1 if an example failed, a sanitizer found an error, or the fault went unreported.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/run-examples.sh OUT [BUILD]}
build=${2:-build/h200}
export PATH="$PATH:/usr/local/cuda/bin"
examples=(launch_sizing warp_divergence coalescing bank_conflicts register_spills read_only_memory
          instruction_throughput atomics_contention debugging profiling_nvtx)
shared_memory=(bank_conflicts atomics_contention)
mkdir -p "$out/examples"
all="$out/examples.txt"
tools="$out/examples-tools.txt"
: >"$all"
: >"$tools"
fail=0
summary=()

for name in "${examples[@]}"; do
  bin="$build/examples/example_$name"
  if [ ! -x "$bin" ]; then
    summary+=("$(printf '%-24s not built' "$name")"); fail=1; continue
  fi
  s=$SECONDS
  "$bin" >"$out/examples/$name.txt" 2>&1
  rc=$?
  { echo "=== $name ==="; cat "$out/examples/$name.txt"; } >>"$all"
  summary+=("$(printf '%-24s exit %d (%d s)' "$name" "$rc" "$((SECONDS - s))")")
  [ "$rc" -eq 0 ] || fail=1
done

# The resources the compiler gave register_spills' kernels, as its binary records them.
if command -v cuobjdump >/dev/null && [ -x "$build/examples/example_register_spills" ]; then
  { echo "=== register_spills_resources ==="
    cuobjdump --dump-resource-usage "$build/examples/example_register_spills" 2>&1 |
      grep -E 'Function|REG:' | sed -E 's/_ZN[0-9A-Za-z_]*main(15|18)//; s/EPKfPfm//'; } >>"$all"
fi

# compute-sanitizer: "ERROR SUMMARY: 0 errors" / "RACECHECK SUMMARY: 0 hazards" wanted.
sanitize() {  # tool name args...
  local tool=$1 name=$2; shift 2
  local log rc n
  log=$(timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 99 "$build/examples/example_$name" "$@" 2>&1)
  rc=$?
  n=$(grep -oE '(ERROR SUMMARY: |RACECHECK SUMMARY: )[0-9]+' <<<"$log" | grep -oE '[0-9]+' | tail -1)
  { echo "== $tool $name $* rc=$rc errors=${n:-?}"; grep -E 'SUMMARY|Invalid|at .* in |by thread|Address' <<<"$log" | head -20; } >>"$tools"
  echo "${n:-?} $rc"
}
if command -v compute-sanitizer >/dev/null; then
  for name in "${examples[@]}"; do
    [ -x "$build/examples/example_$name" ] || continue
    tool_list=(memcheck)
    [[ " ${shared_memory[*]} " == *" $name "* ]] && tool_list+=(racecheck synccheck)
    for tool in "${tool_list[@]}"; do
      read -r n rc < <(sanitize "$tool" "$name" --small)
      summary+=("$(printf '%-24s %s --small: %s errors, exit %s' "$name" "$tool" "$n" "$rc")")
      [ "$n" = 0 ] && [ "$rc" -eq 0 ] || fail=1
    done
  done
  if [ -x "$build/examples/example_debugging" ]; then
    read -r n rc < <(sanitize memcheck debugging --fault)
    if [ "$n" != "?" ] && [ "$n" -gt 0 ] && grep -q "Invalid __global__ write" "$tools"; then
      summary+=("$(printf '%-24s memcheck --fault: caught (%s errors, exit %s), as it should be' debugging "$n" "$rc")")
    else
      summary+=("$(printf '%-24s memcheck --fault: NOT caught (%s errors)' debugging "$n")"); fail=1
    fi
  fi
else
  summary+=("compute-sanitizer not found: sanitizer stage skipped"); fail=1
fi

if command -v ncu >/dev/null && [ -x "$build/examples/example_profiling_nvtx" ]; then
  log=$(timeout 300 ncu --nvtx --nvtx-include "foundry@sum: foundry/" --metrics gpu__time_duration.sum \
        "$build/examples/example_profiling_nvtx" --small 2>&1)
  rc=$?
  { echo "== ncu --nvtx --nvtx-include \"foundry@sum: foundry/\" --metrics gpu__time_duration.sum example_profiling_nvtx --small (rc=$rc)"
    grep -E '^  [^ =].*\)x\(|gpu__time_duration|==PROF==|==ERROR==|==WARNING==' <<<"$log" | head -40; } >>"$tools"
  kernels=$(grep -cE '^  [^ =].*\([0-9]+, [0-9]+, [0-9]+\)x\(' <<<"$log")
  others=$(grep -E '^  [^ =].*\([0-9]+, [0-9]+, [0-9]+\)x\(' <<<"$log" | grep -cE 'generate|naive')
  summary+=("$(printf '%-24s ncu --nvtx-include "foundry@sum: foundry/": %s kernels profiled, %s outside the range (exit %s)' \
    profiling_nvtx "$kernels" "$others" "$rc")")
else
  summary+=("ncu not found: the NVTX filter was not shown")
fi

{ echo "=== tools ==="; cat "$tools"; echo; echo "== summary"; printf '%s\n' "${summary[@]}"; } >>"$all"
echo "== run-examples summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null))"
printf '%s\n' "${summary[@]}"
exit $fail
