// The shared pieces of the memory-bound algorithms: `vector_split` (the one head/tail
// scheme), `same_vector_phase`, `common_vector_elements_v` (host arithmetic, no GPU),
// and `block_striped_tile` with `for_each_head_and_tail` used together in a copy
// kernel, checked element by element at every offset modulo the vector and odd sizes.
#include <catch2/catch.hpp>

#include <foundry/block/block_load.cuh>
#include <foundry/core/math.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/thread/vector.cuh>
#include <foundry/thread/vector_split.cuh>
#include <support/test_support.cuh>

#include <cstdint>
#include <vector>

using namespace foundry::test;

namespace {

template <class T>
const T* address(std::uintptr_t a) {
  return reinterpret_cast<const T*>(a);
}

// Copies in[0, n) to out with the scheme every algorithm uses: whole striped tiles,
// one guarded partial tile, then the scalar head and tail.
template <int BlockThreads, int VectorsPerThread, int N, class T>
__global__ void striped_copy_kernel(foundry::vector_split<N> split, const T* in, T* out) {
  using tile = foundry::block_striped_tile<BlockThreads, VectorsPerThread>;
  const std::uint64_t tiles = foundry::ceil_div<std::uint64_t>(split.vectors, tile::vectors);
  for (std::uint64_t j = blockIdx.x; j < tiles; j += gridDim.x) {
    const std::uint64_t valid = split.vectors - j * tile::vectors;  // >= tile::vectors except in the last
    foundry::aligned_vector<T, N> v[VectorsPerThread];
    const T* src = split.body(in) + j * tile::vectors * N;
    T* dst = split.body(out) + j * tile::vectors * N;
    if (valid >= tile::vectors) {
      tile::load(src, v);
      tile::store(dst, v);
    } else {
      tile::load(src, v, valid);
      tile::store(dst, v, valid);
    }
  }
  foundry::for_each_head_and_tail(split, [&](std::uint64_t i) { out[i] = in[i]; });
}

}  // namespace

TEST_CASE("vector_split cuts an array at its first vector boundary") {
  // 4 floats per 16-byte vector; an address 4 bytes past a boundary is 1 element in.
  const auto s = foundry::split_for_vectors<4>(address<float>(4096 + 4), 10);
  CHECK(s.head == 3);
  CHECK(s.vectors == 1);
  CHECK(s.tail_begin() == 7);
  CHECK(s.n == 10);
  const auto aligned = foundry::split_for_vectors<4>(address<float>(4096), 10);
  CHECK(aligned.head == 0);
  CHECK(aligned.vectors == 2);
  CHECK(aligned.tail_begin() == 8);
}

TEST_CASE("vector_split of an array shorter than its head is all head") {
  const auto s = foundry::split_for_vectors<4>(address<float>(4096 + 4), 2);
  CHECK(s.head == 2);
  CHECK(s.vectors == 0);
  CHECK(s.tail_begin() == 2);
  const auto empty = foundry::split_for_vectors<8>(address<std::uint16_t>(4096 + 2), 0);
  CHECK(empty.head == 0);
  CHECK(empty.vectors == 0);
}

TEST_CASE("vector_split covers every element once at every offset and size") {
  for (std::uintptr_t offset = 0; offset < 16; ++offset) {
    for (std::uint64_t n : {0u, 1u, 15u, 16u, 17u, 33u, 1000u}) {
      const auto s = foundry::split_for_vectors<16>(address<std::uint8_t>(8192 + offset), n);
      CAPTURE(offset, n);
      CHECK(s.head < 16);
      CHECK(s.n - s.tail_begin() < 16);
      CHECK(s.head + 16 * s.vectors + (s.n - s.tail_begin()) == n);
      CHECK((s.vectors == 0 || (8192 + offset + s.head) % 16 == 0));
    }
  }
}

TEST_CASE("vector_split with one element per vector has no head or tail") {
  const auto s = foundry::split_for_vectors<1>(address<double>(4096 + 8), 5);
  CHECK(s.head == 0);
  CHECK(s.vectors == 5);
  CHECK(s.tail_begin() == 5);
}

TEST_CASE("same_vector_phase compares element offsets modulo the vector, per type") {
  CHECK(foundry::same_vector_phase<4>(address<float>(4096 + 4), address<float>(8192 + 4)));
  CHECK_FALSE(foundry::same_vector_phase<4>(address<float>(4096 + 4), address<float>(8192 + 8)));
  // A byte array and a float array 1 element into their vectors share a phase.
  CHECK(foundry::same_vector_phase<4>(address<float>(4096 + 4), address<std::uint8_t>(8192 + 1)));
  // A float that is not 4-byte aligned never takes the vector path.
  CHECK_FALSE(foundry::same_vector_phase<4>(address<float>(4096 + 2), address<float>(4096 + 2)));
  CHECK(foundry::same_vector_phase<1>(address<float>(4096 + 2), address<double>(8)));
}

TEST_CASE("common_vector_elements_v gives the widest type 16 bytes") {
  STATIC_REQUIRE(foundry::common_vector_elements_v<16, float> == 4);
  STATIC_REQUIRE(foundry::common_vector_elements_v<16, float, double> == 2);
  STATIC_REQUIRE(foundry::common_vector_elements_v<16, std::uint8_t, float> == 4);
  STATIC_REQUIRE(foundry::common_vector_elements_v<16, std::uint8_t> == 16);
  struct twelve_bytes {
    float x, y, z;
  };
  STATIC_REQUIRE(foundry::common_vector_elements_v<16, float, twelve_bytes> == 1);
}

TEST_CASE("block_striped_tile and for_each_head_and_tail copy every element at every offset", "[gpu]") {
  foundry::stream s;
  const std::size_t max_n = (1u << 20) + 7;
  const auto host = random_vector<std::int32_t>(max_n + 4, -1000000, 1000000, 41);
  const auto d_in = to_device(host, s);
  for (std::size_t offset = 0; offset < 4; ++offset) {
    for (const std::size_t n : odd_sizes()) {
      if (n > max_n) continue;
      CAPTURE(offset, n);
      auto d_out = poisoned_device_buffer<std::int32_t>(n + 4, s);
      const std::int32_t* in = d_in.data() + offset;
      std::int32_t* out = d_out.data() + offset;
      const auto split = foundry::split_for_vectors<4>(in, n);
      // Few blocks, so that blocks walk several tiles and one takes the partial tile.
      foundry::launch_config c;
      c.grid = dim3(3, 1, 1);
      c.block = dim3(128, 1, 1);
      foundry::launch(s, c, striped_copy_kernel<128, 4, 4, std::int32_t>, split, in, out);
      const auto got = to_host(d_out, s);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) wrong += got[offset + i] != host[offset + i] ? 1 : 0;
      CHECK(wrong == 0);
      // Nothing before or after the range is written.
      std::size_t outside = 0;
      for (std::size_t i = 0; i < offset; ++i) outside += got[i] != poison_value<std::int32_t>() ? 1 : 0;
      for (std::size_t i = offset + n; i < n + 4; ++i) outside += got[i] != poison_value<std::int32_t>() ? 1 : 0;
      CHECK(outside == 0);
    }
  }
}
