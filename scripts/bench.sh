#!/usr/bin/env bash
# The benchmark command: builds the benchmarks for this machine's GPU, runs
# every one with JSON output, and turns the JSON into a Markdown table and a
# roofline plot.
#   usage: scripts/bench.sh [OUT_DIR] [--benchmark_filter=REGEX ...]
#   OUT_DIR defaults to bench/results/local. FOUNDRY_PRESET picks the CMake
#   preset (default: native). BENCH_BINARIES: run only these (names, space-separated,
#   e.g. "bench_reduce bench_scan"; default: every bench_* built). OUT_DIR/benchmarks.json
#   is rewritten after each binary, so a run stopped part-way keeps what it measured.
#   Exits 2 with one line when there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/results/local
if [ $# -gt 0 ] && [[ "$1" != --* ]]; then
  out=$1
  shift
fi
if ! nvidia-smi -L 2>/dev/null | grep -q GPU; then
  echo "bench: no CUDA GPU on this machine (nvidia-smi lists none): the benchmarks need one" >&2
  exit 2
fi
[ -n "${FOUNDRY_SKIP_DEPS:-}" ] || scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0  # bench_nccl: never NVLink multicast on the lent machines
preset=${FOUNDRY_PRESET:-native}
if [ -z "${FOUNDRY_SKIP_BUILD:-}" ]; then
  cmake --preset "$preset" -DFOUNDRY_BUILD_BENCHMARKS=ON >/dev/null
  cmake --build --preset "$preset" -j "$(nproc)"
fi
build=build/$preset
mkdir -p "$out"
raw=$(mktemp -d)
status=0
merge() {
  python3 - "$out/benchmarks.json" "$raw"/bench_*.json <<'PY'
import json, sys
merged = None
for path in sys.argv[2:]:
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        continue  # a binary whose benchmarks were all filtered out writes no JSON
    binary = path.rsplit("/", 1)[-1][:-len(".json")]
    for b in data.get("benchmarks", []):
        b["binary"] = binary  # family indices restart in each binary: bench_report.py sorts by both
    if merged is None:
        merged = data
    else:
        merged["benchmarks"].extend(data.get("benchmarks", []))
with open(sys.argv[1], "w") as f:
    json.dump(merged or {"benchmarks": []}, f, indent=1)
PY
}
for bin in "$build"/bench/bench_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  [ -z "${BENCH_BINARIES:-}" ] || [[ " $BENCH_BINARIES " == *" $name "* ]] || continue
  echo "== $name"
  "$bin" --benchmark_out="$raw/$name.json" --benchmark_out_format=json "$@" || status=1
  merge
done
rm -rf "$raw"
# Debian/Ubuntu's /usr/bin/python3 carries python3-matplotlib (installed by install-deps.sh).
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3
"$py" scripts/bench_report.py "$out/benchmarks.json" --markdown "$out/report.md" --plot "$out/roofline.png" || status=1
exit $status
