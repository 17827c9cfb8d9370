#!/bin/bash
# Session 22, for a budget too short to build on the device: s22.sh's check (main with
# reduce-late-trigger.patch and model-refit.patch: the suite and the four tools on the GEMM
# binaries and issue 19's tests, the sweeps, the probes, and on an H200 issue 19's rows) on
# binaries built on the CPU machine, in a git worktree at /tmp/w22 with both patches (h200
# preset, build/h200), packed by runs/session22/pack-prebuilt.sh into .prebuilt/ (carried).
# Since session 23 it is runs/session23/s23.sh with the budget of a whole call (~550 s on an
# H200 with issue 19's rows; ROWS19=0 leaves them out).
# Command (carry .device-deps, .prebuilt, .probe/trigger_probe, .probe/plan_space_probe):
#   bash bench/results/h200/runs/session22/s22p.sh $OUT
BUDGET=${BUDGET:-590} exec bash bench/results/h200/runs/session23/s23.sh "$@"
