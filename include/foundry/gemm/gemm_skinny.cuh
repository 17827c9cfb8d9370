#pragma once
/// \file
/// The skinny rung of the GEMM: vector and skinny products, where M or N is small
/// (C = alpha * A * B + beta * C with A: m × k, B: k × n, as gemm_problem.cuh).
///
/// With m rows of A the product does 2 * m flops per element of B, so it is bound by
/// the reading of B while m is small. On the H200, 4.2 TB/s bring 1.05 T fp32 or 2.1 T
/// 16-bit elements of B per second, and the CUDA cores (these kernels accumulate in fp32
/// there, for every input type) run ~51 TFLOP/s: the two meet at m = 51 / (2 * 1.05) ~ 24
/// for fp32 inputs and ~ 12 for 16-bit ones. `skinny_max_rows` stops at two thirds of
/// that (16 and 8), leaving issue slots for the loads, the conversions and the
/// shared-memory reads of A; beyond it the tiled rungs win. On the H100 rung 3 won from 9
/// fp32 rows already, and on small problems, so `foundry::gemm` takes fp32 products here
/// only up to 8 rows and from 2 MiB of large operand (`skinny_fp32_gemm_max_rows`), and
/// 16-bit ones for the tensor-core kernel from 1 MiB (`skinny_mma_min_large_bytes`).
/// 16-bit inputs with 2 rows or more take the tensor-core kernel of gemm_skinny_mma.cuh
/// instead, where the arithmetic no longer competes with the loads, unless their large
/// operand is read along k with scalar loads (`skinny_uses_mma`); a 16-bit vector (one
/// row) stays here.
///
/// - **Orientation.** The small side becomes the rows: when n < m the kernel solves
///   C^T = B^T A^T (`skinny_orient`), so the large operand is always the kernel's B,
///   k × n, and it is read from DRAM exactly once.
/// - **B contiguous along n** (`skinny_along_n_kernel`): a warp streams rows of B, each
///   lane one vector of adjacent columns (4 fp32, 8 16-bit but 4 with 8 rows:
///   `skinny_policy::along_n_lane_columns`), and the 4 warps of a block take quarters of
///   each K chunk; A's values are the same for the whole warp (a shared-memory
///   broadcast); the warps' partial sums meet in shared memory at the end, in a fixed order,
///   every thread adding and storing its share of the tile. Where B is read one element at a
///   time and the grid is small, a narrow layout of 2 columns a lane gives 4 times the blocks
///   (`skinny_policy::prefers_narrow`).
/// - **B contiguous along k** (`skinny_along_k_kernel`): a warp streams 4 columns of B
///   along k, each lane one vector of adjacent k; each lane reads its own A values from
///   shared memory and uses them for the 4 columns; the lanes' partial sums meet through warp
///   shuffles, halving exchanges that leave each lane one or two of the warp's results.
/// - **A** is staged, as float, one K chunk at a time into shared memory (it is small
///   and stays in L2); rows past m and k past the slice read as zeros. Where the slice's
///   end shortens a chunk, the along-n kernel stages only the k its warps read.
/// - **Loads.** 16-byte vector loads (4 fp32 or 8 16-bit elements: 8-byte loads held
///   16-bit B to 2.7-2.8 TB/s on the H200, against 4.1-4.2 for fp32; 8-byte ones remain
///   for the 16-bit along-n kernel with 8 rows, for its registers) only where the
///   launch proved the alignment of B's pointer and leading dimension; otherwise the same
///   kernels load scalars, still coalesced (a lane takes every 32nd element). B is read
///   with the streaming cache hint: it is touched once.
/// - **Split-K.** When the column tiles cannot fill the SMs, K is cut into slices that
///   write partial results into a workspace, summed in a fixed order by the split-K
///   reduce of detail/split_k.cuh (deterministic, no atomics). With few tiles and a long
///   K the slices go down to a few hundred k, whole rounds of a block's loads, not
///   whole chunks (`skinny_policy` states the rule).
/// - **Any m.** Named explicitly (`gemm_with`), the rung runs any shape: the grid's z
///   covers the rows `block_m` at a time, reading B once per group.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/gemm/detail/epilogue.cuh>
#include <foundry/gemm/detail/skinny_args.cuh>
#include <foundry/gemm/detail/split_k.cuh>
#include <foundry/gemm/gemm_plan.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/gemm/gemm_skinny_mma.cuh>
#include <foundry/launch/dependent_launch.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_bounds.cuh>
#include <foundry/launch/launch_config.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace foundry::gemm_kernels {

/// Elements of In in one 16-byte vector load of B, a lane's share of a row (along n) or of
/// a step (along k): 4 fp32, 8 16-bit. The widest load a lane can issue; at 8 bytes, 16-bit
/// B stayed at 2.7-2.8 TB/s on the H200 (fp32: 4.1-4.2).
template <class In>
inline constexpr int skinny_elements_per_load = static_cast<int>(16 / sizeof(In));

/// The shape of the skinny kernels, chosen so that each SM keeps at least 32 KiB of B in
/// flight (Little's law at 32 B/ns per SM and ~1 µs of loaded DRAM latency) within the
/// 128-register cap of the residency below. Not tuned; on the H200, 16384 x 16384 B: fp32
/// 4.1-4.2 TB/s with one row, 2.7-3.2 with eight; 16-bit 2.7-2.8 and 1.4-1.8 TB/s with
/// 8-byte loads (before `skinny_elements_per_load`; 16-byte loads not yet measured).
/// Where a count depends on In, the function takes `elements` = `skinny_elements_per_load<In>`.
struct skinny_policy {
  /// K per chunk of A staged in shared memory: 16 fp32 rows of 512 are 32 KiB, so four
  /// blocks fit on an SM. A split's slices need not be whole chunks (`split_unit_k`).
  static constexpr int chunk_k = 512;
  /// Along-n kernel: 4 warps over one tile of 32 lanes × `along_n_lane_columns` (one
  /// vector a lane), each warp a quarter of every K chunk (of what a slice's end leaves of
  /// it); 4 blocks per SM (128 registers per thread).
  static constexpr int along_n_threads = 128;
  /// Columns a lane of the along-n kernel holds (one vector load a row of B): `elements`
  /// while that keeps at most 32 accumulators, else 4. So fp32 always 4 (16 bytes), 16-bit
  /// 8 (16 bytes) for 1 and 4 rows, and 4 (8 bytes) for 8 rows: 8 × 8 accumulators and the
  /// 8 converted values of B spilled 16-28 bytes at 128 registers with any rows in flight.
  /// In the `narrow` layout (B read one element at a time, few blocks), `narrow_lane_columns`.
  [[nodiscard]] __host__ __device__ static constexpr int along_n_lane_columns(int rows, int elements,
                                                                              bool narrow = false) noexcept {
    return narrow ? narrow_lane_columns : rows * elements <= 32 ? elements : 4;
  }
  /// Columns a lane of the along-n kernel holds in the narrow layout: 2. Where B is read one
  /// element at a time, each column costs a lane a load, a conversion and Rows FMAs a row, so
  /// a small product's few blocks were bound by their warps' instruction streams (301 x 1 x
  /// 87 bf16 with 8: 2 blocks, ~3,400 instructions a warp at 9 cycles each, 13.0 us against
  /// cuBLAS's 3.7 on the H100; with 2: 5 blocks, 10.5 us; 1 x 247 x 37 9.6 -> 6.6). It holds
  /// half the bytes in flight a warp, so it is taken only where it adds blocks to a grid
  /// that fills less than half the slots (`prefers_narrow`).
  static constexpr int narrow_lane_columns = 2;
  /// Columns of C per along-n block: 32 lanes × `along_n_lane_columns` (128, or 256 for
  /// 16-bit with up to 4 rows; 64 in the narrow layout).
  [[nodiscard]] __host__ __device__ static constexpr int along_n_columns(int rows, int elements,
                                                                         bool narrow = false) noexcept {
    return 32 * along_n_lane_columns(rows, elements, narrow);
  }
  /// Whether a plan of B read one element at a time takes the narrow layout: where the wide
  /// one's grid (`wide_blocks`, split included) fills less than half of `slots` and the
  /// narrow one's is larger. At the same 512 blocks, the wide layout's 4 KiB in flight a
  /// warp ran 1 x 16384 x 16384 bf16 (ldb off by 3) in 386 us, the narrow one's 2 KiB in 967
  /// (H100, session 16).
  [[nodiscard]] __host__ __device__ static constexpr bool prefers_narrow(std::int64_t wide_blocks,
                                                                         std::int64_t narrow_blocks,
                                                                         std::int64_t slots) noexcept {
    return 2 * wide_blocks < slots && narrow_blocks > wide_blocks;
  }
  /// Along-n blocks resident per SM, as built.
  static constexpr int along_n_min_blocks_per_sm = 4;
  /// Along-k kernel: 8 warps, each over 4 columns of B (so a staged A value serves 4).
  static constexpr int along_k_threads = 256;
  /// Columns of C per along-k warp.
  static constexpr int along_k_warp_columns = 4;
  /// Along-k blocks resident per SM, as built.
  static constexpr int along_k_min_blocks_per_sm = 2;

  /// Rows of B a lane of the along-n kernel loads before it uses them (its loads in
  /// flight: one vector a row), within 128 registers: 8, or 4 with 64 accumulators (16
  /// fp32 rows × 4 columns); 16 in the narrow layout (2 columns a lane: 32 loads in flight).
  [[nodiscard]] __host__ __device__ static constexpr int along_n_rows_in_flight(int rows, int elements,
                                                                                bool narrow = false) noexcept {
    return narrow ? 16 : rows * along_n_lane_columns(rows, elements) >= 64 ? 4 : 8;
  }
  /// Steps of 32 lanes × `elements` k (128 fp32, 256 16-bit: 16 bytes a lane and column) a
  /// warp of the along-k kernel loads before it uses them, within 128 registers: 2, or 1
  /// from Rows × `elements` = 64 (16 fp32 rows, 8 16-bit ones), where two no longer fit.
  [[nodiscard]] __host__ __device__ static constexpr int along_k_steps_in_flight(int rows, int elements) noexcept {
    return rows * elements >= 64 ? 1 : 2;
  }
  /// The unit of a split's depth: the K that one block covers in one round of its loads
  /// in flight (along n: 4 warps × 8 or 4 rows = 32 or 16, 4 × 16 = 64 in the narrow
  /// layout; along k: 256 or 128 fp32, 512 or 256 16-bit). A slice that ends inside a round
  /// waits out the round's latency
  /// anyway, so the depth is rounded up to whole rounds; every unit is a multiple of 8, so
  /// a slice starts where a vector load along k stays aligned. The kernels take any slice
  /// end, inside a chunk.
  [[nodiscard]] __host__ __device__ static constexpr int split_unit_k(bool along_n, int rows, int elements,
                                                                      bool narrow = false) noexcept {
    return along_n ? along_n_threads / 32 * along_n_rows_in_flight(rows, elements, narrow)
                   : 32 * elements * along_k_steps_in_flight(rows, elements);
  }

  // Split-K. With few column tiles and a long K a block is latency-bound, not
  // bandwidth-bound: each warp walks its share of the slice one round of loads at a
  // time, about one DRAM latency per round, so the time goes as the slice's depth in
  // rounds (a slice of 1536 along n: 48 rounds a warp). The rule: while the tiles are
  // fewer than the resident slots, cut K into slots / tiles slices, but none shallower
  // than `min_k_per_split_for` and no more than `max_splits`, the depth rounded up to
  // `split_unit_k`. The workspace needs no cap of its own: slices × tiles
  // <= slots, so it holds at most slots × one tile of C (528 × 16 × 128 floats, 4.3 MiB
  // on 132 SMs).

  /// Shallowest K slice of an automatic split of the along-k kernel: 256, one or two of its
  /// rounds.
  static constexpr std::int64_t min_k_per_split = 256;
  /// Shallowest K slice of an automatic split: along n, two rounds of every warp (32 or 64
  /// k, 128 in the narrow layout); along k, `min_k_per_split`. Along n a warp walks its
  /// quarter of the slice a round
  /// of 4 or 8 rows at a time, one latency each: 256 was 8 to 16 rounds, which kept small
  /// products with few column tiles (29 x 13 x 2378 fp32: 9 slices, 17 rounds a warp)
  /// latency-bound while the reduce's second pass costs about one. Measured against 256
  /// (H100, session 14, hot): 29 x 13 x 2378 fp32 29.6 -> 16.7 us, 3 x 58 x 2835 24.0 ->
  /// 14.6, 2 x 100 x 511 32.3 -> 14.2, 82 x 14 x 11373 36.5 -> 31.0 (there max_splits binds).
  [[nodiscard]] __host__ __device__ static constexpr std::int64_t min_k_per_split_for(bool along_n, int rows,
                                                                                      int elements,
                                                                                      bool narrow = false) noexcept {
    return along_n ? 2 * split_unit_k(true, rows, elements, narrow) : min_k_per_split;
  }
  /// Most slices of an automatic split: 256. The reduce of a small C adds them 8 warps to an
  /// element (`split_k_reduce_slices_kernel`), so a thread's chain of L2 reads is 32 long.
  static constexpr std::int64_t max_splits = 256;
};

/// The most rows of the small side that the skinny kernels hold, and for 16-bit inputs the
/// most for which `foundry::gemm` picks the rung (fp32: `skinny_fp32_gemm_max_rows`): 16 for
/// fp32 inputs, 8 for 16-bit ones, two thirds of where the H200's fp32 FMA rate meets its
/// memory bandwidth (the file comment gives the arithmetic). The tensor-core
/// kernel measured no better than the tiled rungs beyond 8 (H100, session 13: 9 to 32
/// rows 0.23-0.94x of them, 1.08x at 16384 x 16 x 16384 alone).
template <class In>
inline constexpr int skinny_max_rows = std::is_same_v<In, float> ? 16 : 8;

/// The most rows of the small side for which `foundry::gemm` takes the skinny rung for fp32
/// inputs (the kernels hold up to `skinny_max_rows<float>`, 16, where the rung is named), and
/// the fewest bytes of the large operand. H100, session 27's plan space (timed as the sweep's
/// rows), against rung 3's plan:
/// - 9 to 16 rows do 9 to 16 FMAs per 4 bytes read, and the FMAs bound the kernel: 16384 x 16
///   x 16384 682 us against 586 (cuBLAS 540), 15992 x 9 x 14282 637 against 614, 29 x 13 x
///   2378 8.4 against 5.7; 12 x 470 x 7800 gave 15.0 against 16.1 the other way.
/// - Under 2 MiB of large operand a call is its latency: 1283 x 3 x 31 4.2 us against 3.3,
///   492 x 2 x 10 3.4 against 2.6, 301 x 1 x 87 5.0 against 4.2, 3 x 58 x 2835 (0.6 MiB) 7.8
///   against 5.6. From 5 MiB the kernel streams and wins: 2 x 5851 x 224 6.2 against 7.7.
/// In the sweep (session 28, main and the rule alternated in each of two calls) fp32's
/// geometric mean went from 1.086 to 1.136 of cuBLAS, and from 1.075 to 1.125.
inline constexpr int skinny_fp32_gemm_max_rows = 8;
inline constexpr std::int64_t skinny_fp32_min_large_bytes = std::int64_t{2} << 20;  ///< see above

/// The fewest bytes of large operand for which `foundry::gemm` gives a 16-bit product to the
/// tensor-core skinny kernel (gemm_skinny_mma.cuh); a smaller one takes the tiled rungs, where
/// the call costs less. H100, session 28, the bf16 and fp16 sweeps of main and of the rule
/// alternated in one call: 1283 x 3 x 31 5.5 -> 3.9 us (cuBLAS 3.5 fp16), 492 x 2 x 10 4.5 ->
/// 3.9, 3 x 58 x 2835 (0.3 MiB) 7.8 -> 6.6 bf16, 7.2 -> 6.6 fp16; 21 x 5 x 1 3.2 -> 3.7 the
/// other way. From 2.6 MB the kernel wins: 2 x 5851 x 224 6.7 us against rung 4's 8.2
/// (session 27's plan space). The CUDA-core kernel (one row, or scalar loads along k) keeps
/// small products: 2 x 28 x 177 ran 3.5 us there, 4.2 on rung 4.
inline constexpr std::int64_t skinny_mma_min_large_bytes = std::int64_t{1} << 20;

/// Whether `foundry::gemm` takes the skinny rung for `p`: K >= 1 and min(M, N) at most
/// `skinny_max_rows<In>` (K = 0 is C = beta * C, the naive rung's one pass), unless C is
/// empty: for fp32 inputs at most `skinny_fp32_gemm_max_rows` with a large operand
/// (max(M, N) x K) of at least `skinny_fp32_min_large_bytes`; for 16-bit ones a large operand
/// of at least `skinny_mma_min_large_bytes` where the tensor-core kernel would run it
/// (`skinny_uses_mma`).
template <class In, class Out>
[[nodiscard]] bool skinny_shape(const gemm_problem<In, Out>& p) noexcept {
  const std::int64_t rows = std::min(p.m, p.n), large = std::max(p.m, p.n);
  if (p.k <= 0 || rows > skinny_max_rows<In>) return false;
  if (rows == 0) return true;
  // Whether the large operand holds at least `bytes`, without forming its size (no overflow).
  const auto holds = [&p, large](std::int64_t bytes) {
    return p.k >= ceil_div<std::int64_t>(bytes / static_cast<std::int64_t>(sizeof(In)), large);
  };
  if constexpr (std::is_same_v<In, float>) {
    return rows <= skinny_fp32_gemm_max_rows && holds(skinny_fp32_min_large_bytes);
  } else if constexpr (std::is_same_v<Out, float>) {
    return holds(skinny_mma_min_large_bytes) || !skinny_uses_mma(detail::skinny_orient(p));
  } else {
    return true;
  }
}

namespace detail {

/// Rows a skinny kernel instance holds per thread for `m` rows of the small side:
/// 1, half of `skinny_max_rows<In>`, or all of them (a kernel does as many FMAs as its
/// bucket has rows, so a vector product must not pay for 16). The tensor-core kernel has
/// its own (`skinny_mma_policy::row_bucket`).
template <class In>
[[nodiscard]] constexpr int skinny_row_bucket(std::int64_t m) noexcept {
  return m <= 1 ? 1 : m <= skinny_max_rows<In> / 2 ? skinny_max_rows<In> / 2 : skinny_max_rows<In>;
}

/// How the kernels read elements of In: as raw bits (float, or the 16 bits of a half or
/// bfloat16), converted to float after the load; `vec` is the W adjacent elements of one
/// vector load: 16 bytes (W = `skinny_elements_per_load<In>`), or 8 for the 16-bit types
/// where the along-n kernel keeps 4 columns a lane (`skinny_policy::along_n_lane_columns`);
/// W = 2 (8 bytes of fp32, 4 of 16-bit) packs the scalar path's two columns a lane.
template <class In, int W = skinny_elements_per_load<In>>
struct skinny_element;

template <>
struct skinny_element<float, 2> {
  using raw = float;
  using vec = float2;
  static constexpr int width = 2;
  __device__ static float value(raw x) { return x; }
  __device__ static vec pack(const raw (&r)[width]) { return make_float2(r[0], r[1]); }
  __device__ static void unpack(const vec& v, float (&out)[width]) { out[0] = v.x, out[1] = v.y; }
};

template <>
struct skinny_element<float, 4> {
  using raw = float;
  using vec = float4;
  static constexpr int width = 4;
  __device__ static float value(raw x) { return x; }
  __device__ static vec pack(const raw (&r)[width]) { return make_float4(r[0], r[1], r[2], r[3]); }
  __device__ static void unpack(const vec& v, float (&out)[width]) {
    out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
  }
};

/// The bits of one 16-bit element as float, and the two elements of a word (little-endian:
/// the first is the low half).
template <class In>
struct skinny_bits16;

template <>
struct skinny_bits16<__nv_bfloat16> {
  // bfloat16 is the top half of a float.
  __device__ static float value(unsigned short x) { return __uint_as_float(static_cast<unsigned>(x) << 16); }
  __device__ static void unpack_word(unsigned w, float& lo, float& hi) {
    lo = __uint_as_float(w << 16), hi = __uint_as_float(w & 0xFFFF0000u);
  }
};

template <>
struct skinny_bits16<__half> {
  __device__ static float value(unsigned short x) { return __half2float(__ushort_as_half(x)); }
  __device__ static void unpack_word(unsigned w, float& lo, float& hi) {
    lo = value(static_cast<unsigned short>(w & 0xFFFFu)), hi = value(static_cast<unsigned short>(w >> 16));
  }
};

/// The 16-bit types' vectors: W = 8 (16 bytes, 4 words), 4 (8 bytes, 2 words) or 2 (one word,
/// the scalar path's pair of columns).
template <class In, int W>
struct skinny_element_16bit {
  static_assert(W == 2 || W == 4 || W == 8, "4, 8 or 16 bytes");
  using raw = unsigned short;
  using vec = std::conditional_t<W == 8, uint4, std::conditional_t<W == 4, uint2, unsigned>>;
  static constexpr int width = W;
  __device__ static float value(raw x) { return skinny_bits16<In>::value(x); }
  __device__ static vec pack(const raw (&r)[W]) {
    unsigned words[W / 2];
#pragma unroll
    for (int w = 0; w < W / 2; ++w) words[w] = r[2 * w] | (static_cast<unsigned>(r[2 * w + 1]) << 16);
    if constexpr (W == 8) {
      return make_uint4(words[0], words[1], words[2], words[3]);
    } else if constexpr (W == 4) {
      return make_uint2(words[0], words[1]);
    } else {
      return words[0];
    }
  }
  __device__ static void unpack(const vec& v, float (&out)[W]) {
    if constexpr (W == 8) {
      const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int w = 0; w < 4; ++w) skinny_bits16<In>::unpack_word(words[w], out[2 * w], out[2 * w + 1]);
    } else if constexpr (W == 4) {
      skinny_bits16<In>::unpack_word(v.x, out[0], out[1]);
      skinny_bits16<In>::unpack_word(v.y, out[2], out[3]);
    } else {
      skinny_bits16<In>::unpack_word(v, out[0], out[1]);
    }
  }
};

template <int W>
struct skinny_element<__nv_bfloat16, W> : skinny_element_16bit<__nv_bfloat16, W> {};

template <int W>
struct skinny_element<__half, W> : skinny_element_16bit<__half, W> {};

/// Copies rows [row0, row0 + Rows) and k [k0, k0 + `k_staged`) of A (k_staged <= Chunk) into
/// `a_s` as float: `a_s[p * Rows + i]` (KMajor) or `a_s[i * Chunk + p]`; zeros past m and
/// past `k_end`. Consecutive threads walk A's contiguous index (k-contiguous A: rows of the
/// power of two at or above k_staged, so that a row and a k are a shift and a mask). The
/// loads go out 8 a thread at a time, and the rounds past what k_staged needs are skipped: a
/// K of 26 with 16 rows stages 512 elements instead of the chunk's 8,192, the instructions
/// that bound the small products (9 x 570 x 26 fp32: about 3,900 a warp; 7.7 -> 5.9 us on the
/// H100). All `Threads` threads of the block call it.
template <class In, int Rows, int Chunk, int Threads, bool KMajor>
__device__ void stage_a(const skinny_args<In>& g, std::int64_t row0, std::int64_t k0, std::int64_t k_end, int k_staged,
                        float* __restrict__ a_s) {
  using element = skinny_element<In>;
  const auto* a = reinterpret_cast<const typename element::raw*>(g.a);
  constexpr int per_round = 8;  // loads in flight a thread
  static_assert((Rows * Chunk) % Threads == 0, "whole rounds of the block");
  // A(row0 + i, k0 + p), 0 past C's rows or the slice's K, and where it is staged.
  const auto element_at = [&](int i, int p) {
    const std::int64_t row = row0 + i, k = k0 + p;
    return row < g.m && k < k_end ? element::value(__ldg(a + (g.a_k_contiguous ? row * g.lda + k : k * g.lda + row)))
                                  : 0.0f;
  };
  const auto slot = [](int i, int p) { return KMajor ? p * Rows + i : i * Chunk + p; };
  if (k_staged == Chunk) {
    // A whole chunk, as this loop always staged it: its trip count known, ptxas issues each
    // round's loads together. (Looping over k_staged's rounds instead, or loading a round and
    // then storing it, moved the large skinny products by 10-30%: 16384 x 16 x 16384 fp32
    // 685 -> 902 us on the H100, session 17.)
#pragma unroll 8
    for (int e = static_cast<int>(threadIdx.x); e < Rows * Chunk; e += Threads) {
      const int i = g.a_k_contiguous ? e / Chunk : e % Rows;
      const int p = g.a_k_contiguous ? e % Chunk : e / Rows;
      a_s[slot(i, p)] = element_at(i, p);
    }
    return;
  }
  const int shift = 32 - __clz(k_staged - 1);  // k-contiguous A: log2 of its staged rows' span
  const int limit = g.a_k_contiguous ? Rows << shift : Rows * k_staged;
  // Element e's row i and k p within the staged block.
  const auto place = [&](int e, int& i, int& p) {
    i = g.a_k_contiguous ? e >> shift : e % Rows;
    p = g.a_k_contiguous ? e & ((1 << shift) - 1) : e / Rows;
  };
  for (int base = static_cast<int>(threadIdx.x); base < limit; base += per_round * Threads) {
    // All the round's loads first, then the stores.
    float v[per_round];
#pragma unroll
    for (int j = 0; j < per_round; ++j) {
      const int e = base + j * Threads;
      int i = 0, p = 0;
      place(e, i, p);
      v[j] = e < limit ? element_at(i, p) : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < per_round; ++j) {
      const int e = base + j * Threads;
      int i = 0, p = 0;
      place(e, i, p);
      if (e < limit) a_s[slot(i, p)] = v[j];
    }
  }
}

/// `acc[i][v] += a[i] * b[v]` for the Rows values of A at `a` (16-byte aligned when Rows
/// is a multiple of 4: one broadcast float4 read per 4 rows) and a lane's W values of B.
template <int Rows, int W>
__device__ __forceinline__ void accumulate_row(const float* __restrict__ a, const float (&b)[W],
                                               float (&acc)[Rows][W]) {
  float a_r[Rows];
  if constexpr (Rows % 4 == 0) {
#pragma unroll
    for (int i = 0; i < Rows; i += 4) {
      const float4 v = *reinterpret_cast<const float4*>(a + i);
      a_r[i] = v.x, a_r[i + 1] = v.y, a_r[i + 2] = v.z, a_r[i + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < Rows; ++i) a_r[i] = a[i];
  }
#pragma unroll
  for (int i = 0; i < Rows; ++i) {
#pragma unroll
    for (int v = 0; v < W; ++v) acc[i][v] = fmaf(a_r[i], b[v], acc[i][v]);
  }
}

/// Element `v` (0..W-1) of a lane's W: adjacent ones for vector loads, every 32nd for scalar ones.
template <bool Vector, int W>
__device__ __forceinline__ int lane_element(int lane, int v) {
  return Vector ? W * lane + v : lane + 32 * v;
}

/// What a lane holds of one load of B until it uses it: one vector (`Vector`), or its W
/// elements as they were loaded, a register each, converted to float only where the FMAs
/// use them. Packed two to a word as they arrived (the vector's layout), the 16-bit scalar
/// paths waited for each row's loads before issuing the next row's: they ran slower than
/// fp32 with twice the bytes (H100, session 17: 301 x 1 x 87 bf16 11.2 us against fp32's
/// 6.0, 1 x 2869 x 1368 16.0 against 13.3), and ncu counted about 10 times fp32's
/// long-scoreboard stalls an instruction at the same instruction count.
template <class In, int W, bool Vector>
struct skinny_loaded {
  using element = skinny_element<In, W>;
  typename element::vec vec{};
  __device__ void to_floats(float (&out)[W]) const { element::unpack(vec, out); }
};

template <class In, int W>
struct skinny_loaded<In, W, false> {
  using element = skinny_element<In, W>;
  typename element::raw raw[W]{};
  __device__ void to_floats(float (&out)[W]) const {
#pragma unroll
    for (int v = 0; v < W; ++v) out[v] = element::value(raw[v]);
  }
};

/// Elements `start + lane_element(lane, v)` of a run of B at `run` (contiguous), those
/// below `limit` (a run's length or the K slice's end), zeros past it: one vector load
/// when all W are inside, else scalars. Issued together by the caller's unrolled loop.
template <class In, int W, bool Vector>
__device__ __forceinline__ skinny_loaded<In, W, Vector> load_lane(const typename skinny_element<In, W>::raw* run,
                                                                  std::int64_t start, std::int64_t limit, int lane) {
  using element = skinny_element<In, W>;
  skinny_loaded<In, W, Vector> out;
  if constexpr (Vector) {
    if (start + W * lane + (W - 1) < limit) {
      out.vec = __ldcs(reinterpret_cast<const typename element::vec*>(run + start + W * lane));
    } else {  // the run's end: the elements inside, one at a time
      typename element::raw r[W];
#pragma unroll
      for (int v = 0; v < W; ++v) {
        const std::int64_t e = start + W * lane + v;
        r[v] = e < limit ? __ldcs(run + e) : typename element::raw{0};
      }
      out.vec = element::pack(r);
    }
  } else {
#pragma unroll
    for (int v = 0; v < W; ++v) {
      const std::int64_t e = start + lane + 32 * v;
      out.raw[v] = e < limit ? __ldcs(run + e) : typename element::raw{0};
    }
  }
  return out;
}

/// Rows [begin, end) of a K chunk of `kc` rows (kc <= chunk) that warp `warp` of `Warps`
/// takes in the along-n kernel: equal shares in whole rounds of `InFlight` rows, so that a
/// chunk shortened by the slice's end still keeps every warp busy; empty when begin >= end.
template <int Warps, int InFlight>
__host__ __device__ constexpr void warp_k_share(int kc, int warp, int& begin, int& end) noexcept {
  const int share = round_up(ceil_div(kc, Warps), InFlight);
  begin = warp * share;
  end = begin + share < kc ? begin + share : kc;
}

/// The along-n kernel's epilogue: every warp writes its partial sums of C(row0 + i, col0 +
/// its lanes' columns) to `smem` (A's chunk until now, `Warps` × Rows × columns floats); then
/// the block adds them in warp order (deterministic), each thread its share of the tile,
/// consecutive threads consecutive columns, and stores them. Warp 0 alone used to add and
/// store all Rows × W of its lanes' elements, a chain of 64 for 16 fp32 rows that kept small
/// products latency-bound (9 x 570 x 26 fp32: 2,700-4,800 instructions a warp).
template <int Rows, int W, bool Vector, int Warps, class In>
__device__ void sum_warps_and_store(const skinny_args<In>& g, const float (&acc)[Rows][W], float* smem, int warp,
                                    int lane, std::int64_t row0, std::int64_t col0) {
  constexpr int columns = 32 * W, threads = 32 * Warps;
  __syncthreads();  // A's last chunk is read by every warp before the space is reused
#pragma unroll
  for (int i = 0; i < Rows; ++i) {
#pragma unroll
    for (int v = 0; v < W; ++v) smem[(warp * Rows + i) * columns + lane_element<Vector, W>(lane, v)] = acc[i][v];
  }
  __syncthreads();
  // Only C's rows: 9 rows in the 16-row kernel add and store 9 of its 16.
  const int rows = g.m - row0 < Rows ? static_cast<int>(g.m - row0) : Rows;
#pragma unroll 4
  for (int e = static_cast<int>(threadIdx.x); e < rows * columns; e += threads) {
    const int i = e / columns, c = e % columns;
    float sum = smem[i * columns + c];
#pragma unroll
    for (int w = 1; w < Warps; ++w) sum += smem[(w * Rows + i) * columns + c];
    store_result(g, row0 + i, col0 + c, sum);
  }
}

/// One step of `sum_lanes_and_store`'s exchanges, then the next: a lane holding `Held`
/// values (v[0, Held)) keeps the half that its bit `S` of the lane index names, renumbered from
/// 0, adding its partner's (lane ^ S) copy of it; holding one, it adds its partner's.
template <int Held, int S, int N>
__device__ __forceinline__ void halve_across_lanes(float (&v)[N], int lane) {
  if constexpr (S > 0) {
    if constexpr (Held > 1) {
      const bool upper = (lane & S) != 0;
#pragma unroll
      for (int j = 0; j < Held / 2; ++j) {
        const float keep = upper ? v[Held / 2 + j] : v[j];
        const float give = upper ? v[j] : v[Held / 2 + j];
        v[j] = keep + __shfl_xor_sync(0xffffffffu, give, S);
      }
      halve_across_lanes<Held / 2, S / 2>(v, lane);
    } else {
      v[0] += __shfl_xor_sync(0xffffffffu, v[0], S);
      halve_across_lanes<1, S / 2>(v, lane);
    }
  }
}

/// The along-k kernel's epilogue: the lanes' partial sums of the Rows × Cols results
/// C(row0 + i, col0 + c) added across the warp by halving exchanges, in a fixed order
/// (deterministic). At each of five steps a lane keeps half of what it holds and adds its
/// partner's (lane ^ s) copy of that half; below one value a lane, partners add what they
/// both hold. So 32 to 64 results cost 31 to 62 shuffles, each lane storing 1 or 2 of them,
/// where a tree a result cost 160 to 320 and lane 0 stored all (16 x 17 x 396 fp32, 16 rows:
/// 17.8 us against cuBLAS's 8.0 on the H100).
template <int Rows, int Cols, class In>
__device__ void sum_lanes_and_store(const skinny_args<In>& g, const float (&acc)[Rows][Cols], int lane,
                                    std::int64_t row0, std::int64_t col0) {
  constexpr int values = Rows * Cols;
  static_assert((values & (values - 1)) == 0, "a power of two of results a warp");
  float v[values];
#pragma unroll
  for (int e = 0; e < values; ++e) v[e] = acc[e / Cols][e % Cols];
  halve_across_lanes<values, 16>(v, lane);
  // A lane holds results [lane * per, +per) (per = values / 32), or, below 32, each group of
  // 32 / values lanes result lane / group; its first lane stores it.
  constexpr int per = values >= 32 ? values / 32 : 1, group = values >= 32 ? 1 : 32 / values;
  if (lane % group == 0) {
#pragma unroll
    for (int j = 0; j < per; ++j) {
      const int e = lane / group * per + j;
      store_result(g, row0 + e / Cols, col0 + e % Cols, v[j]);
    }
  }
}

}  // namespace detail

/// The skinny kernel for a B contiguous along n (B(p, j) = b[p * ldb + j]). Block (x, y, z):
/// columns [x * C, +C) (C = `along_n_columns`: 128, or 256 for 16-bit with up to 4 rows; 64
/// `Narrow`), K slice y, rows [z * Rows, +Rows). `Vector`: one load of B's
/// `along_n_lane_columns` a lane (16 bytes, or 8 for 16-bit with 8 rows), which the launch
/// proved aligned; otherwise one element at a time, in the wide layout or the `Narrow` one.
template <class In, int Rows, bool Vector, bool Narrow = false>
__global__ void __launch_bounds__(skinny_policy::along_n_threads,
                                  resident_blocks_bound(skinny_policy::along_n_threads,
                                                        skinny_policy::along_n_min_blocks_per_sm))
    skinny_along_n_kernel(detail::skinny_args<In> g) {
  allow_dependent_launch();
  wait_for_prior_grids();  // the kernel before on the stream may still run
  static_assert(!(Vector && Narrow), "the narrow layout reads B one element at a time");
  constexpr int w = skinny_policy::along_n_lane_columns(Rows, skinny_elements_per_load<In>, Narrow);
  using element = detail::skinny_element<In, w>;  // one vector a lane: w columns
  constexpr int threads = skinny_policy::along_n_threads, warps = threads / 32;
  constexpr int chunk = skinny_policy::chunk_k, columns = 32 * w;
  constexpr int unroll =
      skinny_policy::along_n_rows_in_flight(Rows, skinny_elements_per_load<In>, Narrow);  // B rows in flight a lane
  static_assert((chunk / warps) % unroll == 0, "a warp's rows in whole rounds");
  constexpr int smem_floats = Rows * chunk > warps * Rows * columns ? Rows * chunk : warps * Rows * columns;
  __shared__ __align__(16) float smem[smem_floats];  // A's chunk, a_s[p * Rows + i]; then the warps' partial sums

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t row0 = std::int64_t{blockIdx.z} * Rows;
  const std::int64_t col0 = std::int64_t{blockIdx.x} * columns;
  std::int64_t k_begin = 0, k_end = 0;
  detail::k_slice(g, k_begin, k_end);
  const auto* b = reinterpret_cast<const typename element::raw*>(g.b);

  float acc[Rows][w];
#pragma unroll
  for (int i = 0; i < Rows; ++i) {
#pragma unroll
    for (int v = 0; v < w; ++v) acc[i][v] = 0.0f;
  }

  for (std::int64_t k0 = k_begin; k0 < k_end; k0 += chunk) {
    __syncthreads();  // the previous chunk of A is read by every warp
    const int kc = static_cast<int>(k_end - k0 < chunk ? k_end - k0 : chunk);
    detail::stage_a<In, Rows, chunk, threads, true>(g, row0, k0, k_end, kc, smem);  // the warps read [0, kc)
    __syncthreads();
    int p_begin = 0, p_end = 0;
    detail::warp_k_share<warps, unroll>(kc, warp, p_begin, p_end);
    for (int p = p_begin; p < p_end; p += unroll) {
      detail::skinny_loaded<In, w, Vector> r[unroll];
#pragma unroll
      for (int u = 0; u < unroll; ++u) {  // all loads first: unroll rows of B in flight
        if (p + u < p_end) r[u] = detail::load_lane<In, w, Vector>(b + (k0 + p + u) * g.ldb, col0, g.n, lane);
      }
#pragma unroll
      for (int u = 0; u < unroll; ++u) {
        if (p + u < p_end) {
          float bv[w];
          r[u].to_floats(bv);
          detail::accumulate_row<Rows>(smem + (p + u) * Rows, bv, acc);
        }
      }
    }
  }

  detail::sum_warps_and_store<Rows, w, Vector, warps>(g, acc, smem, warp, lane, row0, col0);
}

/// The skinny kernel for a B contiguous along k (B(p, j) = b[j * ldb + p]). Block (x, y, z):
/// columns [x * 32, +32) (4 per warp), K slice y, rows [z * Rows, +Rows). `Vector` as
/// `skinny_along_n_kernel`.
template <class In, int Rows, bool Vector>
__global__ void __launch_bounds__(skinny_policy::along_k_threads,
                                  resident_blocks_bound(skinny_policy::along_k_threads,
                                                        skinny_policy::along_k_min_blocks_per_sm))
    skinny_along_k_kernel(detail::skinny_args<In> g) {
  allow_dependent_launch();
  wait_for_prior_grids();  // the kernel before on the stream may still run
  using element = detail::skinny_element<In>;
  constexpr int threads = skinny_policy::along_k_threads, warps = threads / 32;
  constexpr int chunk = skinny_policy::chunk_k, cols = skinny_policy::along_k_warp_columns;
  constexpr int w = element::width;  // k a lane per step
  constexpr int step = 32 * w;       // k a warp per step: 128 fp32, 256 16-bit
  constexpr int steps_in_flight = skinny_policy::along_k_steps_in_flight(Rows, w);
  static_assert(chunk % (step * steps_in_flight) == 0, "a chunk in whole rounds");
  __shared__ __align__(16) float a_s[Rows * chunk];  // a_s[i * chunk + p]

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t row0 = std::int64_t{blockIdx.z} * Rows;
  const std::int64_t col0 = std::int64_t{blockIdx.x} * (warps * cols) + warp * cols;
  std::int64_t k_begin = 0, k_end = 0;
  detail::k_slice(g, k_begin, k_end);
  const auto* b = reinterpret_cast<const typename element::raw*>(g.b);

  float acc[Rows][cols];
#pragma unroll
  for (int i = 0; i < Rows; ++i) {
#pragma unroll
    for (int c = 0; c < cols; ++c) acc[i][c] = 0.0f;
  }

  for (std::int64_t k0 = k_begin; k0 < k_end; k0 += chunk) {
    __syncthreads();  // the previous chunk of A is read by every warp
    // The whole chunk, zeros past the slice (the rounds below read up to kc's last whole
    // round). Staging less for a short K added 4-36 bytes of spills to the fp32 kernels.
    detail::stage_a<In, Rows, chunk, threads, false>(g, row0, k0, k_end, chunk, a_s);
    __syncthreads();
    const int kc = static_cast<int>(k_end - k0 < chunk ? k_end - k0 : chunk);
    for (int s0 = 0; s0 < kc; s0 += step * steps_in_flight) {
      detail::skinny_loaded<In, w, Vector> r[steps_in_flight][cols];
#pragma unroll
      for (int t = 0; t < steps_in_flight; ++t) {  // all loads first
#pragma unroll
        for (int c = 0; c < cols; ++c) {
          if (col0 + c < g.n)
            r[t][c] = detail::load_lane<In, w, Vector>(b + (col0 + c) * g.ldb + k0, s0 + t * step, kc, lane);
        }
      }
#pragma unroll
      for (int t = 0; t < steps_in_flight; ++t) {
        float bv[cols][w];
#pragma unroll
        for (int c = 0; c < cols; ++c) r[t][c].to_floats(bv[c]);
        const int p = s0 + t * step;  // past kc: zeros in a_s and in bv
#pragma unroll
        for (int i = 0; i < Rows; ++i) {
          float a_r[w];
          if constexpr (Vector) {
#pragma unroll
            for (int q = 0; q < w; q += 4) {
              const float4 v = *reinterpret_cast<const float4*>(a_s + i * chunk + p + w * lane + q);
              a_r[q] = v.x, a_r[q + 1] = v.y, a_r[q + 2] = v.z, a_r[q + 3] = v.w;
            }
          } else {
#pragma unroll
            for (int v = 0; v < w; ++v) a_r[v] = a_s[i * chunk + p + detail::lane_element<false, w>(lane, v)];
          }
#pragma unroll
          for (int c = 0; c < cols; ++c) {
#pragma unroll
            for (int v = 0; v < w; ++v) acc[i][c] = fmaf(a_r[v], bv[c][v], acc[i][c]);
          }
        }
      }
    }
  }

  detail::sum_lanes_and_store<Rows, cols>(g, acc, lane, row0, col0);
}

namespace detail {

/// Whether the CUDA-core skinny kernel loads the oriented problem `g`'s B (`rows` rows a
/// block) a vector at a time: its pointer aligned to the vector and its leading dimension a
/// multiple of the vector's elements (16 bytes, or 8 for the 16-bit along-n kernel with 8
/// rows). Otherwise one element at a time (along n in the wide layout, or the narrow one
/// where the plan says so: `skinny_policy::prefers_narrow`).
template <class In>
[[nodiscard]] bool skinny_vector_loads(const skinny_args<In>& g, int rows) noexcept {
  const int elements = g.b_n_contiguous ? skinny_policy::along_n_lane_columns(rows, skinny_elements_per_load<In>)
                                        : skinny_elements_per_load<In>;
  return is_aligned(g.b, elements * sizeof(In)) && g.ldb % elements == 0;
}

}  // namespace detail

/// The plan of the skinny rung for `p` on `sm_count` SMs: the tensor-core kernel's
/// (`skinny_mma_plan`) where `skinny_uses_mma` says so; otherwise rows
/// per pass (`block_m`: 1, half or all of `skinny_max_rows<In>`), columns per block
/// (`block_n`), the K chunk (`block_k`) and split-K (`plan_split_k` while the blocks are
/// fewer than the resident slots: slots / tiles slices, at least
/// `skinny_policy::min_k_per_split_for` deep, at most `skinny_policy::max_splits`, the depth a
/// multiple of `skinny_policy::split_unit_k`, not of the chunk; `requested` as
/// `split_k_options::split_k`, at most one slice per unit).
template <class In>
[[nodiscard]] gemm_plan skinny_plan(const gemm_problem<In, float>& p, int requested, int sm_count) {
  const detail::skinny_args<In> g = detail::skinny_orient(p);
  if constexpr (!std::is_same_v<In, float>) {
    if (skinny_uses_mma(g)) return skinny_mma_plan<In>(p, requested, sm_count);
  }
  const bool along_n = g.b_n_contiguous;
  const int rows = detail::skinny_row_bucket<In>(g.m);
  constexpr int elements = skinny_elements_per_load<In>;
  const auto plan_for = [&](bool narrow) {
    gemm_plan plan;
    plan.rung = gemm_rung::skinny;
    plan.block_m = rows;
    plan.block_n = along_n ? skinny_policy::along_n_columns(rows, elements, narrow)
                           : skinny_policy::along_k_threads / 32 * skinny_policy::along_k_warp_columns;
    plan.block_k = skinny_policy::chunk_k;
    plan.min_blocks_per_sm =
        along_n ? skinny_policy::along_n_min_blocks_per_sm : skinny_policy::along_k_min_blocks_per_sm;
    detail::finish_skinny_plan(plan, p, g, skinny_policy::split_unit_k(along_n, rows, elements, narrow), requested,
                               sm_count, skinny_policy::min_k_per_split_for(along_n, rows, elements, narrow),
                               skinny_policy::max_splits, skinny_max_rows<In>, false);
    return plan;
  };
  const gemm_plan wide = plan_for(false);
  if (!along_n || detail::skinny_vector_loads(g, rows)) return wide;
  const gemm_plan narrow = plan_for(true);
  return skinny_policy::prefers_narrow(detail::skinny_blocks(wide, g), detail::skinny_blocks(narrow, g),
                                       std::int64_t{sm_count} * skinny_policy::along_n_min_blocks_per_sm)
             ? narrow
             : wide;
}

namespace detail {

/// Enqueues the CUDA-core skinny kernel on `s` for the oriented problem `g` of `rows` rows
/// a block (a bucket of `skinny_row_bucket`), `k_per_split` and `slice_stride` already set,
/// in `split_k` slices, along n in the `narrow` layout if asked (B read one element at a time).
/// Throws `std::invalid_argument` if the grid is too large.
template <class In>
void launch_skinny_core_kernel(const skinny_args<In>& g, int rows, bool narrow, int split_k, cuda::stream_ref s) {
  const bool along_n = g.b_n_contiguous;
  const bool vector = skinny_vector_loads(g, rows);
  const int columns = along_n ? skinny_policy::along_n_columns(rows, skinny_elements_per_load<In>, narrow)
                              : skinny_policy::along_k_threads / 32 * skinny_policy::along_k_warp_columns;
  const std::int64_t blocks_n = ceil_div<std::int64_t>(g.n, columns);
  const std::int64_t row_groups = ceil_div<std::int64_t>(g.m, rows);
  FOUNDRY_EXPECTS(blocks_n <= max_grid_x && row_groups <= max_grid_yz,
                  "GEMM too large for the skinny kernel's grid: " + std::to_string(blocks_n) + " column tiles, " +
                      std::to_string(row_groups) + " row groups");
  launch_config config;
  config.block = dim3(along_n ? skinny_policy::along_n_threads : skinny_policy::along_k_threads, 1, 1);
  config.dependency = launch_dependency::programmatic;  // the kernels wait before their first access
  config.grid =
      dim3(static_cast<unsigned>(blocks_n), static_cast<unsigned>(split_k), static_cast<unsigned>(row_groups));
  // One of fifteen instantiations: along k [vector][row bucket 1, half, all]; along n
  // [scalar, vector, narrow][row bucket].
  using kernel_type = void (*)(skinny_args<In>);
  constexpr int half = skinny_max_rows<In> / 2, all = skinny_max_rows<In>;
  constexpr kernel_type along_k_kernels[2][3] = {
      {skinny_along_k_kernel<In, 1, false>, skinny_along_k_kernel<In, half, false>,
       skinny_along_k_kernel<In, all, false>},
      {skinny_along_k_kernel<In, 1, true>, skinny_along_k_kernel<In, half, true>,
       skinny_along_k_kernel<In, all, true>}};
  constexpr kernel_type along_n_kernels[3][3] = {
      {skinny_along_n_kernel<In, 1, false>, skinny_along_n_kernel<In, half, false>,
       skinny_along_n_kernel<In, all, false>},
      {skinny_along_n_kernel<In, 1, true>, skinny_along_n_kernel<In, half, true>, skinny_along_n_kernel<In, all, true>},
      {skinny_along_n_kernel<In, 1, false, true>, skinny_along_n_kernel<In, half, false, true>,
       skinny_along_n_kernel<In, all, false, true>}};
  const int bucket = rows == 1 ? 0 : rows == half ? 1 : 2;
  launch(s, config,
         along_n ? along_n_kernels[narrow   ? 2
                                   : vector ? 1
                                            : 0][bucket]
                 : along_k_kernels[vector][bucket],
         g);
}

}  // namespace detail

/// Enqueues the skinny kernel for `p` as `plan` (from `skinny_plan`) says, on `s`
/// (asynchronous): the tensor-core kernel where `skinny_uses_mma` says so (16-bit inputs, 2
/// rows or more on the small side), else the CUDA-core one. `p` must already be valid (as
/// `foundry::gemm` checks it); an empty C launches nothing; K = 0 gives C = beta * C; C is
/// not read when beta == 0. Vector loads of the large operand when its pointer is aligned
/// to 16 bytes and its leading dimension a multiple of `skinny_elements_per_load<In>` (4
/// fp32, 8 16-bit); otherwise scalar loads. Split-K as `detail::split_k_output`
/// (`workspace` empty: allocated on `s`). Throws `std::invalid_argument` if `plan` is not
/// a skinny plan for `p`, the grid is too large or a caller workspace too small,
/// `cuda_error` if an allocation or a launch fails.
template <class In>
void launch_skinny(const gemm_plan& plan, const gemm_problem<In, float>& p, cuda::std::span<float> workspace,
                   cuda::stream_ref s) {
  if (p.m == 0 || p.n == 0) return;
  const detail::skinny_args<In> oriented = detail::skinny_orient(p);
  const bool along_n = oriented.b_n_contiguous;
  const bool mma = skinny_uses_mma(oriented);
  const int rows = mma ? skinny_mma_policy::row_bucket(oriented.m) : detail::skinny_row_bucket<In>(oriented.m);
  constexpr int elements = skinny_elements_per_load<In>;
  // The CUDA-core kernel's narrow layout where the plan's tile is its width (B read one
  // element at a time); the tensor-core kernel's warps share K where the tile is one warp's.
  const bool narrow = !mma && along_n && !detail::skinny_vector_loads(oriented, rows) &&
                      plan.block_n == skinny_policy::along_n_columns(rows, elements, true);
  const bool shared_k =
      mma && rows == skinny_mma_policy::shared_k_rows && plan.block_n == skinny_mma_policy::block_large(along_n, true);
  const int unit =
      mma ? skinny_mma_policy::split_unit_k(along_n) : skinny_policy::split_unit_k(along_n, rows, elements, narrow);
  const int core_columns = along_n ? skinny_policy::along_n_columns(rows, elements, narrow)
                                   : skinny_policy::along_k_threads / 32 * skinny_policy::along_k_warp_columns;
  FOUNDRY_EXPECTS(
      plan.rung == gemm_rung::skinny && plan.block_m == rows && plan.split_k >= 1 &&
          (mma ? shared_k || plan.block_n == skinny_mma_policy::block_large(along_n) : plan.block_n == core_columns) &&
          (plan.split_k == 1 || (plan.k_per_split % unit == 0 && plan.k_per_split * plan.split_k >= p.k)),
      "launch_skinny: the plan (" + plan.describe() + ") is not a skinny plan for this problem");
  const detail::split_k_output<In> out(p, plan.split_k, workspace, s);
  detail::skinny_args<In> g = detail::skinny_orient(out.problem());
  g.k_per_split = plan.split_k > 1 ? plan.k_per_split : std::max<std::int64_t>(p.k, 1);
  g.slice_stride = out.slice_stride();
  if constexpr (!std::is_same_v<In, float>) {
    if (mma) {
      detail::launch_skinny_mma_kernel(g, rows, shared_k, plan.split_k, s);
      out.reduce(s);
      return;
    }
  }
  detail::launch_skinny_core_kernel(g, rows, narrow, plan.split_k, s);
  out.reduce(s);
}

}  // namespace foundry::gemm_kernels
