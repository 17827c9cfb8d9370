// read_only_memory: telling the compiler, and the hardware, that data is only read.
//
// Part 1, a 9-tap blur where each thread computes 4 neighbouring outputs (12 inputs):
//   1. plain pointers: `out` may alias `in`, so after each store the compiler must assume
//      the inputs changed and load them again: 36 loads per thread
//   2. const __restrict__: the promise that nothing written is read lets it keep the 12
//      inputs in registers and load them through the read-only (non-coherent) path
//   3. __ldg: the read-only path asked for explicitly, load by load
//
// Part 2, a 256-entry table read 16 times per element:
//   1. __constant__, every lane of a warp reading the same entry: one broadcast per read
//   2. __constant__, each lane a different entry: the constant cache serves one address per
//      pass, so 32 different addresses take 32 passes
//   3. the same table in global memory through const __restrict__: L1 serves a warp's 32
//      different addresses in one go; the right home for data read divergently
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include "../tour/tour.cuh"

#include <exception>
#include <random>

namespace {

constexpr int taps = 9, outputs_per_thread = 4, table_size = 256, lookups = 16;
__host__ __device__ constexpr float weight(int j) { return float(j + 1) * 0.0625f; }

// [snippet:restrict]
// in has n + taps - 1 elements; out[i] = sum_j weight(j) * in[i + j].
__global__ void blur_plain(const float* in, float* out, std::size_t n) {
  const std::size_t first = (std::size_t{blockIdx.x} * blockDim.x + threadIdx.x) * outputs_per_thread;
  for (int k = 0; k < outputs_per_thread && first + k < n; ++k) {
    float sum = 0.0f;
    for (int j = 0; j < taps; ++j) sum = fmaf(weight(j), in[first + k + j], sum);
    out[first + k] = sum;  // might have changed in[]: the next output reloads its inputs
  }
}
__global__ void blur_restrict(const float* __restrict__ in, float* __restrict__ out, std::size_t n) {
  const std::size_t first = (std::size_t{blockIdx.x} * blockDim.x + threadIdx.x) * outputs_per_thread;
  for (int k = 0; k < outputs_per_thread && first + k < n; ++k) {
    float sum = 0.0f;
    for (int j = 0; j < taps; ++j) sum = fmaf(weight(j), in[first + k + j], sum);
    out[first + k] = sum;
  }
}
__global__ void blur_ldg(const float* in, float* out, std::size_t n) {
  const std::size_t first = (std::size_t{blockIdx.x} * blockDim.x + threadIdx.x) * outputs_per_thread;
  for (int k = 0; k < outputs_per_thread && first + k < n; ++k) {
    float sum = 0.0f;
    for (int j = 0; j < taps; ++j) sum = fmaf(weight(j), __ldg(in + first + k + j), sum);
    out[first + k] = sum;
  }
}
// [/snippet]

// [snippet:constant]
__constant__ float c_table[table_size];

// Entry read by lookup j of element i: the same for a whole warp, or one per lane.
__host__ __device__ inline int entry(std::size_t i, int j, bool per_lane) {
  return (j * 17 + (per_lane ? int(i % 32) * 8 : 0)) % table_size;
}
template <bool PerLane>
__global__ void scale_constant(const float* in, float* out, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) {
    float x = in[i];
    for (int j = 0; j < lookups; ++j) x = fmaf(x, c_table[entry(i, j, PerLane)], 0.5f);
    out[i] = x;
  }
}
__global__ void scale_global(const float* __restrict__ table, const float* in, float* out, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) {
    float x = in[i];
    for (int j = 0; j < lookups; ++j) x = fmaf(x, table[entry(i, j, true)], 0.5f);
    out[i] = x;
  }
}
// [/snippet]

}  // namespace

int main(int argc, char** argv) {
  if (!tour::has_gpu("read_only_memory")) return 2;
  try {
    const tour::options opt = tour::parse_options(argc, argv);
    const std::size_t n = opt.small ? (std::size_t{1} << 20) : (std::size_t{1} << 24);
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> in(n + taps - 1), table(table_size);
    for (float& v : in) v = dist(rng);
    for (float& v : table) v = dist(rng) * 0.5f;
    foundry::stream s;
    foundry::device_buffer<float> d_in = tour::to_device(in, s), d_table = tour::to_device(table, s), d_out(n, s);
    FOUNDRY_CUDA_TRY(
        cudaMemcpyToSymbolAsync(c_table, table.data(), sizeof(float) * table_size, 0, cudaMemcpyHostToDevice, s.get()));

    using kernel_t = void (*)(const float*, float*, std::size_t);
    auto run = [&](std::vector<tour::row>& rows, const char* name, double bytes, const char* metric,
                   const std::vector<float>& want, auto&& enqueue) {
      foundry::fill(d_out.span(), -1.0f, s);  // poison
      const double ms = tour::median_ms(s, enqueue);
      rows.push_back({name, ms, bytes, metric});
      return tour::matches("read_only_memory", name, tour::to_host(d_out, s), want);
    };

    std::vector<float> want(n);
    for (std::size_t i = 0; i < n; ++i) {
      float sum = 0.0f;
      for (int j = 0; j < taps; ++j) sum = std::fma(weight(j), in[i + j], sum);
      want[i] = sum;
    }
    const foundry::launch_config per_four = foundry::make_launch_config_1d(foundry::ceil_div<std::size_t>(n, 4), 256);
    const std::pair<const char*, kernel_t> blurs[] = {
        {"plain pointers", blur_plain}, {"const __restrict__", blur_restrict}, {"__ldg", blur_ldg}};
    const char* loads[] = {"36 (reloaded after each store)", "12", "12 if the compiler sees no aliasing"};
    std::vector<tour::row> blur_rows, table_rows;
    for (int v = 0; v < 3; ++v)
      if (!run(blur_rows, blurs[v].first, 8.0 * n, loads[v], want, [&](cuda::stream_ref t) {
            foundry::launch(t, per_four, blurs[v].second, d_in.data(), d_out.data(), n);
          }))
        return 1;

    const foundry::launch_config c = foundry::make_launch_config_1d(n, 256);
    for (bool per_lane : {false, true}) {
      for (std::size_t i = 0; i < n; ++i) {
        float x = in[i];
        for (int j = 0; j < lookups; ++j) x = std::fma(x, table[entry(i, j, per_lane)], 0.5f);
        want[i] = x;
      }
      const char* name = per_lane ? "__constant__, one entry per lane" : "__constant__, one entry per warp";
      if (!run(table_rows, name, 8.0 * n, per_lane ? "32" : "1", want, [&](cuda::stream_ref t) {
            foundry::launch(t, c, per_lane ? scale_constant<true> : scale_constant<false>, d_in.data(), d_out.data(),
                            n);
          }))
        return 1;
    }
    if (!run(table_rows, "global const __restrict__, per lane", 8.0 * n, "1 (L1, 32 addresses at once)", want,
             [&](cuda::stream_ref t) {
               foundry::launch(t, c, scale_global, d_table.data(), d_in.data(), d_out.data(), n);
             }))
      return 1;

    std::printf("read_only_memory: %zu floats\n", n);
    tour::print_table("9-tap blur, 4 outputs per thread", "GB/s", "global loads per thread", blur_rows);
    tour::print_table("256-entry table, 16 lookups per element", "GB/s", "constant-cache passes per lookup",
                      table_rows);
    std::printf("\nevery variant matches the CPU exactly\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "read_only_memory: %s\n", e.what());
    return 3;
  }
}
