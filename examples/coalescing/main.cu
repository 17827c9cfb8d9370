// coalescing: how a warp's 32 addresses become DRAM traffic. The memory system moves
// 32-byte sectors; a warp's load is served by every sector its 32 addresses touch. 32
// consecutive floats touch 4 sectors (128 bytes, all used); 32 floats 32 elements apart
// touch 32 sectors (1024 bytes moved for 128 used).
//
//   1. stride 1: out[i] = in[i]
//   2. strides 2, 8, 32: out[i] = in[p(i)], p a permutation that puts consecutive threads
//      `stride` elements apart (every element is still read exactly once)
//   3. random: p a random permutation, read from an index array
//   4. array of structures against structure of arrays: read two fields of eight
//
// GB/s counts the bytes the kernel needs (read once, written once), not the sectors the
// hardware moved: the gap between the two is the waste.
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include "../tour/tour.cuh"

#include <algorithm>
#include <exception>
#include <numeric>
#include <random>

namespace {

// [snippet:kernels]
// Thread i reads element (i % rows) * stride + i / rows of an array seen as `rows` rows of
// `stride` columns: a transposed walk, so neighbouring threads are `stride` floats apart.
__global__ void strided_gather(const float* in, float* out, std::size_t n, std::size_t stride) {
  const std::size_t rows = n / stride;
  for (auto i : foundry::grid_stride_range(n)) out[i] = in[(i % rows) * stride + i / rows];
}

__global__ void indexed_gather(const float* in, const std::uint32_t* index, float* out, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) out[i] = in[index[i]];
}

struct particle {  // 32 bytes: a warp reading .x of 32 particles touches 32 sectors
  float x, y, z, vx, vy, vz, mass, charge;
};
__global__ void advance_aos(const particle* p, float* out, float dt, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) out[i] = fmaf(p[i].vx, dt, p[i].x);
}
__global__ void advance_soa(const float* x, const float* vx, float* out, float dt, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) out[i] = fmaf(vx[i], dt, x[i]);
}
// [/snippet]

}  // namespace

int main(int argc, char** argv) {
  if (!tour::has_gpu("coalescing")) return 2;
  try {
    const tour::options opt = tour::parse_options(argc, argv);
    const std::size_t n = opt.small ? (std::size_t{1} << 20) : (std::size_t{1} << 24);  // a power of 2: stride | n
    const float dt = 0.5f;
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> in(n);
    for (float& v : in) v = dist(rng);
    std::vector<std::uint32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<particle> ps(n);
    std::vector<float> xs(n), vxs(n);
    for (std::size_t i = 0; i < n; ++i) {
      ps[i] = {dist(rng), dist(rng), dist(rng), dist(rng), dist(rng), dist(rng), 1.0f, 1.0f};
      xs[i] = ps[i].x;
      vxs[i] = ps[i].vx;
    }
    foundry::stream s;
    foundry::device_buffer<float> d_in = tour::to_device(in, s), d_out(n, s);
    foundry::device_buffer<std::uint32_t> d_perm = tour::to_device(perm, s);
    foundry::device_buffer<particle> d_ps = tour::to_device(ps, s);
    foundry::device_buffer<float> d_xs = tour::to_device(xs, s), d_vxs = tour::to_device(vxs, s);
    const foundry::launch_config c = foundry::make_launch_config_1d(n, 256);

    // Runs one variant, checks it against `want`, and adds its row.
    std::vector<tour::row> gathers, layouts;
    auto run = [&](std::vector<tour::row>& table, const std::string& name, double bytes, const std::string& sectors,
                   const std::vector<float>& want, auto&& enqueue) {
      foundry::fill(d_out.span(), -1.0f, s);  // poison
      const double ms = tour::median_ms(s, enqueue);
      if (!tour::matches("coalescing", name, tour::to_host(d_out, s), want)) return false;
      table.push_back({name, ms, bytes, sectors});
      return true;
    };

    for (std::size_t stride : {1, 2, 8, 32}) {
      std::vector<float> want(n);
      for (std::size_t i = 0; i < n; ++i) want[i] = in[(i % (n / stride)) * stride + i / (n / stride)];
      const std::string sectors = std::to_string(std::min<std::size_t>(32, 4 * stride));
      if (!run(gathers, "stride " + std::to_string(stride), 8.0 * n, sectors, want, [&](cuda::stream_ref t) {
            foundry::launch(t, c, strided_gather, d_in.data(), d_out.data(), n, stride);
          }))
        return 1;
    }
    {
      std::vector<float> want(n);
      for (std::size_t i = 0; i < n; ++i) want[i] = in[perm[i]];
      if (!run(gathers, "random (index array)", 12.0 * n, "~32 (+4 for the index)", want, [&](cuda::stream_ref t) {
            foundry::launch(t, c, indexed_gather, d_in.data(), d_perm.data(), d_out.data(), n);
          }))
        return 1;
    }

    std::vector<float> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = std::fma(vxs[i], dt, xs[i]);
    if (!run(layouts, "array of structures (32 B each)", 12.0 * n, "2 x 32", want,
             [&](cuda::stream_ref t) { foundry::launch(t, c, advance_aos, d_ps.data(), d_out.data(), dt, n); }))
      return 1;
    if (!run(layouts, "structure of arrays", 12.0 * n, "2 x 4", want, [&](cuda::stream_ref t) {
          foundry::launch(t, c, advance_soa, d_xs.data(), d_vxs.data(), d_out.data(), dt, n);
        }))
      return 1;

    std::printf("coalescing: %zu floats; GB/s counts the bytes each element needs, read and written once\n", n);
    tour::print_table("access pattern (out[i] = in[p(i)])", "GB/s", "32-B sectors per warp load", gathers);
    tour::print_table("data layout (out[i] = x[i] + vx[i] * dt)", "GB/s", "32-B sectors per warp load", layouts);
    std::printf("\nevery variant matches the CPU exactly\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "coalescing: %s\n", e.what());
    return 3;
  }
}
