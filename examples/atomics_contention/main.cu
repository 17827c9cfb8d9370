// atomics_contention: counting the elements above a threshold into one counter. Atomics on
// one address are serialised in the L2 slice that owns it, so the cost is the number of
// atomics that reach it, not the number of threads that want to count.
//
//   1. one global atomicAdd per matching element: about n/2 atomics on one address
//   2. warp-aggregated: __ballot_sync gathers the warp's votes, __popc counts them, one
//      lane adds the count: one atomic per warp
//   3. block reduction: each thread counts its grid-stride share, foundry::block_reduce sums
//      the block's counts in shared memory, thread 0 adds: one atomic per block
//
// Counts are integers: every variant must match the CPU exactly.
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include "../tour/tour.cuh"

#include <exception>
#include <random>

namespace {

constexpr unsigned block_threads = 256;

// [snippet:kernels]
__global__ void count_global_atomic(const float* in, std::size_t n, float threshold, unsigned long long* count) {
  for (auto i : foundry::grid_stride_range(n))
    if (in[i] > threshold) atomicAdd(count, 1ull);
}

__global__ void count_warp_aggregated(const float* in, std::size_t n, float threshold, unsigned long long* count) {
  // Every lane of a warp runs the same number of iterations (the range is rounded up to
  // whole warps), so __ballot_sync sees the full warp; lanes past n vote false.
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  const std::size_t rounded = foundry::ceil_div<std::size_t>(n, 32) * 32;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < rounded; i += stride) {
    const unsigned votes = __ballot_sync(0xffffffffu, i < n && in[i] > threshold);
    if (threadIdx.x % 32 == 0 && votes != 0) atomicAdd(count, static_cast<unsigned long long>(__popc(votes)));
  }
}

__global__ void count_block_reduced(const float* in, std::size_t n, float threshold, unsigned long long* count) {
  using reduce = foundry::block_reduce<unsigned long long, block_threads>;
  __shared__ reduce::temp_storage storage;
  unsigned long long mine = 0;
  for (auto i : foundry::grid_stride_range(n)) mine += in[i] > threshold;
  const unsigned long long total = reduce(storage).sum(mine);  // valid in thread 0
  if (threadIdx.x == 0 && total != 0) atomicAdd(count, total);
}
// [/snippet]

using kernel_t = void (*)(const float*, std::size_t, float, unsigned long long*);

}  // namespace

int main(int argc, char** argv) {
  if (!tour::has_gpu("atomics_contention")) return 2;
  try {
    const tour::options opt = tour::parse_options(argc, argv);
    const std::size_t n = opt.small ? (std::size_t{1} << 20) + 7 : (std::size_t{1} << 24) + 7;  // not whole warps
    const float threshold = 0.5f;
    std::vector<float> in(n);
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> dist(0.0f, 1.0f);
    unsigned long long want = 0;
    for (float& v : in) {
      v = dist(rng);
      want += v > threshold;
    }
    foundry::stream s;
    foundry::device_buffer<float> d_in = tour::to_device(in, s);
    foundry::device_buffer<unsigned long long> d_count(1, s);
    const int sm_count = foundry::get_device_properties().sm_count;
    const foundry::launch_config per_element = foundry::make_launch_config_1d(n, block_threads);
    // The reduction's blocks each cover many elements: 8 blocks per SM fill the GPU once.
    const foundry::launch_config resident = foundry::make_launch_config_1d(n, block_threads, 8 * sm_count);

    struct variant {
      const char* name;
      kernel_t kernel;
      foundry::launch_config config;
      double atomics;
    };
    const variant variants[] = {
        {"global atomicAdd per element", count_global_atomic, per_element, double(want)},
        {"warp-aggregated (__ballot_sync)", count_warp_aggregated, per_element, double(n) / 32},
        {"block reduction (block_reduce)", count_block_reduced, resident, double(resident.grid.x)},
    };
    std::vector<tour::row> rows;
    for (const variant& v : variants) {
      const double ms = tour::median_ms(s, [&](cuda::stream_ref t) {
        FOUNDRY_CUDA_TRY(cudaMemsetAsync(d_count.data(), 0, sizeof(unsigned long long), t.get()));
        foundry::launch(t, v.config, v.kernel, d_in.data(), n, threshold, d_count.data());
      });
      const unsigned long long got = tour::to_host(d_count, s)[0];
      if (got != want) {
        std::fprintf(stderr, "atomics_contention: %s counted %llu, expected %llu\n", v.name, got, want);
        return 1;
      }
      char metric[64];
      std::snprintf(metric, sizeof metric, "%.3g atomics on one address", v.atomics);
      rows.push_back({v.name, ms, 4.0 * n, metric});
    }
    std::printf("atomics_contention: count of %zu floats above %.1f (%llu of them)\n", n, threshold, want);
    tour::print_table("who adds to the counter", "GB/s", "atomics (at most)", rows);
    std::printf("\nevery variant matches the CPU exactly\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "atomics_contention: %s\n", e.what());
    return 3;
  }
}
