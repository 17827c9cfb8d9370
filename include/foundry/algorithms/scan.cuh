#pragma once
/// \file
/// Device-wide prefix scans on an explicit stream:
/// `inclusive_scan`: `out[i] = in[0] ⊕ in[1] ⊕ ... ⊕ in[i]`;
/// `exclusive_scan`: `out[0] = init`, `out[i] = init ⊕ in[0] ⊕ ... ⊕ in[i-1]`;
/// for any associative `⊕` (it need not be commutative: the order is kept).
///
///     foundry::inclusive_sum(x.span(), y.span(), stream);
///     foundry::exclusive_scan(x.span(), x.span(), 0, cuda::std::plus<>{}, stream);   // in place
///
/// Types: each input element is converted to the output's element type, which
/// is also the accumulator (`convert_to`). In place (`out` is `in`, same element
/// size) is allowed; any other overlap is not.
///
/// Design: one pass over the data, with decoupled look-back (Merrill and Garland,
/// "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016), so the scan
/// reads n and writes n elements, as a copy does. A tile is `block_threads ×
/// vectors_in_flight` 16-byte vectors. Each thread copies its vectors of the tile
/// (striped: every warp access coalesced) into shared memory with asynchronous copies,
/// so that a tile waiting for its look-back holds shared memory rather than registers
/// (32 registers a thread for floats). Each thread folds each of its vectors, each warp
/// scans its lanes' vector totals (`warp_scan`), and warp 0 scans the
/// `vectors_in_flight × warps` warp totals of the tile (one or more per lane), which
/// follow one another in memory in that order. Warp 0 then publishes the tile's total,
/// looks back over the tiles before it 32 × `look_back_tiles_per_lane` at a time
/// (folding their totals until it meets a tile that has published its inclusive prefix,
/// sleeping `poll_delay_ns` between polls), and publishes its own inclusive prefix.
/// Every thread then scans its vectors again from shared memory, from its prefix, and
/// stores them. That is the striped arrangement (`scan_striped_policy`); in the blocked
/// one (the default, `scan_policy`, CUB's arrangement) each thread owns
/// `vectors_in_flight` consecutive vectors (warps copy 32 consecutive vectors per
/// instruction into their owners' slots), folds them in order, and the block scans one
/// total per thread (a warp scan, then the warp totals) before warp 0 publishes and
/// looks back; the scanned vectors go out through the same slots. A tile is the one of
/// its block's index (the default, as CUB's: it relies on the hardware starting blocks
/// in index order, which CUDA does not promise) or takes its index from an atomic
/// counter (`tiles_in_block_order = false`: a tile then only ever waits for tiles that
/// started before it, at the cost of one atomic round trip before its loads). A first,
/// small kernel resets the tile states; both launches are programmatic dependent
/// launches. The scalar head before the first vector boundary and the tail after the
/// last whole vector (`vector_split`) are scanned by thread 0 of the first and the last
/// tile. Inputs and outputs at different offsets modulo 16 bytes take the same path
/// with one element per vector.
///
/// Speed on the H200: see `scan_policy`; the striped arrangement takes 24-34% more
/// time than the blocked one at every size from 2^20 to 2^30.

#include <foundry/algorithms/detail/checks.cuh>
#include <foundry/block/block_load.cuh>
#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/core/operators.cuh>
#include <foundry/launch/dependent_launch.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/thread/vector.cuh>
#include <foundry/thread/vector_split.cuh>
#include <foundry/util/nvtx.cuh>
#include <foundry/warp/shuffle.cuh>
#include <foundry/warp/warp_scan.cuh>

#include <cuda_pipeline_primitives.h>
#include <cuda/atomic>
#include <cuda/std/functional>
#include <cuda/std/span>
#include <cuda/std/type_traits>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace foundry {

/// Which thread of a scan tile's block holds which of the tile's vectors.
enum class scan_tile_arrangement {
  /// Thread t holds vectors t, t + block_threads, ...: each thread folds each of its
  /// vectors, each warp scans its lanes' totals once per vector, and warp 0 scans
  /// the `vectors_in_flight × warps` warp totals.
  striped,
  /// Thread t holds `vectors_in_flight` consecutive vectors (copied in and out
  /// striped, through shared memory): each thread folds all its elements in order,
  /// and the block scans one total per thread (one warp scan per warp, then the
  /// warp totals), as CUB's `BLOCK_LOAD_WARP_TRANSPOSE` with `BLOCK_SCAN_WARP_SCANS`.
  blocked,
};

/// The striped tile arrangement's launch policy. The candidates measured on the H200 are
/// rows of bench/bench_scan.cu; see the file's comment for where they stand.
struct scan_striped_policy {
  /// Which thread holds which vectors of a tile.
  static constexpr scan_tile_arrangement tile_arrangement = scan_tile_arrangement::striped;
  /// Threads per block: 8 warps.
  static constexpr int block_threads = 256;
  /// 16-byte vectors per thread in a tile. Striped: warp 0 scans one total per warp
  /// and vector, so `vectors_in_flight × block_threads / 32` must be at most 32 or
  /// a multiple of 32.
  static constexpr int vectors_in_flight = 4;
  /// Bytes per access of the wider of the input and output types.
  static constexpr int vector_bytes = 16;
  /// Tiles in the order of their blocks' index (`true`, as CUB does: it relies on
  /// the hardware starting blocks in index order, which CUDA does not promise) or
  /// of an atomic counter (`false`: a tile then only ever waits for tiles whose
  /// block is already running, at the cost of one atomic round trip per tile).
  static constexpr bool tiles_in_block_order = false;
  /// Tiles each lane of the look-back reads per poll: a window of 32 × this.
  static constexpr int look_back_tiles_per_lane = 1;
  /// Nanoseconds a look-back sleeps before it polls again a window in which some
  /// tile has published nothing yet (0: poll at once). Sleeping leaves the L2 to
  /// the tiles' loads and stores instead of to hundreds of spinning warps.
  static constexpr unsigned poll_delay_ns = 500;
  /// Grids of fewer tiles poll without sleeping (0: every grid sleeps).
  static constexpr std::uint32_t poll_delay_min_tiles = 0;
  /// Nanoseconds a tile sleeps between publishing its total and its first look
  /// back, in grids of at least 512 tiles, where its neighbours are still loading.
  static constexpr unsigned first_look_delay_ns = 1000;
};

/// Launch policy of the scans (the default): the blocked arrangement, 128 threads × 16
/// vectors of 16 bytes (64 floats, 34 KiB of shared memory a tile: 6 tiles a SM on
/// sm_90), tiles in block order, and CUB's sm_90 delays for 4-byte sums
/// (`DeviceScan`, CCCL 3.0: 688 ns between polls, 1140 ns before the first look,
/// neither in grids of fewer than 500 tiles). Measured on the H200 (inclusive f32) with
/// 12 vectors: 51.4 µs at 2^24 and 667 µs at 2^28 against CUB's 50.9 and 688; CUB's own
/// shape (6 vectors, atomic tile counter) took 58.5 and 751. The staged tile is
/// `block_threads × (vectors_in_flight | 1)` vectors of the input and, when its
/// vectors differ in size, of the output: above 48 KiB `launch` opts the kernel in
/// to more shared memory, and for elements so large that the tile would pass 96 KiB
/// (`detail::fitted_scan_policy`: more than 45 bytes in place) the call lowers the
/// vectors per thread of any policy until it fits.
struct scan_policy : scan_striped_policy {
  /// Each thread folds its own consecutive elements; one block scan a tile.
  static constexpr scan_tile_arrangement tile_arrangement = scan_tile_arrangement::blocked;
  /// Threads per block: 4 warps.
  static constexpr int block_threads = 128;
  /// 16-byte vectors per thread: 64 floats. On an H100 (session 10, block order) 16
  /// took 61.9 µs at 2^24 and 842 µs at 2^28, against 62.8 and 851 with 12, 62.5 and
  /// 850 with 8, 65.4 and 898 with 6 (CUB: 62.7 and 869). With the atomic counter on
  /// the H200, 6, 8, 10 and 16 were 1.5-7% slower than 12.
  static constexpr int vectors_in_flight = 16;
  /// Tiles in block order, as CUB's: no atomic round trip before a tile's loads (8%
  /// of the time at 2^24 with 12 vectors).
  static constexpr bool tiles_in_block_order = true;
  /// CUB's delay between polls (sm_90, 4-byte values).
  static constexpr unsigned poll_delay_ns = 688;
  /// Grids of fewer tiles poll without sleeping, as CUB's do (below 500 blocks).
  static constexpr std::uint32_t poll_delay_min_tiles = 512;
  /// CUB's delay before the first look (sm_90, 4-byte values).
  static constexpr unsigned first_look_delay_ns = 1140;
};

/// The blocked arrangement by its name (the default policy).
using scan_blocked_policy = scan_policy;

namespace detail {

enum class scan_kind { inclusive, exclusive };

/// What a tile has published: nothing yet, its own total, or its inclusive prefix.
enum tile_status : unsigned { status_invalid = 0, status_total = 1, status_prefix = 2 };

/// The published states of every tile. For a `T` of at most 4 bytes the status
/// and value share one 64-bit word, written and read in one access; otherwise
/// the total and the inclusive prefix each have an array of their own (a tile
/// writes each once, so a reader that saw a status never reads a value written
/// after it), written before the status with release order and read after it
/// with acquire order.
template <class T>
struct tile_states {
  static constexpr bool packed = sizeof(T) <= 4;
  using word = unsigned long long;

  word* words;       ///< packed: one per tile
  unsigned* status;  ///< otherwise: one per tile
  T* totals;         ///< otherwise: one per tile
  T* prefixes;       ///< otherwise: one per tile
  unsigned* next_tile;

  __device__ void publish(std::uint32_t tile, tile_status s, const T& value) const {
    if constexpr (packed) {
      unsigned bits = 0;
      std::memcpy(&bits, &value, sizeof(T));
      cuda::atomic_ref<word, cuda::thread_scope_device> w(words[tile]);
      w.store((word{bits} << 32) | s, cuda::std::memory_order_relaxed);
    } else {
      (s == status_prefix ? prefixes : totals)[tile] = value;
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(status[tile]).store(s, cuda::std::memory_order_release);
    }
  }

  /// The status of `tile` and, when it is not `status_invalid`, its value.
  __device__ tile_status read(std::uint32_t tile, T& value) const {
    if constexpr (packed) {
      cuda::atomic_ref<word, cuda::thread_scope_device> w(words[tile]);
      const word bits = w.load(cuda::std::memory_order_relaxed);
      const auto high = static_cast<unsigned>(bits >> 32);
      std::memcpy(&value, &high, sizeof(T));
      return static_cast<tile_status>(bits & 0xffffffffu);
    } else {
      const unsigned s =
          cuda::atomic_ref<unsigned, cuda::thread_scope_device>(status[tile]).load(cuda::std::memory_order_acquire);
      if (s != status_invalid) value = (s == status_prefix ? prefixes : totals)[tile];
      return static_cast<tile_status>(s);
    }
  }
};

/// Resets every tile to `status_invalid` and the tile counter to 0.
template <class T>
__global__ void reset_tile_states_kernel(tile_states<T> states, std::uint32_t tiles) {
  allow_dependent_launch();
  wait_for_prior_grids();
  for (auto i : grid_stride_range(tiles)) {
    if constexpr (tile_states<T>::packed) {
      states.words[i] = 0;
    } else {
      states.status[i] = status_invalid;
    }
  }
  if (global_thread_index() == 0) *states.next_tile = 0;
}

/// Warp 0's look-back for `tile` (> 0): folds the totals of the tiles before it,
/// nearest last, until one that published its inclusive prefix; returns the
/// tile's exclusive prefix (in every lane). A window is `32 × TilesPerLane` tiles:
/// lane l reads tiles `base + l × TilesPerLane ...` and folds them from the last
/// prefix among them; a suffix scan over the lanes keeps the order of the tiles.
/// Wider windows let a prefix reach more tiles per round trip to the L2, which
/// bounds how fast prefixes travel through the grid.
/// `sleeps`: whether to sleep between polls at all (grids too small to need it poll at once).
template <int TilesPerLane, unsigned PollDelayNs, class T, class Op>
__device__ T look_back(const tile_states<T>& states, std::uint32_t tile, Op& op, bool sleeps) {
  constexpr std::int64_t window_tiles = std::int64_t{warp_threads} * TilesPerLane;
  const int lane = lane_id();
  const partial_result_op<Op> fold{op};
  partial_result<T> later{T{}, false};  // the tiles after the current window, folded
  std::int64_t end = tile;              // the window is [end - window_tiles, end)
  for (;;) {
    const std::int64_t first = end - window_tiles + std::int64_t{lane} * TilesPerLane;
    T values[TilesPerLane];
    tile_status statuses[TilesPerLane];
    for (;;) {  // every lane polls until every tile of the window has published something
      bool waiting = false;
#pragma unroll
      for (int j = 0; j < TilesPerLane; ++j) {
        statuses[j] = status_prefix;  // tiles before 0 never matter: tile 0 publishes a prefix
        if (first + j >= 0) statuses[j] = states.read(static_cast<std::uint32_t>(first + j), values[j]);
        waiting |= statuses[j] == status_invalid;
      }
      if (!__any_sync(full_warp_mask, waiting)) break;
      if constexpr (PollDelayNs > 0) {
        if (sleeps) __nanosleep(PollDelayNs);
      }
    }
    partial_result<T> mine{T{}, false};  // this lane's tiles, from its last prefix on
    bool has_prefix = false;
#pragma unroll
    for (int j = 0; j < TilesPerLane; ++j) {
      if (first + j < 0) continue;
      if (statuses[j] == status_prefix) {
        mine = partial_result<T>{values[j], true};
        has_prefix = true;
      } else {
        mine = fold(mine, partial_result<T>{values[j], true});
      }
    }
    const unsigned prefixes = __ballot_sync(full_warp_mask, has_prefix);
    const int nearest = prefixes == 0 ? 0 : warp_threads - 1 - __clz(prefixes);
    // Suffix scan: lane l gets mine_l ⊕ mine_{l+1} ⊕ ... ⊕ mine_31, in order.
    partial_result<T> suffix = mine;
#pragma unroll
    for (int offset = 1; offset < warp_threads; offset *= 2) {
      partial_result<T> upper;
      upper.value = shuffle_down(suffix.value, static_cast<unsigned>(offset));
      upper.valid = shuffle_down(suffix.valid, static_cast<unsigned>(offset));
      if (lane + offset < warp_threads) suffix = fold(suffix, upper);
    }
    partial_result<T> window;
    window.value = shuffle_index(suffix.value, nearest);
    window.valid = shuffle_index(suffix.valid, nearest);
    later = fold(window, later);
    if (prefixes != 0) return later.value;
    end -= window_tiles;
  }
}

/// The tile this block scans: its block index (`Policy::tiles_in_block_order`) or
/// the next index of the atomic counter, shared through `shared_tile`. Every thread
/// of the block calls it (it contains a barrier).
template <class Policy, class T>
__device__ std::uint32_t take_tile([[maybe_unused]] const tile_states<T>& states, [[maybe_unused]] std::uint32_t tiles,
                                   [[maybe_unused]] std::uint32_t& shared_tile) {
  if constexpr (Policy::tiles_in_block_order) {
    return blockIdx.x;
  } else {
    if (threadIdx.x == 0) shared_tile = tiles == 1 ? 0u : atomicAdd(states.next_tile, 1u);
    __syncthreads();
    return shared_tile;
  }
}

/// Copies the vector at `src` (global memory) to `dst` (shared memory) without
/// passing through registers where `cp.async` moves its size (4, 8 or 16 bytes)
/// and the vector is aligned to its size (not a lone 8-byte struct of 4-byte
/// alignment: `moves_as_raw_v`); the caller commits and waits
/// (`__pipeline_commit`, `__pipeline_wait_prior`).
template <int N, class T>
__device__ void stage_vector(aligned_vector<T, N>* dst, const T* src) {
  constexpr std::size_t bytes = sizeof(aligned_vector<T, N>);
  if constexpr ((bytes == 4 || bytes == 8 || bytes == 16) && moves_as_raw_v<T, N>) {
    __pipeline_memcpy_async(dst, src, bytes);
  } else {
    *dst = load_vector<N>(src);
  }
}

/// One thread scans the scalars `[first, last)` of `in` into `out` from `prefix`
/// (the head before the first vector, or the tail after the last); returns the
/// prefix through them.
template <scan_kind Kind, class In, class Out, class Op>
__device__ partial_result<Out> scan_scalars(const In* in, Out* out, std::uint64_t first, std::uint64_t last,
                                            partial_result<Out> prefix, Op& op) {
  for (std::uint64_t i = first; i < last; ++i) {
    const Out x = convert_to<Out>(in[i]);
    if constexpr (Kind == scan_kind::exclusive) out[i] = prefix.value;
    prefix.fold(x, op);
    if constexpr (Kind == scan_kind::inclusive) out[i] = prefix.value;
  }
  return prefix;
}

/// Warp 0 of every tile but the first, once it has the tile's total: publishes
/// the total, sleeps `first_look_delay_ns` in grids of at least 512 tiles (where
/// its neighbours are still loading), looks back, and publishes the tile's
/// inclusive prefix (the last tile publishes nothing: no tile reads it). Returns
/// the tile's exclusive prefix in every lane.
template <class Policy, class T, class Op>
__device__ T resolve_tile_prefix(const tile_states<T>& states, std::uint32_t tile, std::uint32_t tiles,
                                 const T& tile_total, Op& op) {
  const bool last_tile = tile == tiles - 1;
  const int lane = lane_id();
  if (lane == 0 && !last_tile) states.publish(tile, status_total, tile_total);
  if constexpr (Policy::first_look_delay_ns > 0) {
    if (tiles >= 512) __nanosleep(Policy::first_look_delay_ns);
  }
  // Signed, because the minimum may be 0 (a comparison that EDG calls pointless).
  const bool sleeps = std::int64_t{tiles} >= std::int64_t{Policy::poll_delay_min_tiles};
  const T prefix = look_back<Policy::look_back_tiles_per_lane, Policy::poll_delay_ns>(states, tile, op, sleeps);
  if (lane == 0 && !last_tile) states.publish(tile, status_prefix, op(prefix, tile_total));
  return prefix;
}

/// The shared memory of the scan kernel: the warp totals of the tile in order
/// (vector-major), then their exclusive prefixes, and values thread 0 shares.
template <class T, int Segments>
struct scan_tile_storage {
  partial_result<T> segment_prefix[Segments];
  T segment_total[Segments];
  partial_result<T> tile_prefix;
  partial_result<T> tail_prefix;
  std::uint32_t tile;
};

/// One tile of the scan. See the file's comment for the steps.
template <class Policy, int N, scan_kind Kind, class In, class Out, class Op>
__global__ void __launch_bounds__(Policy::block_threads)
    scan_kernel(vector_split<N> split, const In* in, Out* out, Out init, Op op, tile_states<Out> states,
                std::uint32_t tiles) {
  using tile_t = block_striped_tile<Policy::block_threads, Policy::vectors_in_flight>;
  constexpr int vectors = Policy::vectors_in_flight;
  constexpr int warps = Policy::block_threads / warp_threads;
  constexpr int segments = vectors * warps;
  static_assert(segments <= warp_threads || segments % warp_threads == 0,
                "scan_policy: vectors_in_flight × warps must be at most 32 or a multiple of 32");
  constexpr int per_lane = segments <= warp_threads ? 1 : segments / warp_threads;
  __shared__ scan_tile_storage<Out, segments> shared;
  extern __shared__ __align__(16) unsigned char scan_staged_raw[];
  auto* const staged_vectors = reinterpret_cast<aligned_vector<In, N>*>(scan_staged_raw);

  allow_dependent_launch();
  wait_for_prior_grids();
  const int lane = lane_id();
  const int warp = static_cast<int>(threadIdx.x) / warp_threads;
  const std::uint32_t tile = take_tile<Policy>(states, tiles, shared.tile);
  const bool last_tile = tile == tiles - 1;
  const std::uint64_t first_vector = std::uint64_t{tile} * tile_t::vectors;
  const std::uint64_t left = split.vectors - first_vector;
  const std::uint64_t valid = left < tile_t::vectors ? left : tile_t::vectors;

  // 1. Copy the tile into shared memory, each thread its own vectors' slots (so no
  //    barrier is needed before it reads them back), without passing through
  //    registers: while the tile waits for its look-back it holds shared memory
  //    only, and an SM keeps more tiles in flight than its registers could.
  aligned_vector<In, N>* const staged = staged_vectors + threadIdx.x;  // vector u at staged[u * block_threads]
  const In* const tile_in = split.body(in) + first_vector * N;
#pragma unroll
  for (int u = 0; u < vectors; ++u) {
    if (tile_t::is_valid(u, valid)) stage_vector<N>(staged + u * Policy::block_threads, tile_in + tile_t::index(u) * N);
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  const auto staged_vector = [&](int u) {
    aligned_vector<In, N> raw{};
    if (tile_t::is_valid(u, valid)) raw = staged[u * Policy::block_threads];
    return raw;
  };

  // 2. Each warp scans its lanes' vector totals; lane 31 holds the warp's total.
  Out lane_inclusive[vectors];
#pragma unroll
  for (int u = 0; u < vectors; ++u) {
    const aligned_vector<In, N> raw = staged_vector(u);
    Out vector_total = convert_to<Out>(raw[0]);
#pragma unroll
    for (int j = 1; j < N; ++j) vector_total = op(vector_total, convert_to<Out>(raw[j]));
    Out warp_total;
    lane_inclusive[u] = warp_scan<Out>().inclusive_scan(vector_total, op, warp_total);
    if (lane == 0) shared.segment_total[u * warps + warp] = warp_total;
  }
  __syncthreads();

  // 3. Warp 0: scan the segment totals (each lane folds `per_lane` neighbours
  //    first), find the tile's prefix, publish.
  if (warp == 0) {
    Out in_lane[per_lane];  // inclusive over this lane's segments
    const int first_segment = lane * per_lane;
#pragma unroll
    for (int j = 0; j < per_lane; ++j) {
      in_lane[j] = shared.segment_total[first_segment + j < segments ? first_segment + j : 0];
      if (j > 0) in_lane[j] = op(in_lane[j - 1], in_lane[j]);
    }
    const Out lanes_inclusive = warp_scan<Out>().inclusive_scan(in_lane[per_lane - 1], op);
    const Out tile_total = shuffle_index(lanes_inclusive, segments / per_lane - 1);
    partial_result<Out> prefix{init, Kind == scan_kind::exclusive};
    if (tile == 0) {
      if (lane == 0) {  // the scalar head comes first
        prefix = scan_scalars<Kind>(in, out, 0, split.head, prefix, op);
        if (!last_tile) {
          states.publish(0, status_prefix, prefix.valid ? op(prefix.value, tile_total) : tile_total);
        }
      }
      prefix.valid = shuffle_index(prefix.valid, 0);
      prefix.value = shuffle_index(prefix.value, 0);
    } else {
      prefix = partial_result<Out>{resolve_tile_prefix<Policy>(states, tile, tiles, tile_total, op), true};
    }
    // The prefix of each segment: the tile's, the lanes' before it, this lane's before it.
    const Out lanes_exclusive = shuffle_up(lanes_inclusive, 1u);
    if (lane > 0) prefix = partial_result_op<Op>{op}(prefix, partial_result<Out>{lanes_exclusive, true});
    if (lane == 0) shared.tile_prefix = prefix;
#pragma unroll
    for (int j = 0; j < per_lane; ++j) {
      if (first_segment + j < segments) {
        shared.segment_prefix[first_segment + j] =
            j == 0 ? prefix : partial_result_op<Op>{op}(prefix, partial_result<Out>{in_lane[j - 1], true});
      }
    }
  }
  __syncthreads();

  // 4. Each element: its segment's prefix, the lanes before it, the elements before
  //    it (the vector read again from shared memory), stored as soon as scanned.
  Out* const tile_out = split.body(out) + first_vector * N;
  partial_result<Out> vector_inclusive[vectors];  // through the last element of each vector
#pragma unroll
  for (int u = 0; u < vectors; ++u) {
    partial_result<Out> running = shared.segment_prefix[u * warps + warp];
    const Out lower_lanes = shuffle_up(lane_inclusive[u], 1u);
    if (lane > 0) running.fold(lower_lanes, op);
    const aligned_vector<In, N> raw = staged_vector(u);
    aligned_vector<Out, N> result;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      if constexpr (Kind == scan_kind::exclusive) result[j] = running.value;
      running.fold(convert_to<Out>(raw[j]), op);
      if constexpr (Kind == scan_kind::inclusive) result[j] = running.value;
    }
    vector_inclusive[u] = running;
    if (tile_t::is_valid(u, valid)) store_vector(tile_out + tile_t::index(u) * N, result);
  }

  // 5. The last tile's thread 0 scans the scalar tail after the last whole vector,
  //    from the inclusive value of the last whole vector (or the head's, if none).
  if (last_tile && split.tail_begin() < split.n) {
    if (valid == 0 && threadIdx.x == 0) shared.tail_prefix = shared.tile_prefix;
#pragma unroll
    for (int u = 0; u < vectors; ++u) {
      if (valid > 0 && tile_t::index(u) == valid - 1) shared.tail_prefix = vector_inclusive[u];
    }
    __syncthreads();
    if (threadIdx.x == 0) scan_scalars<Kind>(in, out, split.tail_begin(), split.n, shared.tail_prefix, op);
  }
}

/// Where the blocked arrangement keeps a tile in shared memory, in vector slots:
/// thread t owns the tile's vectors `t × VectorsPerThread + u` and keeps them in
/// slots `t × stride + u`, `stride` being `VectorsPerThread` rounded up to an odd
/// number, so that a warp reading its lanes' u-th vectors (t × stride + u) touches
/// every bank once for 4-, 8- and 16-byte vectors; a warp writing 32 consecutive
/// vectors (striped) touches each bank at most twice.
template <int BlockThreads, int VectorsPerThread>
struct blocked_scan_layout {
  static_assert(BlockThreads > 0 && BlockThreads % warp_threads == 0 && VectorsPerThread > 0,
                "a blocked scan tile is whole warps of at least one vector each");
  /// Slots between the first vectors of two consecutive threads.
  static constexpr int stride = VectorsPerThread | 1;
  /// Slots of the whole tile, unused ones included.
  static constexpr int slots = BlockThreads * stride;
  /// The slot of the tile's vector `v`.
  [[nodiscard]] __host__ __device__ static constexpr int slot(int v) noexcept {
    return v / VectorsPerThread * stride + v % VectorsPerThread;
  }
};

/// The staged tile of the blocked arrangement: the input's vectors, and the
/// scanned output's in the same slots (the same bytes when the two vectors have
/// the same size: each thread overwrites only slots it has read).
template <class Policy, int N, class In, class Out>
struct blocked_scan_staging {
  using layout = blocked_scan_layout<Policy::block_threads, Policy::vectors_in_flight>;
  static constexpr bool in_place = sizeof(aligned_vector<In, N>) == sizeof(aligned_vector<Out, N>);
  /// Byte offset of the output slots.
  static constexpr std::size_t out_offset =
      in_place ? 0 : round_up<std::size_t>(std::size_t{layout::slots} * sizeof(aligned_vector<In, N>), 16);
  /// Dynamic shared memory of the kernel.
  static constexpr std::size_t bytes = out_offset + std::size_t{layout::slots} * sizeof(aligned_vector<Out, N>);
};

/// The shared memory of the blocked scan kernel besides the staged tile.
template <class T, int Warps>
struct blocked_scan_storage {
  T warp_total[Warps];
  partial_result<T> tile_prefix;
  partial_result<T> tail_prefix;
  std::uint32_t tile;
};

/// One tile of the scan, blocked arrangement: the tile's critical path (loaded,
/// total published, prefix published) holds one warp scan and one barrier, and the
/// inclusive prefix goes out as soon as the look-back returns.
template <class Policy, int N, scan_kind Kind, class In, class Out, class Op>
__global__ void __launch_bounds__(Policy::block_threads)
    blocked_scan_kernel(vector_split<N> split, const In* in, Out* out, Out init, Op op, tile_states<Out> states,
                        std::uint32_t tiles) {
  using staging = blocked_scan_staging<Policy, N, In, Out>;
  using layout = typename staging::layout;
  using in_vector = aligned_vector<In, N>;
  using out_vector = aligned_vector<Out, N>;
  constexpr int vectors = Policy::vectors_in_flight;
  constexpr int warps = Policy::block_threads / warp_threads;
  constexpr int tile_vectors = Policy::block_threads * vectors;
  __shared__ blocked_scan_storage<Out, warps> shared;
  extern __shared__ __align__(16) unsigned char scan_staged_raw[];
  auto* const staged_in = reinterpret_cast<in_vector*>(scan_staged_raw);
  auto* const staged_out = reinterpret_cast<out_vector*>(scan_staged_raw + staging::out_offset);

  allow_dependent_launch();
  wait_for_prior_grids();
  const int lane = lane_id();
  const int warp = static_cast<int>(threadIdx.x) / warp_threads;
  const std::uint32_t tile = take_tile<Policy>(states, tiles, shared.tile);
  const bool last_tile = tile == tiles - 1;
  const std::uint64_t first_vector = std::uint64_t{tile} * tile_vectors;
  const std::uint64_t left = split.vectors - first_vector;
  const int valid = static_cast<int>(left < tile_vectors ? left : tile_vectors);

  // 1. Warp w copies the tile's vectors [w × 32 × vectors, (w + 1) × 32 × vectors),
  //    32 consecutive ones per instruction, into their owners' slots: its own lanes',
  //    so a warp barrier is enough before they read them.
  const int warp_first = warp * warp_threads * vectors;
  const In* const tile_in = split.body(in) + first_vector * N;
#pragma unroll
  for (int j = 0; j < vectors; ++j) {
    const int v = warp_first + j * warp_threads + lane;
    if (v < valid) stage_vector<N>(staged_in + layout::slot(v), tile_in + static_cast<std::uint64_t>(v) * N);
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncwarp();
  const int own_first = static_cast<int>(threadIdx.x) * vectors;  // the tile's index of this thread's first vector
  const int own_slot = static_cast<int>(threadIdx.x) * layout::stride;
  const auto own_vector = [&](int u) {  // past the end of the last tile: value-initialised
    in_vector raw{};
    if (own_first + u < valid) raw = staged_in[own_slot + u];
    return raw;
  };

  // 2. This thread's total: each vector's, then neighbours pairwise (order kept, so
  //    associativity is enough; log2(vectors) steps deep instead of vectors × N).
  //    Then one block scan of the threads' totals.
  Out totals[vectors];
#pragma unroll
  for (int u = 0; u < vectors; ++u) {
    const in_vector raw = own_vector(u);
    totals[u] = convert_to<Out>(raw[0]);
#pragma unroll
    for (int k = 1; k < N; ++k) totals[u] = op(totals[u], convert_to<Out>(raw[k]));
  }
#pragma unroll
  for (int step = 1; step < vectors; step *= 2) {
#pragma unroll
    for (int u = 0; u + step < vectors; u += 2 * step) totals[u] = op(totals[u], totals[u + step]);
  }
  const Out lane_inclusive = warp_scan<Out>().inclusive_scan(totals[0], op);
  const Out lower_lanes = shuffle_up(lane_inclusive, 1u);
  if (lane == warp_threads - 1) shared.warp_total[warp] = lane_inclusive;
  __syncthreads();

  // 3. Warp 0 publishes the tile's total, looks back and publishes its inclusive
  //    prefix (tile 0: scans the scalar head first); the other warps wait.
  if (warp == 0) {
    Out tile_total = shared.warp_total[0];
#pragma unroll
    for (int w = 1; w < warps; ++w) tile_total = op(tile_total, shared.warp_total[w]);
    partial_result<Out> prefix{init, Kind == scan_kind::exclusive};
    if (tile == 0) {
      if (lane == 0) {
        prefix = scan_scalars<Kind>(in, out, 0, split.head, prefix, op);
        if (!last_tile) states.publish(0, status_prefix, prefix.valid ? op(prefix.value, tile_total) : tile_total);
      }
    } else {
      prefix = partial_result<Out>{resolve_tile_prefix<Policy>(states, tile, tiles, tile_total, op), true};
    }
    if (lane == 0) shared.tile_prefix = prefix;
  }
  partial_result<Out> within_tile{init, false};  // the warps before this thread's, then its lanes before it
#pragma unroll
  for (int w = 0; w < warps - 1; ++w) {
    if (w < warp) within_tile.fold(shared.warp_total[w], op);
  }
  if (lane > 0) within_tile.fold(lower_lanes, op);
  __syncthreads();

  // 4. Each thread scans its vectors again, from shared memory and its prefix, into
  //    the same slots; each warp stores its 32 × vectors consecutive vectors striped.
  partial_result<Out> running = partial_result_op<Op>{op}(shared.tile_prefix, within_tile);
  const int tail_vector = last_tile && split.tail_begin() < split.n ? valid - 1 - own_first : -1;
#pragma unroll
  for (int u = 0; u < vectors; ++u) {
    const in_vector raw = own_vector(u);
    out_vector result;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if constexpr (Kind == scan_kind::exclusive) result[k] = running.value;
      running.fold(convert_to<Out>(raw[k]), op);
      if constexpr (Kind == scan_kind::inclusive) result[k] = running.value;
    }
    staged_out[own_slot + u] = result;
    if (u == tail_vector) shared.tail_prefix = running;  // through the last whole vector
  }
  __syncwarp();
  Out* const tile_out = split.body(out) + first_vector * N;
#pragma unroll
  for (int j = 0; j < vectors; ++j) {
    const int v = warp_first + j * warp_threads + lane;
    if (v < valid) store_vector(tile_out + static_cast<std::uint64_t>(v) * N, staged_out[layout::slot(v)]);
  }

  // 5. The last tile's thread 0 scans the scalar tail.
  if (last_tile && split.tail_begin() < split.n) {
    if (valid == 0 && threadIdx.x == 0) shared.tail_prefix = shared.tile_prefix;
    __syncthreads();
    if (threadIdx.x == 0) scan_scalars<Kind>(in, out, split.tail_begin(), split.n, shared.tail_prefix, op);
  }
}

/// Bytes of workspace for `tiles` tile states of `T`, each array on a 16-byte boundary.
template <class T>
std::size_t tile_states_bytes(std::uint64_t tiles) {
  const std::size_t n = static_cast<std::size_t>(tiles);
  const std::size_t arrays = tile_states<T>::packed ? round_up<std::size_t>(n * sizeof(unsigned long long), 16)
                                                    : round_up<std::size_t>(n * sizeof(unsigned), 16) +
                                                          2 * round_up<std::size_t>(n * sizeof(T), 16);
  return 16 + arrays + 16;  // alignment slack, the arrays, the tile counter
}

template <class T>
tile_states<T> carve_tile_states(std::byte* workspace, std::uint64_t tiles) {
  const std::size_t n = static_cast<std::size_t>(tiles);
  auto at = round_up<std::uintptr_t>(reinterpret_cast<std::uintptr_t>(workspace), 16);
  tile_states<T> states{};
  if constexpr (tile_states<T>::packed) {
    states.words = reinterpret_cast<unsigned long long*>(at);
    at += round_up<std::size_t>(n * sizeof(unsigned long long), 16);
  } else {
    states.status = reinterpret_cast<unsigned*>(at);
    at += round_up<std::size_t>(n * sizeof(unsigned), 16);
    states.totals = reinterpret_cast<T*>(at);
    at += round_up<std::size_t>(n * sizeof(T), 16);
    states.prefixes = reinterpret_cast<T*>(at);
    at += round_up<std::size_t>(n * sizeof(T), 16);
  }
  states.next_tile = reinterpret_cast<unsigned*>(at);
  return states;
}

/// The most shared memory a scan tile stages before `fitted_scan_policy` lowers its
/// vectors per thread: two tiles a SM on sm_90 (227 KiB), and what the default's tile
/// of 6 vectors took for 128-byte elements before it grew to 12 and then 16.
inline constexpr std::size_t scan_staging_budget_bytes = std::size_t{96} * 1024;

/// `Policy` with `Vectors` vectors per thread.
template <class Policy, int Vectors>
struct scan_policy_with_vectors : Policy {
  static constexpr int vectors_in_flight = Vectors;
};

/// Bytes a tile of `Policy` with `vectors` per thread stages, at most, for any alignment:
/// a vector of `In` or `Out` holds at most `max(sizeof, vector_bytes)` bytes.
template <class Policy, class In, class Out>
constexpr std::size_t scan_staging_bound(int vectors) {
  const std::size_t in_bytes = std::max<std::size_t>(sizeof(In), Policy::vector_bytes);
  const std::size_t out_bytes = std::max<std::size_t>(sizeof(Out), Policy::vector_bytes);
  if constexpr (Policy::tile_arrangement == scan_tile_arrangement::blocked) {
    const std::size_t slots = std::size_t{Policy::block_threads} * static_cast<std::size_t>(vectors | 1);
    return (sizeof(In) == sizeof(Out) ? 0 : slots * in_bytes + 16) + slots * out_bytes;
  } else {
    return std::size_t{Policy::block_threads} * static_cast<std::size_t>(vectors) * in_bytes;
  }
}

/// Whether the striped kernel takes `vectors` per thread with `Policy`'s warps: its
/// segments (vectors × warps) must be at most 32 or a multiple of 32.
template <class Policy>
constexpr bool striped_segments_fit(int vectors) {
  const int segments = vectors * (Policy::block_threads / 32);
  return segments <= 32 || segments % 32 == 0;
}

/// `Policy`'s vectors per thread, lowered for large elements until the tile's staging
/// fits `scan_staging_budget_bytes` (never below 1), and for the striped arrangement to a
/// count its kernel takes.
template <class Policy, class In, class Out>
constexpr int fitted_scan_vectors() {
  int vectors = Policy::vectors_in_flight;
  if (scan_staging_bound<Policy, In, Out>(vectors) <= scan_staging_budget_bytes) return vectors;
  while (vectors > 1 &&
         (scan_staging_bound<Policy, In, Out>(vectors) > scan_staging_budget_bytes ||
          (Policy::tile_arrangement == scan_tile_arrangement::striped && !striped_segments_fit<Policy>(vectors)))) {
    --vectors;
  }
  return vectors;
}

/// `Policy` itself where its tile fits the budget (every element of up to 16 bytes with the
/// default), else `Policy` with fewer vectors per thread: so that elements of a few hundred
/// bytes still scan within the SM's shared memory.
template <class Policy, class In, class Out>
using fitted_scan_policy =
    std::conditional_t<fitted_scan_vectors<Policy, In, Out>() == Policy::vectors_in_flight, Policy,
                       scan_policy_with_vectors<Policy, fitted_scan_vectors<Policy, In, Out>()>>;

/// Tiles of the vector path for `n` elements: the most any alignment needs.
template <class Policy>
std::uint64_t scan_tile_count(std::uint64_t n, int vector_elements) {
  const std::uint64_t tile_elements =
      std::uint64_t{Policy::block_threads} * Policy::vectors_in_flight * static_cast<std::uint64_t>(vector_elements);
  return std::max<std::uint64_t>(1, ceil_div(n, tile_elements));
}

/// Resets the tile states and enqueues one block per tile.
template <class Policy, int N, scan_kind Kind, class In, class Out, class Op>
void enqueue_scan(vector_split<N> split, const In* in, Out* out, Out init, Op op, std::byte* workspace,
                  cuda::stream_ref s) {
  constexpr std::uint64_t tile_vectors = std::uint64_t{Policy::block_threads} * Policy::vectors_in_flight;
  const std::uint64_t tiles = std::max<std::uint64_t>(1, ceil_div(split.vectors, tile_vectors));
  FOUNDRY_EXPECTS(tiles <= max_grid_x, "scan input is too large: " + std::to_string(split.n) + " elements");
  const tile_states<Out> states = carve_tile_states<Out>(workspace, tiles);
  if (tiles > 1) {  // one tile publishes nothing, reads nothing, and takes index 0 from its block index
    launch_config reset = make_launch_config_1d(tiles, 256, resident_grid_blocks(4, s));
    reset.dependency = launch_dependency::programmatic;
    launch(s, reset, reset_tile_states_kernel<Out>, states, static_cast<std::uint32_t>(tiles));
  }
  launch_config c;
  c.grid = dim3(static_cast<std::uint32_t>(tiles), 1, 1);
  c.block = dim3(Policy::block_threads, 1, 1);
  c.dependency = launch_dependency::programmatic;
  if constexpr (Policy::tile_arrangement == scan_tile_arrangement::blocked) {
    c.dynamic_shared_bytes = blocked_scan_staging<Policy, N, In, Out>::bytes;
    launch(s, c, blocked_scan_kernel<Policy, N, Kind, In, Out, Op>, split, in, out, init, op, states,
           static_cast<std::uint32_t>(tiles));
  } else {
    c.dynamic_shared_bytes =
        std::size_t{Policy::block_threads} * Policy::vectors_in_flight * sizeof(aligned_vector<In, N>);
    launch(s, c, scan_kernel<Policy, N, Kind, In, Out, Op>, split, in, out, init, op, states,
           static_cast<std::uint32_t>(tiles));
  }
}

template <class RequestedPolicy, scan_kind Kind, class In, std::size_t InExtent, class Out, std::size_t OutExtent,
          class Op>
void scan(cuda::std::span<In, InExtent> in, cuda::std::span<Out, OutExtent> out, Out init, Op op, cuda::stream_ref s) {
  using T = std::remove_const_t<In>;
  using Policy = fitted_scan_policy<RequestedPolicy, T, Out>;
  static_assert(!std::is_const_v<Out>, "a scan writes its output: the output span must not be const");
  static_assert(std::is_trivially_copyable_v<Out>, "a scan's output type moves through shuffles: trivially copyable");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  expect_device_span(in, "scan input");
  expect_device_span(out, "scan output");
  expect_same_size(in, out.size(), "scan input");
  expect_no_forbidden_overlap(in, out, overlap_rule::same_or_disjoint, "scan input and output");
  if (in.empty()) return;
  const int device = device_for_checks(s);
  expect_device_accessible(in, device, "scan input");
  expect_device_accessible(out, device, "scan output");
  constexpr int n_vector = common_vector_elements_v<Policy::vector_bytes, T, Out>;
  const std::uint64_t n = in.size();
  device_buffer<std::byte> workspace(tile_states_bytes<Out>(scan_tile_count<Policy>(n, 1)), s);
  const T* src = in.data();
  if constexpr (n_vector > 1) {
    if (same_vector_phase<n_vector>(src, out.data())) {
      enqueue_scan<Policy, n_vector, Kind>(split_for_vectors<n_vector>(src, n), src, out.data(), init, op,
                                           workspace.data(), s);
      return;
    }
  }
  enqueue_scan<Policy, 1, Kind>(split_for_vectors<1>(src, n), src, out.data(), init, op, workspace.data(), s);
}

}  // namespace detail

/// `out[i] = in[0] ⊕ ... ⊕ in[i]` for every i, with `op` associative (not
/// necessarily commutative), accumulated in the output's element type. `out` may
/// be `in` (in place). Asynchronous on `s`; allocates its workspace (one state per
/// tile) stream-ordered on `s`.
/// Throws `std::invalid_argument` if the sizes differ, a span with elements has a
/// null pointer, or the spans overlap other than exactly; `cuda_error` if an
/// allocation or launch fails.
template <class Policy = scan_policy, class In, std::size_t InExtent, class Out, std::size_t OutExtent, class Op>
void inclusive_scan(cuda::std::span<In, InExtent> in, cuda::std::span<Out, OutExtent> out, Op op, cuda::stream_ref s) {
  detail::scan<Policy, detail::scan_kind::inclusive>(in, out, Out{}, op, s);
}

/// `out[0] = init`, `out[i] = init ⊕ in[0] ⊕ ... ⊕ in[i-1]`. Otherwise as `inclusive_scan`.
template <class Policy = scan_policy, class In, std::size_t InExtent, class Out, std::size_t OutExtent, class Op>
void exclusive_scan(cuda::std::span<In, InExtent> in, cuda::std::span<Out, OutExtent> out,
                    cuda::std::type_identity_t<Out> init, Op op, cuda::stream_ref s) {
  detail::scan<Policy, detail::scan_kind::exclusive>(in, out, init, op, s);
}

/// `inclusive_scan` with `cuda::std::plus`.
template <class Policy = scan_policy, class In, std::size_t InExtent, class Out, std::size_t OutExtent>
void inclusive_sum(cuda::std::span<In, InExtent> in, cuda::std::span<Out, OutExtent> out, cuda::stream_ref s) {
  foundry::inclusive_scan<Policy>(in, out, cuda::std::plus<Out>{}, s);
}

/// `exclusive_scan` with `cuda::std::plus` from 0.
template <class Policy = scan_policy, class In, std::size_t InExtent, class Out, std::size_t OutExtent>
void exclusive_sum(cuda::std::span<In, InExtent> in, cuda::std::span<Out, OutExtent> out, cuda::stream_ref s) {
  foundry::exclusive_scan<Policy>(in, out, Out{0}, cuda::std::plus<Out>{}, s);
}

}  // namespace foundry
