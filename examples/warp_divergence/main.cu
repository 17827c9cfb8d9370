// warp_divergence: the same work, half the elements down one path and half down another,
// split two ways. A warp's 32 threads share one instruction stream: when they disagree on
// a branch, the warp runs both paths one after the other with the threads of the other
// path masked off.
//
//   1. branch on threadIdx.x % 2: every warp holds both kinds of thread and pays for both
//      paths, so half its lanes idle through each
//   2. branch on (threadIdx.x / 32) % 2: whole warps take one path; each warp runs one
//      path with all 32 lanes busy. The same number of elements takes each path
//
// Both paths are a chain of FMAs that the compiler cannot shorten; the CPU runs the same
// chain (fmaf rounds once on both sides), so the results must match exactly; it checks every
// 61st element (all of them would take the CPU seconds).
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include "../tour/tour.cuh"

#include <exception>
#include <random>

namespace {

constexpr int chain = 512;  // FMAs per element, on either path

enum class split { by_thread, by_warp };

// Which path element i takes: the rule each kernel branches on, also used by the CPU.
__host__ __device__ inline bool takes_path_a(unsigned thread_in_block, split rule) {
  return rule == split::by_thread ? thread_in_block % 2 == 0 : (thread_in_block / 32) % 2 == 0;
}

__host__ __device__ inline float path_a(float x) {
  for (int k = 0; k < chain; ++k) x = fmaf(x, 0.999f, 0.001f);
  return x;
}
__host__ __device__ inline float path_b(float x) {
  for (int k = 0; k < chain; ++k) x = fmaf(x, 0.998f, 0.002f);
  return x;
}

// [snippet:kernel]
template <split Rule>
__global__ void two_paths(const float* in, float* out, std::size_t n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  // by_thread: neighbouring lanes disagree, so every warp executes path_a, then path_b.
  // by_warp: the condition is the same for all 32 lanes, so each warp executes one path.
  out[i] = takes_path_a(threadIdx.x, Rule) ? path_a(in[i]) : path_b(in[i]);
}
// [/snippet]

constexpr unsigned block_threads = 256;

}  // namespace

int main(int argc, char** argv) {
  if (!tour::has_gpu("warp_divergence")) return 2;
  try {
    const tour::options opt = tour::parse_options(argc, argv);
    const std::size_t n = opt.small ? (std::size_t{1} << 16) : (std::size_t{1} << 22);
    std::vector<float> in(n);
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> dist(0.0f, 1.0f);
    for (float& v : in) v = dist(rng);
    foundry::stream s;
    foundry::device_buffer<float> d_in = tour::to_device(in, s), d_out(n, s);
    const foundry::launch_config c = foundry::make_launch_config_1d(n, block_threads);

    struct variant {
      const char* name;
      split rule;
      void (*kernel)(const float*, float*, std::size_t);
      const char* paths;
    };
    const variant variants[] = {
        {"branch on threadIdx.x % 2", split::by_thread, two_paths<split::by_thread>, "2 (both, half the lanes each)"},
        {"branch on (threadIdx.x / 32) % 2", split::by_warp, two_paths<split::by_warp>, "1 (all 32 lanes)"},
    };
    std::vector<tour::row> rows;
    for (const variant& v : variants) {
      foundry::fill(d_out.span(), -1.0f, s);  // poison
      const double ms = tour::median_ms(
          s, [&](cuda::stream_ref t) { foundry::launch(t, c, v.kernel, d_in.data(), d_out.data(), n); });
      const auto want = [&](std::size_t i) {
        return takes_path_a(unsigned(i % block_threads), v.rule) ? path_a(in[i]) : path_b(in[i]);
      };
      if (!tour::matches_every("warp_divergence", v.name, tour::to_host(d_out, s), 61, want)) return 1;
      rows.push_back({v.name, ms, 2.0 * chain * n, v.paths});
    }
    std::printf("warp_divergence: %zu elements, %d FMAs each, half on each path\n", n, chain);
    tour::print_table("branch granularity", "GFLOP/s", "paths each warp executes", rows);
    std::printf("\nevery variant matches the CPU exactly (every 61st element and the last checked)\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "warp_divergence: %s\n", e.what());
    return 3;
  }
}
