#!/usr/bin/env bash
# Rebuilds bench/results/h200/report.md, its roofline plot and the README's results table
# from the JSON of the H200 runs committed under bench/results/h200: the last full run
# (benchmarks.json) and the later runs of single issues' binaries, each row from the run
# that measured it. Rows that do not stand for the library on main are left out, and
# the report says which and why.
#   usage: scripts/h200-report.sh
set -euo pipefail
cd "$(dirname "$0")/.."
r=bench/results/h200
python3 scripts/bench_report.py "$r/benchmarks.json" "$r/runs/issue18/12-benchmarks.json" \
  "$r/runs/issue19/2-benchmarks.json" \
  --exclude '^histogram_even_u8_256(_one_bin)?/foundry/=run 12 measured a run-length variant of the byte kernel that was then reverted; the byte kernel on main awaits a benchmark run' \
  --exclude '^scan_[a-z0-9_]+/foundry_=candidate designs of the scan measured while tuning it, not the library' \
  --markdown "$r/report.md" --plot "$r/roofline.png"
python3 scripts/update-readme-results.py "$r/report.md" README.md
