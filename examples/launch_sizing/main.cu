// launch_sizing: one memory-bound kernel (z = a*x + y) launched four ways. The kernel is
// the same; only the grid and block change, and with them how many warps each SM holds to
// hide the ~600-cycle latency of a DRAM load.
//
//   1. fixed 256-thread blocks, one thread per element: the usual first choice
//   2. occupancy-derived (foundry::make_occupancy_launch_config): the block size that
//      maximises resident warps, and just enough blocks to fill every SM once
//   3. block too small (32 threads): an SM holds at most 32 blocks, so 32 x 32 = 1024 of
//      its 2048 thread slots: half the warps that could be hiding latency
//   4. grid too small (one 256-thread block per SM): 8 warps per SM, far too few
//
// Occupancy (resident warps / maximum) is the explaining metric: theoretical, from the
// occupancy API, capped by the blocks the grid actually gives each SM.
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include "../tour/tour.cuh"

#include <exception>
#include <random>

// [snippet:kernel]
// Grid-stride: correct for any grid, so the launch shape is a pure performance choice.
__global__ void axpy(float a, const float* x, const float* y, float* z, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) z[i] = fmaf(a, x[i], y[i]);
}
// [/snippet]

namespace {

// Resident warps per SM over the maximum: the occupancy API's blocks per SM for this block
// size, but no more blocks than the grid spreads over each SM.
double occupancy(const foundry::launch_config& c) {
  const foundry::device_properties& p = foundry::get_device_properties();
  int per_sm = 0;
  FOUNDRY_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, axpy, int(c.block.x), 0));
  const std::uint64_t from_grid = foundry::ceil_div<std::uint64_t>(c.grid.x, std::uint64_t(p.sm_count));
  const std::uint64_t blocks = std::min<std::uint64_t>(per_sm, from_grid);
  return double(blocks * c.block.x) / p.max_threads_per_sm;
}

}  // namespace

int main(int argc, char** argv) {
  if (!tour::has_gpu("launch_sizing")) return 2;
  try {
    const tour::options opt = tour::parse_options(argc, argv);
    const std::size_t n = opt.small ? (std::size_t{1} << 20) : (std::size_t{1} << 25);
    const float a = 1.5f;
    std::vector<float> x(n), y(n), want(n);
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = dist(rng);
      y[i] = dist(rng);
      want[i] = std::fma(a, x[i], y[i]);  // fmaf rounds once on both sides: an exact match
    }
    foundry::stream s;
    foundry::device_buffer<float> d_x = tour::to_device(x, s), d_y = tour::to_device(y, s), d_z(n, s);
    const int sm_count = foundry::get_device_properties().sm_count;

    // [snippet:configs]
    const std::pair<const char*, foundry::launch_config> configs[] = {
        {"fixed 256-thread blocks", foundry::make_launch_config_1d(n, 256)},
        {"occupancy-derived", foundry::make_occupancy_launch_config(axpy, n)},
        {"block too small (32 threads)", foundry::make_launch_config_1d(n, 32)},
        {"grid too small (1 block per SM)", foundry::make_launch_config_1d(n, 256, sm_count)},
    };
    // [/snippet]

    std::vector<tour::row> rows;
    for (const auto& named : configs) {
      const char* name = named.first;
      const foundry::launch_config& c = named.second;
      foundry::fill(d_z.span(), -1.0f, s);  // poison: a variant that skips elements cannot pass
      const double ms = tour::median_ms(
          s, [&](cuda::stream_ref t) { foundry::launch(t, c, axpy, a, d_x.data(), d_y.data(), d_z.data(), n); });
      if (!tour::matches("launch_sizing", name, tour::to_host(d_z, s), want)) return 1;
      char metric[96];
      std::snprintf(metric, sizeof metric, "%5.1f%% (%u x %u threads)", 100.0 * occupancy(c), c.grid.x, c.block.x);
      rows.push_back({name, ms, 12.0 * n, metric});
    }
    std::printf("launch_sizing: z = a*x + y over %zu floats (12 bytes per element), %d SMs\n", n, sm_count);
    tour::print_table("launch shapes", "GB/s", "occupancy (grid x block)", rows);
    std::printf("\nevery variant matches the CPU exactly\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "launch_sizing: %s\n", e.what());
    return 3;
  }
}
