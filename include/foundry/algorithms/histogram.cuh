#pragma once
/// \file
/// Histogram of integer or floating-point samples into `N` even bins over
/// `[lower, upper)`, on an explicit stream, with the counts left in device memory:
///
///     // 256 bins over the byte values, 32-bit counts
///     foundry::histogram_even(bytes.span(), counts.span(), 0, 256, stream);
///     // 4096 bins over [-1, 1), 64-bit counts
///     foundry::histogram_even(x.span(), counts64.span(), -1.0f, 1.0f, stream);
///
/// The number of bins `N` is `counts.size()`. Counts are `std::uint32_t` or
/// `std::uint64_t`, the caller's choice: a 32-bit count wraps past 2^32 - 1
/// samples in one bin.
///
/// **The definition** (the CPU references of the tests compute exactly this).
/// Let `C = histogram_compute_t<Sample>` (below) and, once on the host,
/// `scale = C(N) / (upper - lower)`, rounded once in `C`. A sample `x` is first
/// converted to `c = C(x)`. It is counted when `lower <= c < upper` (so NaN and
/// infinities outside the range are not), in bin
///
///     bin(x) = min(N - 1, trunc((c - lower) * scale))
///
/// with the subtraction and the product each rounded to nearest in `C`. The
/// clamp catches a sample just below `upper` whose product rounds up to `N`; no
/// in-range sample lands outside [0, N) through rounding.
///
/// Why these types for `C` (`float` for 8- and 16-bit integers and `float`,
/// `double` for 32- and 64-bit integers and `double`): for 8- and 16-bit
/// integers, every sample, every valid bound and every difference of two of
/// them (below 2^17 in magnitude) is an integer that `float` holds exactly, so
/// the product is the only rounding, the same one on host and device (IEEE
/// round to nearest; a subtraction then a product cannot be contracted into an
/// FMA). `float` samples are binned in their own precision. 32-bit integers
/// need `double` for their differences (up to 2^32); 64-bit integers are rounded
/// to `double` first (exact below 2^53 in magnitude), and the definition
/// applies to the rounded value.
///
/// Asynchronous on `s`. It overwrites `counts`: a small kernel zeroes them on `s`
/// first (a kernel rather than `cudaMemsetAsync`, so that the histogram kernel
/// is its programmatic dependent and starts while it runs). An empty input
/// leaves the counts zero. Counting uses atomics, but integer counts are exact
/// and do not depend on their order: the result is the same on every run.
///
/// Design (three layers: host call -> `detail::launch_histogram_even` -> kernel):
///  1. A persistent grid (`blocks_per_sm` × SMs, fewer per SM when their
///     histograms do not fit an SM's shared memory that many times) walks tiles of
///     16-byte vectors of the samples (`split_for_vectors`, `block_striped_tile`:
///     `vectors_in_flight` vectors per thread, all issued before any is used);
///     the scalar head and tail go to the grid's first threads.
///  2. Each block counts into its own histogram of 32-bit counters in dynamic
///     shared memory (`N` × 4 bytes). Each thread keeps a run of equal bins in
///     registers and adds the run with one shared `atomicAdd` when the bin
///     changes, so a sample stream that stays in one bin costs one atomic per
///     thread instead of one per sample.
///  3. Each block adds its non-zero bins into `counts`, one global `atomicAdd` each.
///  8-bit samples take a kernel of their own (`histogram_bytes_kernel`): lane-private
///  counts of the 256 byte values, folded per block and mapped to bins at the end.
///  On the device, float binning uses no conversion instructions (`detail::even_bins`:
///  exact bit-pattern conversions, so the bins are those of the definition).
///  When `N` × 4 bytes exceed the per-block shared memory of the device (58112
///  bins on the H200), or one block could see 2^32 samples, the same kernel
///  counts with global `atomicAdd`s into `counts` directly (still one per run):
///  correct, and slower on inputs that spread over many bins.

#include <foundry/algorithms/detail/checks.cuh>
#include <foundry/block/block_load.cuh>
#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/launch/dependent_launch.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_bounds.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/thread/vector.cuh>
#include <foundry/thread/vector_split.cuh>
#include <foundry/util/nvtx.cuh>
#include <foundry/warp/shuffle.cuh>

#include <cuda/std/limits>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace foundry {

/// Launch policy of `histogram_even`. Override by deriving and passing it as the
/// first template argument: `foundry::histogram_even<my_policy>(...)`.
struct histogram_policy {
  /// Threads per block. Not yet measured on the H200 (256 is the shape the
  /// reductions measured best; figures will be added after the device run).
  static constexpr int block_threads = 256;
  /// 16-byte vectors each thread loads before it counts any (4 × 16 bytes in
  /// flight, 64 samples of 8 bits). Not yet measured on the H200.
  static constexpr int vectors_in_flight = 4;
  /// Grid blocks (= shared-memory histograms) per SM, at most: fewer when their
  /// histograms do not fit the SM's shared memory. The grid is persistent, so the
  /// kernel's `__launch_bounds__` asks for this residency too. Not yet measured on the H200.
  static constexpr int blocks_per_sm = 4;
  /// 8-bit samples (their own kernel, `detail::histogram_bytes_kernel`): threads per
  /// block; each warp owns 16 KiB of lane-private counters.
  static constexpr int byte_block_threads = 128;
  /// 8-bit samples: grid blocks per SM (3 × 65 KiB of shared memory).
  static constexpr int byte_blocks_per_sm = 3;
  /// 8-bit samples: 16-byte vectors each thread loads before it counts any. Shared
  /// memory holds the byte kernel to 12 warps a SM, so the bytes in flight come from
  /// here: with 4 (24 KiB in flight a SM) both the uniform and the one-value input ran
  /// at 2.2 TB/s on the H200, bound by latency, not by the atomics. On an H100 (session
  /// 10, 2^26 and 2^28 bytes) 8 was the fastest of 4, 8, 12, 16 and 24 on both inputs:
  /// uniform 36.6 / 124 us (4: 37.2 / 131, 16: 41.2 / 133), one value 28.1 / 94.0 us;
  /// 24 loses occupancy to registers (bench_histogram's `foundry_v*` rows).
  static constexpr int byte_vectors_in_flight = 8;
  /// 8-bit samples: tiles a block counts between two folds of its lane-private
  /// 16-bit counters, at most; the kernel caps it below where a counter could overflow
  /// ((65535 - 16 v - 2) / 16 v tiles for v vectors a thread: 510 with 8).
  static constexpr std::uint64_t byte_tiles_per_fold = 1022;
};

/// The type in which `histogram_even` bins a `Sample`, and the type of its bounds:
/// `float` for 8- and 16-bit integers and `float`, `double` for 32- and 64-bit
/// integers and `double` (the file comment says why).
template <class Sample>
using histogram_compute_t =
    std::conditional_t<std::is_floating_point_v<std::remove_const_t<Sample>>, std::remove_const_t<Sample>,
                       std::conditional_t<(sizeof(Sample) <= 2), float, double>>;

/// The most bins `histogram_even` takes for a `Sample`: 2^23 when binned in `float`
/// (below 2^23 the kernel truncates a float with an exact FADD), 2^31 in `double`.
template <class Sample>
inline constexpr std::size_t histogram_max_bins =
    std::is_same_v<histogram_compute_t<Sample>, float> ? std::size_t{1} << 23 : std::size_t{1} << 31;

namespace detail {

/// A sample that falls in no bin.
inline constexpr std::uint32_t no_bin = 0xFFFFFFFFu;

/// The binning of `histogram_even` (the definition in the file comment), shared by
/// the kernel and its naive twin. Built on the host by `make_even_bins`.
template <class Sample>
struct even_bins {
  using compute_type = histogram_compute_t<Sample>;
  compute_type lower;
  compute_type upper;
  compute_type scale;   ///< C(count) / (upper - lower), rounded once in C
  compute_type last;    ///< C(count), exact
  std::uint32_t count;  ///< N

  /// The bin of `x`, or `no_bin` when `x` is not counted.
  __host__ __device__ std::uint32_t operator()(Sample x) const noexcept {
    const compute_type c = to_compute(x);
    if (!(lower <= c && c < upper)) return no_bin;  // also NaN
    const compute_type t = (c - lower) * scale;     // >= 0: c >= lower
    return t < last ? truncate(t) : count - 1;
  }

  /// `compute_type(x)`. On the device, an 8- or 16-bit integer is read from the float
  /// bit pattern of 2^23 + (x - min), less 2^23 - min: one logic op and one exact
  /// FADD instead of a conversion instruction (16 a clock per SM on sm_90, against
  /// 128 FADDs), with the same, exact, result.
  __host__ __device__ static compute_type to_compute(Sample x) noexcept {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_integral_v<Sample> && sizeof(Sample) <= 2) {
      constexpr std::int32_t type_min = cuda::std::numeric_limits<Sample>::min();
      const auto biased = static_cast<std::uint32_t>(static_cast<std::int32_t>(x) - type_min);  // < 2^16
      return __uint_as_float(0x4B000000u | biased) - (8388608.0f - static_cast<float>(type_min));
    }
#endif
    return static_cast<compute_type>(x);
  }

  /// trunc(t) for 0 <= t < `last`. On the device, in float (`last` <= 2^23, see
  /// `histogram_max_bins`): 2^23 + t rounded toward zero is 2^23 + trunc(t), whose
  /// low mantissa bits are trunc(t): an FADD instead of a conversion instruction.
  __host__ __device__ static std::uint32_t truncate(compute_type t) noexcept {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<compute_type, float>) {
      return __float_as_uint(__fadd_rz(t, 8388608.0f)) - 0x4B000000u;
    }
#endif
    return static_cast<std::uint32_t>(t);
  }
};

template <class Sample>
even_bins<Sample> make_even_bins(histogram_compute_t<Sample> lower, histogram_compute_t<Sample> upper,
                                 std::size_t count) {
  using C = histogram_compute_t<Sample>;
  const C n = static_cast<C>(count);
  return {lower, upper, n / (upper - lower), n, static_cast<std::uint32_t>(count)};
}

/// The checks of `histogram_even` and its naive twin, before anything is enqueued.
template <class Sample, std::size_t SampleExtent, class Count, std::size_t CountExtent>
void expect_histogram_even_arguments(cuda::std::span<Sample, SampleExtent> samples,
                                     cuda::std::span<Count, CountExtent> counts, histogram_compute_t<Sample> lower,
                                     histogram_compute_t<Sample> upper, const char* algorithm) {
  using C = histogram_compute_t<Sample>;
  const std::string name(algorithm);
  expect_device_span(samples, (name + " samples").c_str());
  expect_capacity(counts, 1, (name + " counts (one per bin)").c_str());
  // The counts are zeroed, then incremented, while other blocks still read samples.
  expect_no_forbidden_overlap(samples, counts, overlap_rule::disjoint, (name + " samples and counts").c_str());
  FOUNDRY_EXPECTS(counts.size() <= histogram_max_bins<Sample>,
                  name + " takes at most " + std::to_string(histogram_max_bins<Sample>) +
                      " bins for this sample type, " + std::to_string(counts.size()) + " given");
  // Built only when a check fails (FOUNDRY_EXPECTS evaluates its reason only then).
  const auto bounds = [&] { return "[" + std::to_string(lower) + ", " + std::to_string(upper) + ")"; };
  FOUNDRY_EXPECTS(std::isfinite(lower) && std::isfinite(upper) && lower < upper,
                  name + " needs finite bounds with lower < upper, got " + bounds());
  if constexpr (std::is_integral_v<std::remove_const_t<Sample>>) {
    // Integer samples take the values [type_begin, type_end - 1]: bounds outside
    // [type_begin, type_end] or between integers describe bins no sample can reach.
    using limits = std::numeric_limits<std::remove_const_t<Sample>>;
    const C type_end = std::ldexp(C(1), limits::digits);  // max + 1, exact in C
    const C type_begin = limits::is_signed ? -type_end : C(0);
    FOUNDRY_EXPECTS(
        std::trunc(lower) == lower && std::trunc(upper) == upper && type_begin <= lower && upper <= type_end,
        name + " of integer samples needs whole-number bounds within [" + std::to_string(type_begin) + ", " +
            std::to_string(type_end) + "] (the type's values and its maximum + 1), got " + bounds());
  }
  const C scale = make_even_bins<std::remove_const_t<Sample>>(lower, upper, counts.size()).scale;
  FOUNDRY_EXPECTS(std::isfinite(scale) && scale > C(0), name + ": " + std::to_string(counts.size()) + " bins over " +
                                                            bounds() +
                                                            " give a bin width that the compute type cannot represent");
}

/// `*p += v` atomically, for 32- and 64-bit unsigned counters in shared or global memory.
template <class Counter>
__device__ inline void atomic_add_count(Counter* p, std::uint32_t v) noexcept {
  if constexpr (sizeof(Counter) == 4) {
    atomicAdd(reinterpret_cast<unsigned int*>(p), v);
  } else {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  }
}

/// One thread's run of samples in the same bin, added to `counters` with one
/// atomic when the bin changes (and by `flush` at the end). Samples in no bin
/// neither count nor break a run. The length stays below 2^32: a thread sees
/// fewer samples than a block, which the host bounds (`enqueue_histogram_even`).
template <class Counter>
struct bin_run {
  Counter* counters;
  std::uint32_t bin = no_bin;
  std::uint32_t length = 0;

  __device__ void add(std::uint32_t b) {
    if (b == no_bin) return;
    if (b == bin) {
      ++length;
      return;
    }
    flush();
    bin = b;
    length = 1;
  }
  __device__ void flush() {
    if (length != 0) atomic_add_count(counters + bin, length);
  }
};

/// Adds the samples of one vector to `run`, in order.
template <int N, class Sample, class Counter>
__device__ inline void count_vector(const aligned_vector<Sample, N>& v, const even_bins<Sample>& bins,
                                    bin_run<Counter>& run) {
#pragma unroll
  for (int k = 0; k < N; ++k) run.add(bins(v[k]));
}

/// Where a block counts: its own histogram in shared memory, merged into the
/// caller's counts at the end, or the caller's counts directly.
enum class histogram_counters { block_shared, global };

/// counts[0, N) = 0. Lets the histogram kernel start at once: it touches only
/// shared memory until it waits for this kernel to finish.
template <class Count>
__global__ void zero_counts_kernel(Count* counts, std::uint64_t bins) {
  allow_dependent_launch();
  wait_for_prior_grids();  // a kernel before may still read the counts
  for (auto i : grid_stride_range(bins)) counts[i] = Count{0};
}

/// Counts samples [0, split.n) into `counts`, which the zero kernel before it cleared.
/// `Policy::blocks_per_sm` in the launch bounds keeps the persistent grid resident at once.
/// Each block walks its tiles (strided over the grid, `block_tiles`); the last,
/// partial tile is guarded; the head and tail go to the grid's first threads.
/// `block_shared`: each block counts in `bins.count` 32-bit counters of dynamic
/// shared memory, then adds its non-zero ones into `counts`.
template <class Policy, int N, class Sample, class Count, histogram_counters Counters>
__global__ void __launch_bounds__(Policy::block_threads,
                                  resident_blocks_bound(Policy::block_threads, Policy::blocks_per_sm))
    histogram_even_kernel(vector_split<N> split, const Sample* samples, even_bins<Sample> bins, Count* counts) {
  using tile = block_striped_tile<Policy::block_threads, Policy::vectors_in_flight>;
  extern __shared__ std::uint32_t s_counts[];
  if constexpr (Counters == histogram_counters::block_shared) {
    // Shared memory only, so this may overlap the zero kernel's tail.
    for (std::uint32_t b = threadIdx.x; b < bins.count; b += Policy::block_threads) s_counts[b] = 0;
    __syncthreads();
  }
  wait_for_prior_grids();
  bin_run<std::conditional_t<Counters == histogram_counters::block_shared, std::uint32_t, Count>> run;
  if constexpr (Counters == histogram_counters::block_shared) {
    run.counters = s_counts;
  } else {
    run.counters = counts;
  }

  const std::uint64_t full_tiles = split.vectors / tile::vectors;
  const foundry::block_tiles<tile_assignment::strided> mine(full_tiles, blockIdx.x, gridDim.x);
  const Sample* body = split.body(samples);
  for (std::uint64_t j = mine.begin; j < mine.end; j += mine.step) {
    aligned_vector<Sample, N> v[tile::vectors_per_thread];
    tile::load(body + j * tile::vectors * N, v);
#pragma unroll
    for (int u = 0; u < tile::vectors_per_thread; ++u) count_vector(v[u], bins, run);
  }
  // Only now: a dependent kernel launched earlier would hold SM resources through the loop.
  allow_dependent_launch();
  const std::uint64_t rest = split.vectors - full_tiles * tile::vectors;
  if (rest != 0 && mine.takes_partial_tile) {
    // The grid's only partial tile, a vector at a time: a guarded whole-tile load keeps
    // a tile of bins live in registers (80 for bytes, against 32 with this loop).
#pragma unroll 1
    for (int u = 0; u < tile::vectors_per_thread && tile::is_valid(u, rest); ++u) {
      count_vector(load_vector<N>(body + (full_tiles * tile::vectors + tile::index(u)) * N), bins, run);
    }
  }
  for_each_head_and_tail(split, [&](std::uint64_t i) { run.add(bins(samples[i])); });
  run.flush();

  if constexpr (Counters == histogram_counters::block_shared) {
    __syncthreads();
    for (std::uint32_t b = threadIdx.x; b < bins.count; b += Policy::block_threads) {
      const std::uint32_t c = s_counts[b];
      if (c != 0) atomic_add_count(counts + b, c);
    }
  }
}

/// The byte kernel's shared memory: the block's 256 raw-value counts, then per warp
/// 128 words × 32 lanes of 16-bit counter pairs (values 2w and 2w + 1 in word w).
template <int BlockThreads>
inline constexpr std::size_t histogram_bytes_shared_bytes = (256 + std::size_t{BlockThreads / 32} * 128 * 32) *
                                                            sizeof(std::uint32_t);

/// 8-bit samples, any even bins: counts the 256 raw byte values, then maps each to
/// its bin once per block (as CUB does for bytes), so a sample costs one shared
/// atomic on the byte value, whatever the bins. The counters are lane-private:
/// lane l's counter of value v is the low or high half of word `(v / 2) × 32 + l`
/// of its warp's region, in bank l, so no two lanes of a warp ever touch the same
/// bank (random bytes into shared block counters cost about 3.5-way conflicts,
/// and one hot bin serialises a warp). A lane adds fewer than 2^16 samples between
/// two folds of its warp's counters into the block's 32-bit counts. (Counting runs
/// of equal values in registers first, as the general kernel does, made random
/// bytes 2.7x slower on the H200: a branch per sample.)
template <class Policy, class Sample, class Count>
__global__ void __launch_bounds__(Policy::byte_block_threads)
    histogram_bytes_kernel(vector_split<16> split, const Sample* samples, even_bins<Sample> bins, Count* counts) {
  static_assert(sizeof(Sample) == 1, "histogram_bytes_kernel counts 8-bit samples");
  using tile = block_striped_tile<Policy::byte_block_threads, Policy::byte_vectors_in_flight>;
  constexpr int warps = Policy::byte_block_threads / warp_threads;
  constexpr std::uint32_t lane_words = 128 * warp_threads;
  // Tiles between two folds: a lane's counter stays below 2^16 even with every
  // sample in one value, and the partial tile, head and tail after the last one.
  constexpr std::uint64_t most_tiles_per_fold =
      (0xFFFFu - tile::vectors_per_thread * 16 - 2) / (tile::vectors_per_thread * 16);
  constexpr std::uint64_t tiles_per_fold =
      Policy::byte_tiles_per_fold < most_tiles_per_fold ? Policy::byte_tiles_per_fold : most_tiles_per_fold;
  static_assert(tiles_per_fold >= 1, "histogram_policy: byte_tiles_per_fold must be at least 1");
  extern __shared__ std::uint32_t s_byte_counts[];
  std::uint32_t* const block_counts = s_byte_counts;
  const int lane = threadIdx.x % warp_threads;
  const int warp = threadIdx.x / warp_threads;
  std::uint32_t* const warp_counters = s_byte_counts + 256 + warp * lane_words;
  std::uint32_t* const lane_counters = warp_counters + lane;
  // Shared memory only, so this may overlap the zero kernel's tail.
  for (std::uint32_t i = threadIdx.x; i < 256 + warps * lane_words; i += Policy::byte_block_threads) {
    s_byte_counts[i] = 0;
  }
  __syncthreads();
  wait_for_prior_grids();

  const auto add = [&](std::uint32_t byte) {
    atomicAdd(lane_counters + (byte >> 1) * warp_threads, 1u << ((byte & 1u) * 16));
  };
  // A vector of 16 equal bytes (an input that stays on one value) costs one atomic;
  // the check costs a few integer ops per 16 samples on any other input.
  const auto add_vector = [&](const aligned_vector<Sample, 16>& v) {
    std::uint32_t words[4];
    static_assert(sizeof(words) == sizeof(v));
    std::memcpy(words, &v, sizeof(words));
    const std::uint32_t splat = (words[0] & 0xFFu) * 0x01010101u;
    if (words[0] == splat && words[1] == splat && words[2] == splat && words[3] == splat) {
      const std::uint32_t byte = words[0] & 0xFFu;
      atomicAdd(lane_counters + (byte >> 1) * warp_threads, 16u << ((byte & 1u) * 16));
      return;
    }
#pragma unroll
    for (int k = 0; k < 16; ++k) add(static_cast<std::uint8_t>(v[k]));
  };
  // Lane l sums words l, l + 32, l + 64 and l + 96 over the 32 lanes, starting at
  // column l (32 different banks at each step), and clears them.
  const auto fold_warp = [&] {
    __syncwarp();
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int word = lane + r * warp_threads;
      std::uint32_t low = 0, high = 0;
#pragma unroll 8
      for (int c = 0; c < warp_threads; ++c) {
        std::uint32_t& counter = warp_counters[word * warp_threads + ((c + lane) & (warp_threads - 1))];
        low += counter & 0xFFFFu;
        high += counter >> 16;
        counter = 0;
      }
      if (low != 0) atomicAdd(block_counts + 2 * word, low);
      if (high != 0) atomicAdd(block_counts + 2 * word + 1, high);
    }
    __syncwarp();
  };

  const std::uint64_t full_tiles = split.vectors / tile::vectors;
  const foundry::block_tiles<tile_assignment::strided> mine(full_tiles, blockIdx.x, gridDim.x);
  const Sample* body = split.body(samples);
  std::uint64_t since_fold = 0;
  for (std::uint64_t j = mine.begin; j < mine.end; j += mine.step) {
    aligned_vector<Sample, 16> v[tile::vectors_per_thread];
    tile::load(body + j * tile::vectors * 16, v);
#pragma unroll
    for (int u = 0; u < tile::vectors_per_thread; ++u) add_vector(v[u]);
    if (++since_fold == tiles_per_fold) {  // the same in every thread of the block
      fold_warp();
      since_fold = 0;
    }
  }
  allow_dependent_launch();
  const std::uint64_t rest = split.vectors - full_tiles * tile::vectors;
  if (rest != 0 && mine.takes_partial_tile) {
#pragma unroll 1
    for (int u = 0; u < tile::vectors_per_thread && tile::is_valid(u, rest); ++u) {
      add_vector(load_vector<16>(body + (full_tiles * tile::vectors + tile::index(u)) * 16));
    }
  }
  for_each_head_and_tail(split, [&](std::uint64_t i) { add(static_cast<std::uint8_t>(samples[i])); });
  fold_warp();
  __syncthreads();
  for (std::uint32_t value = threadIdx.x; value < 256; value += Policy::byte_block_threads) {
    const std::uint32_t c = block_counts[value];
    const std::uint32_t bin = bins(static_cast<Sample>(static_cast<std::uint8_t>(value)));
    if (c != 0 && bin != no_bin) atomic_add_count(counts + bin, c);
  }
}

/// Shared memory that the system reserves per block on sm_80 and later
/// (cudaDevAttrReservedSharedMemoryPerBlock), for sizing blocks per SM.
inline constexpr std::size_t reserved_shared_bytes_per_block = 1024;

/// Enqueues the zero kernel, then (for a non-empty input) the histogram kernel
/// over `split`: privatised in shared memory when the bins fit a block's shared
/// memory and no block can see 2^32 samples, else with global atomics.
template <class Policy, int N, class Sample, class Count>
void enqueue_histogram_even(vector_split<N> split, const Sample* samples, const even_bins<Sample>& bins, Count* counts,
                            cuda::stream_ref s) {
  // One thread per count (at most 2^31 / 256 blocks): no device query before this first
  // launch, which is where the null stream is refused.
  launch_config zero = make_launch_config_1d(bins.count, Policy::block_threads);
  zero.dependency = launch_dependency::programmatic;
  launch(s, zero, zero_counts_kernel<Count>, counts, std::uint64_t{bins.count});
  if (split.n == 0) return;

  // The device of `s`, where the kernels run, not the current one (issue 22: several devices).
  const device_properties& device = get_device_properties(stream_device(s.get()));
  const std::size_t shared_bytes = std::size_t{bins.count} * sizeof(std::uint32_t);
  const bool fits_shared = shared_bytes <= device.shared_memory_per_block_optin;
  const int fit_per_sm =
      static_cast<int>(device.shared_memory_per_sm / (shared_bytes + reserved_shared_bytes_per_block));
  const int blocks_per_sm =
      fits_shared ? std::max(1, std::min(Policy::blocks_per_sm, fit_per_sm)) : Policy::blocks_per_sm;
  constexpr std::uint64_t tile_vectors = std::uint64_t{Policy::block_threads} * Policy::vectors_in_flight;
  const std::uint64_t blocks = std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(ceil_div(split.vectors, tile_vectors), resident_grid_blocks(blocks_per_sm, device)));
  // Most samples one block counts: its share of the full tiles, the partial tile, the head and tail.
  const std::uint64_t block_samples_bound =
      (ceil_div(split.vectors / tile_vectors, blocks) + 1) * tile_vectors * N + 2 * N;
  const bool privatised = fits_shared && block_samples_bound <= std::numeric_limits<std::uint32_t>::max();

  launch_config c;
  c.grid = dim3(static_cast<std::uint32_t>(blocks), 1, 1);
  c.block = dim3(Policy::block_threads, 1, 1);
  c.dependency = launch_dependency::programmatic;
  if constexpr (sizeof(Sample) == 1 && N == 16) {
    constexpr std::uint64_t byte_tile_vectors =
        std::uint64_t{Policy::byte_block_threads} * Policy::byte_vectors_in_flight;
    const std::uint64_t byte_blocks =
        std::max<std::uint64_t>(1, std::min<std::uint64_t>(ceil_div(split.vectors, byte_tile_vectors),
                                                           resident_grid_blocks(Policy::byte_blocks_per_sm, device)));
    const std::uint64_t byte_block_samples_bound =
        (ceil_div(split.vectors / byte_tile_vectors, byte_blocks) + 1) * byte_tile_vectors * N + 2 * N;
    // 66.5 KiB of shared memory: more than a Turing block may opt into (64 KiB), where the
    // general kernel below counts the bytes instead.
    constexpr std::size_t byte_shared_bytes = histogram_bytes_shared_bytes<Policy::byte_block_threads>;
    if (byte_block_samples_bound <= std::numeric_limits<std::uint32_t>::max() &&
        byte_shared_bytes <= device.shared_memory_per_block_optin) {
      c.grid = dim3(static_cast<std::uint32_t>(byte_blocks), 1, 1);
      c.block = dim3(Policy::byte_block_threads, 1, 1);
      c.dynamic_shared_bytes = byte_shared_bytes;
      launch(s, c, histogram_bytes_kernel<Policy, Sample, Count>, split, samples, bins, counts);
      return;
    }
  }
  if (privatised) {
    c.dynamic_shared_bytes = shared_bytes;
    launch(s, c, histogram_even_kernel<Policy, N, Sample, Count, histogram_counters::block_shared>, split, samples,
           bins, counts);
  } else {
    launch(s, c, histogram_even_kernel<Policy, N, Sample, Count, histogram_counters::global>, split, samples, bins,
           counts);
  }
}

/// The vector path for any naturally aligned input (its offset modulo 16 bytes
/// becomes the head), the scalar path otherwise.
template <class Policy, class Sample, class Count>
void launch_histogram_even(const Sample* samples, std::uint64_t n, const even_bins<Sample>& bins, Count* counts,
                           cuda::stream_ref s) {
  constexpr int n_vector = vector_elements_v<Sample, max_vector_bytes>;
  if constexpr (n_vector > 1) {
    if (same_vector_phase<n_vector>(samples)) {
      enqueue_histogram_even<Policy>(split_for_vectors<n_vector>(samples, n), samples, bins, counts, s);
      return;
    }
  }
  enqueue_histogram_even<Policy>(split_for_vectors<1>(samples, n), samples, bins, counts, s);
}

template <class Sample, class Count>
constexpr void static_check_histogram_types() {
  using sample = std::remove_const_t<Sample>;
  static_assert(std::is_arithmetic_v<sample> && !std::is_same_v<sample, bool> && !std::is_same_v<sample, long double>,
                "histogram_even samples are integers (not bool), float or double");
  static_assert(!std::is_const_v<Count>, "histogram_even writes its counts: the counts span must not be const");
  static_assert(std::is_integral_v<Count> && std::is_unsigned_v<Count> && !std::is_same_v<Count, bool> &&
                    (sizeof(Count) == 4 || sizeof(Count) == 8),
                "histogram_even counts are std::uint32_t or std::uint64_t");
}

}  // namespace detail

/// Counts the samples into `counts.size()` even bins over `[lower, upper)` (the
/// definition is in the file comment), overwriting `counts`. Samples outside the
/// range, NaN included, are not counted. `lower` and `upper` have the compute type
/// (`float` for 8/16-bit integers and `float`, else `double`); for integer samples
/// they are whole numbers within the type's values and its maximum + 1 (for bytes:
/// within [0, 256]).
///
/// Asynchronous on `s`: enqueues a kernel that zeroes `counts`, then (for a
/// non-empty input) the histogram kernel. The samples must stay alive and
/// unchanged until it completes on `s`.
/// Throws `std::invalid_argument` if `samples` has elements but a null pointer,
/// `counts` is empty or null or overlaps `samples`, there are more bins than `histogram_max_bins`, the
/// bounds are not finite with `lower < upper` (NaN included), integer samples get
/// bounds that are not whole numbers within the type's range, the bin width
/// underflows or overflows, or `s` is the null stream; `cuda_error` if a launch fails.
template <class Policy = histogram_policy, class Sample, std::size_t SampleExtent, class Count, std::size_t CountExtent>
void histogram_even(cuda::std::span<Sample, SampleExtent> samples, cuda::std::span<Count, CountExtent> counts,
                    histogram_compute_t<Sample> lower, histogram_compute_t<Sample> upper, cuda::stream_ref s) {
  detail::static_check_histogram_types<Sample, Count>();
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::expect_histogram_even_arguments(samples, counts, lower, upper, "histogram_even");
  const int device = detail::device_for_checks(s);
  detail::expect_device_accessible(samples, device, "histogram_even samples");
  detail::expect_device_accessible(counts, device, "histogram_even counts");
  using sample = std::remove_const_t<Sample>;
  detail::launch_histogram_even<Policy>(static_cast<const sample*>(samples.data()), samples.size(),
                                        detail::make_even_bins<sample>(lower, upper, counts.size()), counts.data(), s);
}

}  // namespace foundry
