// The primitives foundry's kernels are built from, used inside test kernels the
// way a user would: warp_reduce, block_reduce (temp_storage in __shared__) and
// the per-thread vector loads and stores. Integer data: every result is exact.
#include <catch2/catch.hpp>

#include <foundry/block/block_reduce.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/runtime/stream.cuh>
#include <foundry/thread/vector.cuh>
#include <foundry/warp/warp_reduce.cuh>
#include <support/test_support.cuh>

#include <cuda_fp16.h>
#include <cuda/functional>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

using foundry::test::poisoned_device_buffer;
using foundry::test::random_vector;
using foundry::test::to_device;
using foundry::test::to_host;

// One output per warp: the sum of its 32 lanes (lane 0 writes it).
__global__ void warp_sum_kernel(const int* in, int* out) {
  __shared__ foundry::warp_reduce<int>::temp_storage storage;
  const int total = foundry::warp_reduce<int>(storage).sum(in[threadIdx.x]);
  if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = total;
}

// Warp w sums its first w + 1 lanes (valid_lanes = w + 1); lanes beyond hold a huge value that must be ignored.
__global__ void warp_partial_sum_kernel(const int* in, int* out) {
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int value = lane <= warp ? in[threadIdx.x] : 1 << 29;
  const int total = foundry::warp_reduce<int>().reduce(value, cuda::std::plus<int>{}, warp + 1);
  if (lane == 0) out[warp] = total;
}

// Every lane writes what all_reduce returned to it.
__global__ void warp_all_max_kernel(const int* in, int* out) {
  out[threadIdx.x] = foundry::warp_reduce<int>().all_reduce(in[threadIdx.x], cuda::maximum<int>{});
}

// One output per block: the reduction of its Threads values; block shape (Threads / Rows, Rows).
template <int Threads, class Op>
__global__ void block_reduce_kernel(const int* in, int* out, Op op) {
  using reduce_t = foundry::block_reduce<int, Threads>;
  __shared__ typename reduce_t::temp_storage storage;
  const unsigned rank = threadIdx.x + blockDim.x * threadIdx.y;
  const int total = reduce_t(storage).reduce(in[blockIdx.x * Threads + rank], op);
  if (rank == 0) out[blockIdx.x] = total;
}

// out = 2 * in, one vector of N elements per thread.
template <int N, class T>
__global__ void double_vectors_kernel(const T* in, T* out) {
  const std::size_t offset = std::size_t{threadIdx.x} * N;
  auto v = foundry::load_vector<N>(in + offset);
#pragma unroll
  for (int k = 0; k < N; ++k) v[k] = static_cast<T>(v[k] + v[k]);
  foundry::store_vector(out + offset, v);
}

foundry::launch_config shape(unsigned blocks, dim3 block) {
  foundry::launch_config c;
  c.grid = dim3(blocks, 1, 1);
  c.block = block;
  return c;
}

template <int Threads, class Op, class Reference>
void check_block_reduce(unsigned rows, Op op, Reference reference) {
  CAPTURE(Threads, rows);
  foundry::stream s;
  const unsigned blocks = 5;
  const auto x = random_vector<int>(std::size_t{blocks} * Threads, -1000, 1000, Threads);
  const auto d_x = to_device(x, s);
  auto d_out = poisoned_device_buffer<int>(blocks, s);
  foundry::launch(s, shape(blocks, dim3(Threads / rows, rows, 1)), block_reduce_kernel<Threads, Op>, d_x.data(),
                  d_out.data(), op);
  const auto out = to_host(d_out, s);
  for (unsigned b = 0; b < blocks; ++b) {
    int expected = x[std::size_t{b} * Threads];
    for (int t = 1; t < Threads; ++t) expected = reference(expected, x[std::size_t{b} * Threads + t]);
    CHECK(out[b] == expected);
  }
}

}  // namespace

TEST_CASE("warp_reduce sums the 32 lanes of each warp into lane 0", "[gpu]") {
  foundry::stream s;
  const auto x = random_vector<int>(128, -1000, 1000, 41);
  const auto d_x = to_device(x, s);
  auto d_out = poisoned_device_buffer<int>(4, s);
  foundry::launch(s, shape(1, dim3(128)), warp_sum_kernel, d_x.data(), d_out.data());
  const auto out = to_host(d_out, s);
  for (int w = 0; w < 4; ++w) {
    int expected = 0;
    for (int l = 0; l < 32; ++l) expected += x[w * 32 + l];
    CHECK(out[w] == expected);
  }
}

TEST_CASE("warp_reduce with valid_lanes ignores the lanes at and above it", "[gpu]") {
  foundry::stream s;
  const auto x = random_vector<int>(32 * 32, -1000, 1000, 42);
  const auto d_x = to_device(x, s);
  auto d_out = poisoned_device_buffer<int>(32, s);
  foundry::launch(s, shape(1, dim3(1024)), warp_partial_sum_kernel, d_x.data(), d_out.data());
  const auto out = to_host(d_out, s);
  for (int w = 0; w < 32; ++w) {
    CAPTURE(w);
    int expected = 0;
    for (int l = 0; l <= w; ++l) expected += x[w * 32 + l];
    CHECK(out[w] == expected);
  }
}

TEST_CASE("warp_reduce::all_reduce gives every lane the result", "[gpu]") {
  foundry::stream s;
  const auto x = random_vector<int>(64, -1000000, 1000000, 43);
  const auto d_x = to_device(x, s);
  auto d_out = poisoned_device_buffer<int>(64, s);
  foundry::launch(s, shape(1, dim3(64)), warp_all_max_kernel, d_x.data(), d_out.data());
  const auto out = to_host(d_out, s);
  for (int t = 0; t < 64; ++t) {
    const int w = t / 32;
    CHECK(out[t] == *std::max_element(x.begin() + w * 32, x.begin() + w * 32 + 32));
  }
}

TEST_CASE("block_reduce sums a block into thread 0 for 32 to 1024 threads", "[gpu]") {
  const auto plus = [](int a, int b) { return a + b; };
  check_block_reduce<32>(1, cuda::std::plus<int>{}, plus);
  check_block_reduce<96>(1, cuda::std::plus<int>{}, plus);
  check_block_reduce<256>(1, cuda::std::plus<int>{}, plus);
  check_block_reduce<1024>(1, cuda::std::plus<int>{}, plus);
}

TEST_CASE("block_reduce works for a 2D block shape and other operators", "[gpu]") {
  const auto min = [](int a, int b) { return std::min(a, b); };
  const auto max = [](int a, int b) { return std::max(a, b); };
  check_block_reduce<256>(16, cuda::minimum<int>{}, min);  // 16 x 16 threads
  check_block_reduce<512>(4, cuda::maximum<int>{}, max);   // 128 x 4 threads
}

TEST_CASE("load_vector and store_vector move whole vectors of 4, 8 and 16 bytes", "[gpu]") {
  foundry::stream s;
  {
    const auto x = random_vector<float>(64 * 4, -1.0f, 1.0f, 44);
    const auto d_x = to_device(x, s);
    auto d_out = poisoned_device_buffer<float>(x.size(), s);
    foundry::launch(s, shape(1, dim3(64)), double_vectors_kernel<4, float>, d_x.data(), d_out.data());
    const auto out = to_host(d_out, s);
    for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(out[i] == x[i] + x[i]);
  }
  {
    const auto x = random_vector<std::uint8_t>(64 * 16, 0, 255, 45);
    const auto d_x = to_device(x, s);
    auto d_out = poisoned_device_buffer<std::uint8_t>(x.size(), s);
    foundry::launch(s, shape(1, dim3(64)), double_vectors_kernel<16, std::uint8_t>, d_x.data(), d_out.data());
    const auto out = to_host(d_out, s);
    for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(out[i] == static_cast<std::uint8_t>(x[i] + x[i]));
  }
  {
    const auto x = random_vector<std::int16_t>(64 * 4, -1000, 1000, 46);  // 8-byte vectors
    const auto d_x = to_device(x, s);
    auto d_out = poisoned_device_buffer<std::int16_t>(x.size(), s);
    foundry::launch(s, shape(1, dim3(64)), double_vectors_kernel<4, std::int16_t>, d_x.data(), d_out.data());
    const auto out = to_host(d_out, s);
    for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(out[i] == static_cast<std::int16_t>(x[i] + x[i]));
  }
}

TEST_CASE("vector widths follow the element size") {
  STATIC_REQUIRE(foundry::vector_elements_v<float> == 4);
  STATIC_REQUIRE(foundry::vector_elements_v<double> == 2);
  STATIC_REQUIRE(foundry::vector_elements_v<__half> == 8);
  STATIC_REQUIRE(foundry::vector_elements_v<std::uint8_t> == 16);
  STATIC_REQUIRE(foundry::vector_elements_v<float, 8> == 2);
  struct three_bytes {
    char c[3];
  };
  STATIC_REQUIRE(foundry::vector_elements_v<three_bytes> == 1);
  STATIC_REQUIRE(foundry::is_vectorizable_v<float, 4>);
  STATIC_REQUIRE_FALSE(foundry::is_vectorizable_v<float, 8>);
  STATIC_REQUIRE(alignof(foundry::aligned_vector<float, 4>) == 16);
}
