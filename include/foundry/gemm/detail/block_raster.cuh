#pragma once
/// \file
/// The block raster every tiled GEMM kernel uses: which C tile a block (or a
/// persistent block's work unit) computes.

#include <cstdint>

namespace foundry::gemm_kernels::detail {

/// A C tile, in tiles (not elements) from the top-left corner.
struct tile_index {
  std::int64_t m;
  std::int64_t n;
};

/// Tile `block` of a grid over `tiles_m × tiles_n` tiles, numbered column by
/// column within groups of `group_m` tile rows (the last group may be shorter),
/// so that blocks resident at the same time share B columns and a few A rows in
/// L2 (the grouping of CUTLASS's and Triton's rasterisers).
[[nodiscard]] __host__ __device__ constexpr tile_index grouped_tile(std::int64_t block, std::int64_t tiles_m,
                                                                    std::int64_t tiles_n, int group_m) noexcept {
  const std::int64_t per_group = group_m * tiles_n;
  const std::int64_t first_m = block / per_group * group_m;
  const std::int64_t group_rows = tiles_m - first_m < group_m ? tiles_m - first_m : group_m;
  const std::int64_t in_group = block % per_group;
  return {first_m + in_group % group_rows, in_group / group_rows};
}

}  // namespace foundry::gemm_kernels::detail
