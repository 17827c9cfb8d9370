#!/usr/bin/env bash
# Rebuilds bench/results/h200/report.md, its roofline plot and the README's results table
# from the JSON of the H200 runs committed under bench/results/h200: the last full run
# (benchmarks.json) and the later runs of single issues' binaries, each row from the last
# run that measured it. Rows that do not stand for the library on main are left out, and
# the report says which and why. Then the same for the 2-GPU machine (bench/results/h200-x2,
# made by scripts/multi-gpu.sh) and for the H100 that the tenth and eleventh sessions were lent
# instead of an H200 (bench/results/h100), each with its own README table: runs on different devices
# are never merged into one table.
#   usage: scripts/h200-report.sh
set -euo pipefail
cd "$(dirname "$0")/.."
r=bench/results/h200
one_rank='^allreduce/[a-z_]+/[0-9]+/1$=an in-place all-reduce on one rank enqueues no work (16-100 ns for 8 B to 1 GiB); bench_nccl no longer registers it'
candidates=(
  --exclude '^scan_[a-z0-9_]+/foundry_=candidate designs of the scan measured while tuning it, not the library'
  --exclude '^transpose_[a-z0-9]+/foundry_=candidate policies of the transpose for odd pitches, not the default'
  --exclude '^histogram_[a-z0-9_]+/foundry_v=candidate vectors in flight of the byte histogram, not the default'
)
python3 scripts/bench_report.py "$r/benchmarks.json" "$r/runs/issue18/12-benchmarks.json" \
  "$r/runs/issue19/2-benchmarks.json" "$r/runs/integration/3-benchmarks.json" "$r/runs/session5/2-benchmarks.json" \
  "$r/runs/session7/benchmarks.json" "$r/runs/session7/sweep-benchmarks.json" "$r/runs/session7/scan-default-benchmarks.json" \
  "$r/runs/session12/e2-sweeps-benchmarks.json" \
  "${candidates[@]}" --exclude "$one_rank" \
  --exclude '^gemm_skinny_(bf16|fp16)/foundry/(8x|16384x8x)=measured the CUDA-core kernel that the tensor-core skinny kernel replaced (session 13, H100 only so far: see the H100 table)' \
  --markdown "$r/report.md" --plot "$r/roofline.png"
python3 scripts/update-readme-results.py "$r/report.md" README.md
x2=bench/results/h200-x2
python3 scripts/bench_report.py "$x2/benchmarks.json" --exclude "$one_rank" --markdown "$x2/report.md" --no-plot
python3 scripts/update-readme-results.py "$x2/report.md" README.md results-h200-x2
h100=bench/results/h100
python3 scripts/bench_report.py "$h100/benchmarks.json" "$h100/runs/session10/2-gemm-fp32-benchmarks.json" \
  "$h100/runs/session11/d3-gemm-fp32-benchmarks.json" "$h100/runs/session11/d2-issue19-benchmarks.json" \
  "$h100/runs/session11/d4-sweep-fp32-benchmarks.json" "$h100/runs/session14/s2-sweeps-skinny-benchmarks.json" \
  "$h100/runs/session15/n2-issue19-benchmarks.json" "$h100/runs/session26/s26-sweeps-skinny-benchmarks.json" \
  "$h100/runs/session26/s26b-sweep-bf16.json" "$h100/runs/session26/s26b-sweep-fp16.json" \
  "$h100/runs/session28/s28-sweep-bf16.json" "$h100/runs/session28/s28-sweep-fp16.json" \
  "$h100/runs/session28/s28-sweep-fp32.json" "$h100/runs/session29/s29-sweep-bf16.json" \
  "$h100/runs/session29/s29-sweep-fp16.json" "$h100/runs/session29/s29-sweep-fp32.json" \
  "${candidates[@]}" \
  --markdown "$h100/report.md" --plot "$h100/roofline.png"
python3 scripts/update-readme-results.py "$h100/report.md" README.md results-h100
