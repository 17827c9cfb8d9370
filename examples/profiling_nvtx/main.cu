// profiling_nvtx: naming the phases of a program so that a profiler can find them.
//
// NVTX ranges (foundry::nvtx_range, in foundry's "foundry" domain) mark host code; every
// kernel launched inside a range belongs to it. Here a program in three phases, each in
// a range: generate the input, sum it the textbook way (foundry::naive, one tree pass per
// launch, several launches), sum it foundry's way (one fused pass). foundry's own calls
// add nested ranges of their own (FOUNDRY_NVTX_FUNCTION_RANGE).
//
//   Nsight Systems (timeline): nsys profile --trace=cuda,nvtx ./example_profiling_nvtx
//                              nsys stats --report nvtx_sum report1.nsys-rep
//   Nsight Compute (per kernel): the --nvtx-include filter profiles only the kernels
//   launched inside one range, so a kernel deep in a big program is found by its phase:
//     ncu --nvtx --nvtx-include "foundry@sum: foundry/" ./example_profiling_nvtx --small
//
// The table gives the GPU time of each phase's kernels (events), as the profilers would.
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include "../tour/tour.cuh"

#include <foundry/naive/reduce.cuh>

#include <exception>

namespace {

// A cheap hash of i to [0, 1): an input the CPU can regenerate without a copy back.
__host__ __device__ inline float value_at(std::size_t i) {
  std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u;
  h ^= h >> 15;
  return float(h >> 8) * (1.0f / 16777216.0f);
}

__global__ void generate(float* out, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) out[i] = value_at(i);
}

}  // namespace

int main(int argc, char** argv) {
  if (!tour::has_gpu("profiling_nvtx")) return 2;
  try {
    const tour::options opt = tour::parse_options(argc, argv);
    const std::size_t n = opt.small ? (std::size_t{1} << 20) : (std::size_t{1} << 26);
    foundry::stream s;
    foundry::device_buffer<float> d_in(n, s), d_sum(2, s);
    const auto sum_span = [&](int k) { return d_sum.span().subspan(k, 1); };
    std::vector<tour::row> rows;

    // [snippet:ranges]
    {
      foundry::nvtx_range phase{"generate"};
      foundry::launch(s, foundry::make_launch_config_1d(n, 256), generate, d_in.data(), n);
    }
    {
      foundry::nvtx_range phase{"sum: naive"};
      const double ms = tour::median_ms(
          s, [&](cuda::stream_ref t) { foundry::naive::reduce_sum_interleaved(d_in.span(), sum_span(0), t); });
      int launches = 0;
      for (std::size_t left = n; left > 1; left = foundry::ceil_div<std::size_t>(left, 256)) ++launches;
      rows.push_back({"naive::reduce_sum_interleaved", ms, 4.0 * n, std::to_string(launches) + " tree passes"});
    }
    {
      foundry::nvtx_range phase{"sum: foundry"};
      const double ms =
          tour::median_ms(s, [&](cuda::stream_ref t) { foundry::reduce_sum(d_in.span(), sum_span(1), t); });
      rows.push_back({"foundry::reduce_sum", ms, 4.0 * n, "one pass over the input"});
    }
    // [/snippet]

    // Both sums add positive floats, so each rounding errs by at most 2^-24 of the total.
    // The naive tree rounds log2(n) = 26 times along any path: 1.5e-6. foundry's kernel has
    // each thread add k = n / (4 blocks x 132 SMs x 256 threads) = 496 values on the H200
    // (2^26), then a block tree, the partials and their tree: about k + 20 roundings, 3.1e-5
    // in the worst case; 1e-4 covers it (the random-walk error is near 1e-6).
    double want = 0.0;
    for (std::size_t i = 0; i < n; ++i) want += value_at(i);
    const std::vector<float> got = tour::to_host(d_sum, s);
    const char* names[] = {"naive::reduce_sum_interleaved", "foundry::reduce_sum"};
    for (int k = 0; k < 2; ++k)
      if (!(std::fabs(got[k] - want) <= 1e-4 * want)) {
        std::fprintf(stderr, "profiling_nvtx: %s gave %.9g, expected %.9g\n", names[k], got[k], want);
        return 1;
      }

    std::printf("profiling_nvtx: sum of %zu floats, each phase in an NVTX range of the \"foundry\" domain\n", n);
    tour::print_table("phase", "GB/s", "passes", rows);
    std::printf(
        "\nboth sums match the CPU within 1e-4\n"
        "timeline:     nsys profile --trace=cuda,nvtx ./example_profiling_nvtx\n"
        "one phase:    ncu --nvtx --nvtx-include \"foundry@sum: foundry/\" ./example_profiling_nvtx --small\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "profiling_nvtx: %s\n", e.what());
    return 3;
  }
}
