// register_spills: one computation, two register budgets. Each thread keeps 64 floats live
// (a fully unrolled array: its indices are known at compile time, so it can live in
// registers). An SM has 65536 registers; the more each thread takes, the fewer threads fit.
//
//   1. __launch_bounds__(1024, 2): the compiler must fit 2 blocks of 1024 threads per SM,
//      so 65536 / 2048 = 32 registers per thread: the array cannot fit, and what does not
//      fit is spilled to local memory (per-thread DRAM, cached in L1/L2) and reloaded
//   2. __launch_bounds__(256): up to 255 registers; the array stays in registers
//
// The build prints ptxas's report for both kernels (-Xptxas -v on this target only:
// examples/CMakeLists.txt): "bytes spill stores" is non-zero for the first. The table
// reads the same figures back from cudaFuncGetAttributes.
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include "../tour/tour.cuh"

#include <exception>
#include <random>

namespace {

// Unrolled on the device (registers need compile-time indices); the CPU copy of the code
// does not know the pragma.
#if defined(__CUDA_ARCH__)
#define UNROLL_ON_DEVICE _Pragma("unroll")
#else
#define UNROLL_ON_DEVICE
#endif

constexpr int live = 64;    // floats each thread keeps live
constexpr int sweeps = 16;  // passes over them

// [snippet:kernels]
// A convex blend of neighbours, over and over: every element stays live across the loop.
// The same code on the CPU gives the same floats (fmaf rounds once; * 0.25f is exact).
__host__ __device__ inline float blend(float x) {
  float v[live];
  UNROLL_ON_DEVICE
  for (int k = 0; k < live; ++k) v[k] = x + float(k);
  UNROLL_ON_DEVICE
  for (int s = 0; s < sweeps; ++s) {
    UNROLL_ON_DEVICE
    for (int k = 0; k < live; ++k) v[k] = fmaf(v[k], 0.75f, v[(k + 1) % live] * 0.25f);
  }
  float sum = 0.0f;
  UNROLL_ON_DEVICE
  for (int k = 0; k < live; ++k) sum += v[k];
  return sum;
}

__global__ void __launch_bounds__(1024, 2) blend_32_registers(const float* in, float* out, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) out[i] = blend(in[i]);
}
__global__ void __launch_bounds__(256) blend_unbounded(const float* in, float* out, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) out[i] = blend(in[i]);
}
// [/snippet]

using kernel_t = void (*)(const float*, float*, std::size_t);

// Registers per thread and local memory (spilled registers) per thread, as compiled.
std::string resources(kernel_t kernel) {
  cudaFuncAttributes a{};
  FOUNDRY_CUDA_TRY(cudaFuncGetAttributes(&a, kernel));
  char text[128];
  std::snprintf(text, sizeof text, "%3d registers, %4zu B local, occupancy %3.0f%%", a.numRegs, a.localSizeBytes,
                100.0 * tour::theoretical_occupancy(kernel, 256));
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (!tour::has_gpu("register_spills")) return 2;
  try {
    const tour::options opt = tour::parse_options(argc, argv);
    const std::size_t n = opt.small ? (std::size_t{1} << 16) : (std::size_t{1} << 22);
    std::vector<float> in(n);
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> dist(0.0f, 1.0f);
    for (float& v : in) v = dist(rng);
    foundry::stream s;
    foundry::device_buffer<float> d_in = tour::to_device(in, s), d_out(n, s);
    const foundry::launch_config c = foundry::make_launch_config_1d(n, 256);

    const std::pair<const char*, kernel_t> variants[] = {
        {"__launch_bounds__(1024, 2): spills", blend_32_registers},
        {"__launch_bounds__(256): no spills", blend_unbounded},
    };
    std::vector<tour::row> rows;
    for (const auto& v : variants) {
      foundry::fill(d_out.span(), -1.0f, s);  // poison
      const double ms = tour::median_ms(
          s, [&](cuda::stream_ref t) { foundry::launch(t, c, v.second, d_in.data(), d_out.data(), n); });
      // Every 61st element: all of them would take the CPU seconds.
      const auto want = [&](std::size_t i) { return blend(in[i]); };
      if (!tour::matches_every("register_spills", v.first, tour::to_host(d_out, s), 61, want)) return 1;
      rows.push_back({v.first, ms, 2.0 * live * sweeps * n, resources(v.second)});
    }
    std::printf("register_spills: %zu elements, %d live floats per thread, %d sweeps\n", n, live, sweeps);
    tour::print_table("register budget", "GFLOP/s", "per thread, as compiled (256-thread blocks)", rows);
    std::printf("\nevery variant matches the CPU exactly (every 61st element and the last checked)\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "register_spills: %s\n", e.what());
    return 3;
  }
}
