#pragma once
/// \file
/// Block-wide loads and stores of a **striped tile**: `VectorsPerThread`
/// vectors of `N` elements per thread of a `BlockThreads`-thread block, where
/// vector `u` of thread `t` is the tile's vector `u * BlockThreads + t`. Each
/// warp instruction then touches `32 × N × sizeof(T)` contiguous bytes (512 for
/// 16-byte vectors), and a thread has all `VectorsPerThread` loads in flight
/// before it uses any.
///
///     using tile = foundry::block_striped_tile<256, 4>;
///     foundry::aligned_vector<float, 4> v[tile::vectors_per_thread];
///     tile::load(x + j * tile::vectors * 4, v);                       // a whole tile
///     tile::load(x + j * tile::vectors * 4, v, valid_vectors);        // the last, partial one
///
/// Preconditions: `tile` points to global memory aligned to `N * sizeof(T)`
/// bytes (a body from `vector_split`), and loads go through the read-only path
/// (see `load_vector`). The partial forms touch only vectors below `valid`;
/// `is_valid(u, valid)` says which entries of `v` they filled.

#include <foundry/thread/vector.cuh>

#include <cstdint>

namespace foundry {

template <int BlockThreads, int VectorsPerThread>
struct block_striped_tile {
  static_assert(BlockThreads > 0 && VectorsPerThread > 0, "a tile holds at least one vector per thread");
  /// Threads of the block that moves the tile.
  static constexpr int block_threads = BlockThreads;
  /// Vectors each thread loads or stores: the tile's shape. The policies that choose it
  /// call it `vectors_in_flight`, the loads a thread issues before it uses any.
  static constexpr int vectors_per_thread = VectorsPerThread;
  /// Vectors in one tile.
  static constexpr std::uint64_t vectors = std::uint64_t{BlockThreads} * VectorsPerThread;

  /// The tile's vector index of this thread's `u`-th vector.
  [[nodiscard]] __device__ static std::uint64_t index(int u) noexcept {
    return static_cast<std::uint64_t>(u) * BlockThreads + threadIdx.x;
  }
  /// True when this thread's `u`-th vector lies below `valid`.
  [[nodiscard]] __device__ static bool is_valid(int u, std::uint64_t valid) noexcept { return index(u) < valid; }

  /// Loads a whole tile: thread t gets vectors t, t + block_threads, ... (coalesced). `tile` must be 16-byte aligned.
  template <int N, class T>
  __device__ static void load(const T* tile, aligned_vector<T, N> (&v)[VectorsPerThread]) noexcept {
#pragma unroll
    for (int u = 0; u < VectorsPerThread; ++u) v[u] = load_vector<N>(tile + index(u) * N);
  }
  /// As above, for a partial tile: only the first `valid` vectors are read; the others are left as they were.
  template <int N, class T>
  __device__ static void load(const T* tile, aligned_vector<T, N> (&v)[VectorsPerThread],
                              std::uint64_t valid) noexcept {
#pragma unroll
    for (int u = 0; u < VectorsPerThread; ++u) {
      if (is_valid(u, valid)) v[u] = load_vector<N>(tile + index(u) * N);
    }
  }
  /// Stores a whole tile in the order `load` reads it.
  template <int N, class T>
  __device__ static void store(T* tile, const aligned_vector<T, N> (&v)[VectorsPerThread]) noexcept {
#pragma unroll
    for (int u = 0; u < VectorsPerThread; ++u) store_vector(tile + index(u) * N, v[u]);
  }
  /// As above, for a partial tile: only the first `valid` vectors are written.
  template <int N, class T>
  __device__ static void store(T* tile, const aligned_vector<T, N> (&v)[VectorsPerThread],
                               std::uint64_t valid) noexcept {
#pragma unroll
    for (int u = 0; u < VectorsPerThread; ++u) {
      if (is_valid(u, valid)) store_vector(tile + index(u) * N, v[u]);
    }
  }
};

}  // namespace foundry
