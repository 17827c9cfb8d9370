#!/bin/bash
# Builds skinny_along_k_probe.cu once per variant of skinny_mma_policy's along-k shape, each
# against a copy of include/ with the two constants replaced, into $1 (default .probe):
#   NAME:ROW_TILES:BLOCKS_IN_FLIGHT (main is 2:2: 32 rows a warp, 128 bytes of each a round).
# Run from the repository root, on a machine with nvcc (no GPU needed).
set -euo pipefail
out=${1:-.probe}; mkdir -p "$out"
for v in ${VARIANTS:-main:2:2 r1b4:1:4 r1b8:1:8 r2b4:2:4}; do
  IFS=: read -r name tiles blocks <<< "$v"
  inc=$(mktemp -d)/include; cp -r include "$inc"
  f=$inc/foundry/gemm/gemm_skinny_mma.cuh
  sed -i -E "s/(along_k_row_tiles = )[0-9]+;/\1$tiles;/; s/(along_k_blocks_in_flight = )[0-9]+;/\1$blocks;/" "$f"
  grep -q "along_k_row_tiles = $tiles;" "$f" && grep -q "along_k_blocks_in_flight = $blocks;" "$f"
  nvcc -O3 -std=c++20 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I "$inc" -I bench \
    -I bench/results/h200/runs/session23 -DVARIANT="\"$name\"" -Xptxas -warn-spills \
    bench/results/h100/runs/session30/skinny_along_k_probe.cu -lcublas -lbenchmark -o "$out/skinny_probe_$name"
done
ls -la "$out"
