#!/bin/bash
# Builds runs/session30/skinny_along_k_probe.cu (its session-31 switches on) against two trees'
# include/ into $1 (default .probe) and packs them as probe.tar.xz for s31.sh: s30main (c79ecae: one tile of 16 rows x 4
# blocks of 32 k for every row bucket) and byrows (the working tree, with
# runs/session30/along-k-shape-by-rows.patch applied: 1 x 4 for 8 rows, 2 x 2 from 16). Run from
# the repository root, on a machine with nvcc (no GPU needed).
set -euo pipefail
out=${1:-.probe}; mkdir -p "$out"
build() {  # name include-dir
  nvcc -O3 -std=c++20 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I "$2" -I bench \
    -I bench/results/h200/runs/session23 -DVARIANT="\"$1\"" -DWGMMA_VARIANT="\"byrows\"" -DWITH_256_MB_SHAPES=1 \
    -Xptxas -warn-spills \
    bench/results/h100/runs/session30/skinny_along_k_probe.cu -lcublas -lbenchmark -o "$out/skinny_probe_$1"
  strip --strip-unneeded "$out/skinny_probe_$1"
}
old=$(mktemp -d); git archive c79ecae include | tar xf - -C "$old"
build s30main "$old/include"
build byrows include
(cd "$out" && tar cJf probe.tar.xz skinny_probe_* && rm -f skinny_probe_*)
ls -la "$out"
