#pragma once
/// \file
/// `launch_config` (grid, block, dynamic shared memory) and the builders that
/// size it from a problem. The arithmetic is `constexpr` and tested on the host;
/// the device-aware builders read the cached device properties.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/runtime/device.cuh>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace foundry {

/// How a kernel waits for the work enqueued before it on its stream.
enum class launch_dependency {
  /// The kernel starts once everything before it has finished (CUDA's default).
  full,
  /// Programmatic dependent launch (sm_90 and later; `full` elsewhere): the kernel
  /// may start while the kernel before it still runs, once that kernel's blocks have
  /// called `allow_dependent_launch()` or exited, which hides most of a launch's
  /// latency. The kernel must call `wait_for_prior_grids()` before it touches any
  /// global memory (<foundry/launch/dependent_launch.cuh>).
  programmatic,
};

/// A kernel's launch shape. A grid with zero blocks means "nothing to do":
/// `foundry::launch` returns without launching.
struct launch_config {
  /// Blocks in the grid (zero blocks: nothing to launch).
  dim3 grid{0, 1, 1};
  /// Threads per block.
  dim3 block{1, 1, 1};
  /// Dynamic shared memory per block, in bytes.
  std::size_t dynamic_shared_bytes = 0;
  /// How the kernel waits for the work before it on its stream.
  launch_dependency dependency = launch_dependency::full;

  /// Threads per block.
  [[nodiscard]] constexpr std::uint64_t block_threads() const noexcept {
    return std::uint64_t{block.x} * block.y * block.z;
  }
  /// Blocks in the grid.
  [[nodiscard]] constexpr std::uint64_t grid_blocks() const noexcept { return std::uint64_t{grid.x} * grid.y * grid.z; }
  /// Whether there is nothing to launch.
  [[nodiscard]] constexpr bool empty() const noexcept { return grid_blocks() == 0; }
};

/// CUDA's hardware limits on grid dimensions (all architectures since sm_30).
inline constexpr std::uint32_t max_grid_x = 2147483647u;
/// CUDA's limit on grid.y and grid.z.
inline constexpr std::uint32_t max_grid_yz = 65535u;

namespace detail {
constexpr std::uint32_t capped_blocks(std::uint64_t extent, std::uint32_t block, std::uint64_t cap) {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(ceil_div<std::uint64_t>(extent, block), cap));
}
}  // namespace detail

/// 1D configuration covering `n` elements with `block_threads` threads per block,
/// at most `max_blocks` blocks; kernels cover the rest with a grid-stride loop.
/// `n == 0` gives an empty configuration.
[[nodiscard]] constexpr launch_config make_launch_config_1d(std::uint64_t n, std::uint32_t block_threads = 256,
                                                            std::uint32_t max_blocks = max_grid_x) {
  launch_config c;
  c.block = dim3(block_threads, 1, 1);
  c.grid = dim3(block_threads == 0 ? 0 : detail::capped_blocks(n, block_threads, max_blocks), 1, 1);
  return c;
}

/// 2D configuration covering a `width × height` domain (x fastest) with
/// `block_x × block_y` blocks; kernels loop over y and x with grid strides.
[[nodiscard]] constexpr launch_config make_launch_config_2d(std::uint64_t width, std::uint64_t height,
                                                            std::uint32_t block_x = 32, std::uint32_t block_y = 8) {
  launch_config c;
  c.block = dim3(block_x, block_y, 1);
  if (block_x == 0 || block_y == 0) return c;
  c.grid =
      dim3(detail::capped_blocks(width, block_x, max_grid_x), detail::capped_blocks(height, block_y, max_grid_yz), 1);
  if (c.grid.x == 0 || c.grid.y == 0) c.grid = dim3(0, 1, 1);
  return c;
}

/// 3D configuration covering `width × height × depth`.
[[nodiscard]] constexpr launch_config make_launch_config_3d(std::uint64_t width, std::uint64_t height,
                                                            std::uint64_t depth, std::uint32_t block_x = 32,
                                                            std::uint32_t block_y = 4, std::uint32_t block_z = 2) {
  launch_config c;
  c.block = dim3(block_x, block_y, block_z);
  if (block_x == 0 || block_y == 0 || block_z == 0) return c;
  c.grid = dim3(detail::capped_blocks(width, block_x, max_grid_x), detail::capped_blocks(height, block_y, max_grid_yz),
                detail::capped_blocks(depth, block_z, max_grid_yz));
  if (c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0) c.grid = dim3(0, 1, 1);
  return c;
}

/// Why `c` cannot launch on a device with properties `p`, or an empty string if it can.
/// The block must hold a whole number of warps; an empty grid is valid (nothing launches).
[[nodiscard]] inline std::string launch_config_problem(const launch_config& c, const device_properties& p) {
  const auto threads = c.block_threads();
  if (threads == 0) return "block has zero threads";
  if (threads % 32 != 0)
    return "block of " + std::to_string(threads) + " threads is not a multiple of the warp size (32)";
  if (threads > static_cast<std::uint64_t>(p.max_threads_per_block))
    return "block of " + std::to_string(threads) + " threads exceeds the device maximum of " +
           std::to_string(p.max_threads_per_block);
  if (c.block.x > static_cast<unsigned>(p.max_block_x) || c.block.y > static_cast<unsigned>(p.max_block_y) ||
      c.block.z > static_cast<unsigned>(p.max_block_z))
    return "block dimension exceeds the device maximum (" + std::to_string(p.max_block_x) + ", " +
           std::to_string(p.max_block_y) + ", " + std::to_string(p.max_block_z) + ")";
  if (c.grid.x > static_cast<unsigned>(p.max_grid_x) || c.grid.y > static_cast<unsigned>(p.max_grid_y) ||
      c.grid.z > static_cast<unsigned>(p.max_grid_z))
    return "grid dimension exceeds the device maximum (" + std::to_string(p.max_grid_x) + ", " +
           std::to_string(p.max_grid_y) + ", " + std::to_string(p.max_grid_z) + ")";
  if (c.dynamic_shared_bytes > p.shared_memory_per_block_optin)
    return "dynamic shared memory of " + std::to_string(c.dynamic_shared_bytes) +
           " bytes exceeds the device's opt-in maximum of " + std::to_string(p.shared_memory_per_block_optin) +
           " bytes per block";
  return {};
}

/// Throws `std::invalid_argument` with the reason if `c` cannot launch on the device `p` describes.
inline void validate(const launch_config& c, const device_properties& p) {
  const std::string problem = launch_config_problem(c, p);
  FOUNDRY_EXPECTS(problem.empty(), "invalid launch configuration: " + problem);
}

/// Blocks that fill every SM of the device `device` describes once (`blocks_per_sm`
/// grid blocks per SM × SM count, at most `max_grid_x`): the grid size of a persistent,
/// grid-stride kernel.
[[nodiscard]] inline std::uint32_t resident_grid_blocks(int blocks_per_sm, const device_properties& device) {
  const std::uint64_t blocks = std::uint64_t(std::max(1, blocks_per_sm)) * std::uint64_t(std::max(0, device.sm_count));
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(blocks, max_grid_x));
}

/// As above, on the current device.
[[nodiscard]] inline std::uint32_t resident_grid_blocks(int blocks_per_sm) {
  return resident_grid_blocks(blocks_per_sm, get_device_properties());
}

/// As above, on the device that `s` belongs to (the one a launch on `s` runs on).
[[nodiscard]] inline std::uint32_t resident_grid_blocks(int blocks_per_sm, cuda::stream_ref s) {
  return resident_grid_blocks(blocks_per_sm, get_device_properties(stream_device(s.get())));
}

/// Occupancy-based 1D configuration for `kernel` over `n` elements on the current
/// device: the block size that maximises occupancy (`cudaOccupancyMaxPotentialBlockSize`),
/// and a grid capped at the number of blocks that can be resident at once (active
/// blocks per SM × SM count). Dynamic shared memory above the 48 KiB default is opted
/// into on the kernel first, as `launch` does, so that the occupancy is that of the
/// launch (without it the calculator finds no block that fits and says 0 threads).
/// Throws `std::invalid_argument` if no block of the kernel fits on an SM with that
/// shared memory, `cuda_error` if the queries fail.
template <class Kernel>
[[nodiscard]] launch_config make_occupancy_launch_config(Kernel kernel, std::uint64_t n,
                                                         std::size_t dynamic_shared_bytes = 0) {
  const device_properties& device = get_device_properties();
  FOUNDRY_EXPECTS(dynamic_shared_bytes <= device.shared_memory_per_block_optin,
                  "dynamic shared memory of " + std::to_string(dynamic_shared_bytes) +
                      " bytes exceeds the device's opt-in maximum of " +
                      std::to_string(device.shared_memory_per_block_optin) + " bytes per block");
  cudaFuncAttributes attributes{};
  FOUNDRY_CUDA_TRY(cudaFuncGetAttributes(&attributes, kernel));
  if (dynamic_shared_bytes > static_cast<std::size_t>(attributes.maxDynamicSharedSizeBytes)) {
    FOUNDRY_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(dynamic_shared_bytes)));
  }
  // The calculator first tries the kernel's own limit (its __launch_bounds__), which need
  // not be whole warps, and `launch` takes only whole warps: cap it at a multiple of 32.
  const int warp_limit = attributes.maxThreadsPerBlock / 32 * 32;
  FOUNDRY_EXPECTS(warp_limit > 0, "this kernel takes at most " + std::to_string(attributes.maxThreadsPerBlock) +
                                      " threads a block, less than one warp");
  int min_grid = 0;
  int block = 0;
  FOUNDRY_CUDA_TRY(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel, dynamic_shared_bytes, warp_limit));
  FOUNDRY_EXPECTS(block > 0, "no block of this kernel fits on an SM with " + std::to_string(dynamic_shared_bytes) +
                                 " bytes of dynamic shared memory");
  int active_per_sm = 0;
  FOUNDRY_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&active_per_sm, kernel, block, dynamic_shared_bytes));
  launch_config c = make_launch_config_1d(n, static_cast<std::uint32_t>(block), resident_grid_blocks(active_per_sm));
  c.dynamic_shared_bytes = dynamic_shared_bytes;
  return c;
}

}  // namespace foundry
