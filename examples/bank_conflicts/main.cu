// bank_conflicts: a matrix transpose through a 32 x 32 shared-memory tile. Shared memory
// has 32 banks, each 4 bytes wide; address a lives in bank (a / 4) % 32. A warp's access
// takes one pass per distinct address in the busiest bank: 32 lanes reading one column of
// a 32-float-wide tile all hit the same bank and take 32 passes.
//
//   1. plain tile[32][32]: rows written conflict-free, columns read with 32-way conflicts
//   2. padded tile[32][33]: one unused float per row shifts each row by one bank, so a
//      column spans all 32 banks
//   3. swizzled tile[32][32]: element (r, c) stored at column c ^ r: the same spread as the
//      padding without the extra 128 bytes (the scheme TMA and the GEMM tiles use)
//
// The global reads and writes are coalesced in all three: only the shared-memory reads
// differ. A transpose moves data, so every variant must match the CPU exactly.
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include "../tour/tour.cuh"

#include <exception>
#include <random>

namespace {

constexpr int tile = 32;
constexpr int rows_per_pass = 8;  // a 32 x 8 block: each thread moves 4 elements

enum class tile_layout { plain, padded, swizzled };

// [snippet:layouts]
// Where element (r, c) of the tile lives in shared memory.
template <tile_layout L>
__device__ int tile_offset(int r, int c) {
  if constexpr (L == tile_layout::padded) return r * (tile + 1) + c;    // row r starts at bank r % 32
  if constexpr (L == tile_layout::swizzled) return r * tile + (c ^ r);  // column c of row r moves to c ^ r
  return r * tile + c;
}

// out (n x n) = transpose of in (n x n). Writes to the tile go along rows; reads go down
// columns: lanes tx = 0..31 read (tx, ty + j), offsets tx * 32 + ... in the plain layout.
template <tile_layout L>
__global__ void transpose(const float* in, float* out, int n) {
  __shared__ float s_tile[tile * (tile + 1)];
  int x = blockIdx.x * tile + threadIdx.x, y = blockIdx.y * tile + threadIdx.y;
  for (int j = 0; j < tile; j += rows_per_pass)
    if (x < n && y + j < n) s_tile[tile_offset<L>(threadIdx.y + j, threadIdx.x)] = in[std::size_t(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * tile + threadIdx.x;
  y = blockIdx.x * tile + threadIdx.y;
  for (int j = 0; j < tile; j += rows_per_pass)
    if (x < n && y + j < n) out[std::size_t(y + j) * n + x] = s_tile[tile_offset<L>(threadIdx.x, threadIdx.y + j)];
}
// [/snippet]

}  // namespace

int main(int argc, char** argv) {
  if (!tour::has_gpu("bank_conflicts")) return 2;
  try {
    const tour::options opt = tour::parse_options(argc, argv);
    const int n = opt.small ? 1000 : 8192;  // 1000: not a multiple of 32, so edge tiles are exercised
    const std::size_t count = std::size_t(n) * n;
    std::vector<float> in(count), want(count);
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : in) v = dist(rng);
    for (std::size_t r = 0; r < std::size_t(n); ++r)
      for (std::size_t c = 0; c < std::size_t(n); ++c) want[c * n + r] = in[r * n + c];
    foundry::stream s;
    foundry::device_buffer<float> d_in = tour::to_device(in, s), d_out(count, s);
    foundry::launch_config c;
    c.grid = dim3(foundry::ceil_div(n, tile), foundry::ceil_div(n, tile), 1);
    c.block = dim3(tile, rows_per_pass, 1);

    struct variant {
      const char* name;
      void (*kernel)(const float*, float*, int);
      const char* passes;
    };
    const variant variants[] = {
        {"plain tile[32][32]", transpose<tile_layout::plain>, "32 (every lane in one bank)"},
        {"padded tile[32][33]", transpose<tile_layout::padded>, "1"},
        {"swizzled tile[32][32], c ^ r", transpose<tile_layout::swizzled>, "1"},
    };
    std::vector<tour::row> rows;
    for (const variant& v : variants) {
      foundry::fill(d_out.span(), -1.0f, s);  // poison
      const double ms = tour::median_ms(
          s, [&](cuda::stream_ref t) { foundry::launch(t, c, v.kernel, d_in.data(), d_out.data(), n); });
      if (!tour::matches("bank_conflicts", v.name, tour::to_host(d_out, s), want)) return 1;
      rows.push_back({v.name, ms, 8.0 * count, v.passes});
    }
    std::printf("bank_conflicts: transpose of a %d x %d float matrix through a 32 x 32 shared tile\n", n, n);
    tour::print_table("shared-memory tile layout", "GB/s", "passes per column read (by arithmetic)", rows);
    std::printf("\nevery variant matches the CPU exactly\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "bank_conflicts: %s\n", e.what());
    return 3;
  }
}
