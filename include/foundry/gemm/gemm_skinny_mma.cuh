#pragma once
/// \file
/// The skinny rung's kernel for 16-bit inputs (fp16, bf16) with 2 or more rows on the small
/// side (`foundry::gemm` takes the rung up to 8; named, it holds 8, 16 or 32 rows a row
/// group): the same memory-bound product as gemm_skinny.cuh (the large operand read from
/// DRAM once), with the multiply-adds on the tensor cores (`mma.sync` m16n8k16, fp32
/// accumulators; sm_80 and later, as rung 4). `skinny_uses_mma` says where it runs.
///
/// Measured (H100, session 13, against the CUDA-core kernel on the same machine): 8 x 16384
/// x 16384 bf16 297 -> 192 us (cuBLAS 176: 93% of the copy ceiling), 16384 x 8 x 16384 361
/// -> 226 us (cuBLAS 188), 2 x 5851 x 224 31.5 -> 20.5 us. Slower on small problems with 9 to
/// 32 rows (1950 x 23 x 670: 52 us against rung 4's 11.8) and along k with scalar loads, which
/// therefore stay where they were.
///
/// Why. On the CUDA cores each element of the large operand costs a conversion to float
/// and one FMA per small row, plus the shared-memory reads of the small operand: with 8
/// rows that held 16-bit products to 1.5-1.8 TB/s on the H200 (0.38-0.42x cuBLAS on
/// 16384 x 8 x 16384), and from 16 rows the tiled rungs took them at ~2 TB/s. One mma
/// does 16 x 8 x 16 multiply-adds from registers the loads filled directly, so the
/// arithmetic no longer bounds the kernel: the small side is padded to 8, 16 or 32 rows
/// (`skinny_mma_policy::row_bucket`) at no cost that shows.
///
/// Layout. The problem is oriented as in gemm_skinny.cuh (`skinny_orient`): the small
/// operand is A, m × k (m <= 32 per row group), the large one B, k × n, and the kernel
/// computes C^T = B^T A^T tile by tile: B^T's rows are the mma's 16 rows (M), A's rows its
/// 8 columns (N), so the large operand is always the mma's A fragment and is loaded from
/// global memory straight into it, 16 bytes a lane:
/// - **B contiguous along k** (`AlongN = false`): a lane loads 8 adjacent k of one row of
///   B^T, which is what an A fragment holds of two k pairs of two mma steps, once K is
///   permuted inside each block of 32 (below);
/// - **B contiguous along n** (`AlongN = true`): a lane loads 8 adjacent columns of 8 rows
///   of B (k 8c..8c+7 for lane c of its quad) and pairs the rows' elements with byte
///   permutes, giving the k pairs of 4 mma tiles of 16 columns (64 columns a warp).
///
/// K order. A sum over k does not depend on the order of its terms, so inside each block
/// of 32 k the kernel feeds the mma the k it holds in the order that suits the loads:
/// lane c of a quad holds physical k 8c..8c+7, which are logical k (mma step m, pair e)
/// `16m + 8e + 2c + {0, 1}` for physical `8c + 4m + 2e + {0, 1}` (`skinny_mma_logical_k`).
/// The small operand, staged in shared memory a chunk of K at a time, is read with the same
/// permutation: k-contiguous A is staged as rows of k (`[i][k]`) and one 16-byte read
/// gives a lane its pairs for both mma steps; m-contiguous A is staged as rows of m
/// (`[k][i]`), each k row placed at its logical position, and read with `ldmatrix.trans`.
///
/// Small problems. A block's 4 warps normally hold their own 64 columns (along n) or 16
/// rows of B^T (along k), each walking the whole K slice one round of loads at a time, so a
/// product with few such tiles and a short K (2 x 5851 x 224: 23 blocks of 256 columns,
/// 7 rounds a warp, all 92 warps a round of DRAM latency apart) keeps a small fraction of
/// the loads in flight that the device needs. With 8 rows, where the blocks of that plan
/// would fill less than half the resident slots even split (`skinny_mma_policy::
/// shares_k`), the 4 warps of a block hold the same tile and take turns at its rounds
/// (`SharedK`): four times the blocks, each warp a quarter of the rounds, and the partial
/// sums added through shared memory before the one store. Measured (H100, session 14, both
/// plans in one binary, hot): 2 x 5851 x 224 bf16 20.2 -> 8.9 us (cuBLAS 7.8), 6 x 9503 x 662
/// 33.7 -> 15.5 (12.1), 3 x 58 x 2835 fp16 28.6 -> 12.6 (7.5), 4 x 4096 x 4096 21.3 -> 17.3.
///
/// Zeros. Rows past m and k past the slice's end are staged as zeros, and the large
/// operand's loads past n or the slice's end read nothing and give zeros, so an Inf or NaN
/// of the next slice never meets a zero of this one; padded rows of C are never stored.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/gemm/detail/mma_sync.cuh>
#include <foundry/gemm/detail/skinny_args.cuh>
#include <foundry/gemm/detail/split_k.cuh>
#include <foundry/gemm/gemm_plan.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/launch/dependent_launch.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_bounds.cuh>
#include <foundry/launch/launch_config.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstdint>
#include <string>
#include <type_traits>

namespace foundry::gemm_kernels {

/// The shape of the tensor-core skinny kernel. Each lane keeps 8 loads of 16 bytes of the
/// large operand in flight (4 KiB a warp; 64 KiB an SM at 4 blocks, 48 KiB at 3: Little's
/// law at ~32 B/ns an SM and ~1.5 µs of loaded latency).
struct skinny_mma_policy {
  /// 4 warps a block, each over its own rows (along k) or columns (along n) of the large operand.
  static constexpr int threads = 128;
  /// K of the small operand staged in shared memory per pass (41 KiB at 32 rows).
  static constexpr int chunk_k = 512;
  /// Fewest rows of the small side for which `foundry::gemm` takes this kernel: a vector
  /// (one row) stays on the CUDA cores, where one FMA per element already keeps up with
  /// the loads (3.6-4.0 TB/s on the H200).
  static constexpr int min_rows = 2;
  /// Most rows a block holds (a row group): 4 mma tiles of 8.
  static constexpr int max_rows = 32;
  /// Along k: tiles of 16 rows of B^T a warp holds. One, so that a round's 8 loads a lane
  /// take 256 contiguous bytes of each of 16 rows rather than 128 of each of 32. H100,
  /// session 30 (runs/session30/skinny_along_k_probe.cu: the variants in one call, means of
  /// two runs each), bf16: 16384 x 8 x 16384 228 -> 209 us (0.78 -> 0.85 of the device copy
  /// over A's bytes), 16384 x 2 x 16384 223 -> 200, 4096 x 8 x 65536 221 -> 199, 2 x 16384 x
  /// 16384 with B column-major 216 -> 189; 8 blocks of 32 k a round (16 loads a lane) ran
  /// the same. The 16-row kernel, which only a named rung runs for 16-bit inputs, lost:
  /// 16384 x 16 x 16384 242 -> 307 us (`foundry::gemm` takes the wgmma rung there: 176).
  static constexpr int along_k_row_tiles = 1;
  /// Along k: blocks of 32 k a warp loads per round (4: 256 contiguous bytes of each row).
  static constexpr int along_k_blocks_in_flight = 4;
  /// Along n: columns of B a warp holds (4 mma tiles of 16), one block of 32 k per round.
  static constexpr int along_n_warp_columns = 64;
  /// Warps of a block.
  static constexpr int warps = threads / 32;
  /// Shallowest slice of an automatic split: as `skinny_policy::min_k_per_split`.
  static constexpr std::int64_t min_k_per_split = 256;
  /// Most slices of an automatic split: as `skinny_policy::max_splits`.
  static constexpr std::int64_t max_splits = 256;

  /// Rows a block holds for `m` rows of the small side: 8, 16 or 32 (a row group beyond).
  [[nodiscard]] __host__ __device__ static constexpr int row_bucket(std::int64_t m) noexcept {
    return m <= 8 ? 8 : m <= 16 ? 16 : 32;
  }
  /// Blocks resident per SM, as built: 4 with 8 rows, 3 from 16 (32 or 64 accumulators a
  /// lane along n: at 128 registers the 16-row kernel spilled).
  [[nodiscard]] __host__ __device__ static constexpr int min_blocks_per_sm(int rows) noexcept {
    return rows >= 16 ? 3 : 4;
  }
  /// Rows (along k) or columns (along n) of the large operand a warp holds.
  [[nodiscard]] __host__ __device__ static constexpr int warp_large(bool along_n) noexcept {
    return along_n ? along_n_warp_columns : along_k_row_tiles * 16;
  }
  /// Rows (along k) or columns (along n) of the large operand per block: the warps' own
  /// (256 or 64), or one warp's when they share K (`shared_k`: 64 or 16).
  [[nodiscard]] __host__ __device__ static constexpr int block_large(bool along_n, bool shared_k = false) noexcept {
    return (shared_k ? 1 : warps) * warp_large(along_n);
  }
  /// K one round of a warp's loads covers: 32 along n, 128 along k. A split's slices are
  /// whole rounds, so a slice starts on a multiple of 8 (vector loads stay aligned).
  [[nodiscard]] __host__ __device__ static constexpr int split_unit_k(bool along_n) noexcept {
    return along_n ? 32 : 32 * along_k_blocks_in_flight;
  }
  /// Row bucket of the warps that share K: 8 (what `foundry::gemm` routes here).
  static constexpr int shared_k_rows = 8;
  /// Whether a plan of `blocks` blocks (tiles x slices, warps on their own tiles) with
  /// `rows` rows a block goes to warps sharing K: 8 rows and fewer blocks than half the
  /// `slots` resident (then even the split could not fill the device; large products such
  /// as 8 x 16384 x 16384, 64 tiles x 8 slices of 528 slots, keep their plan).
  [[nodiscard]] __host__ __device__ static constexpr bool shares_k(int rows, std::int64_t blocks,
                                                                   std::int64_t slots) noexcept {
    return rows == shared_k_rows && 2 * blocks < slots;
  }
  /// Shallowest slice of an automatic split when the warps share K: one round along n (32),
  /// a round for each warp along k (512). Along n, slices of one round ran faster than the
  /// rounds for each warp that the rule asked before (H100, session 25's plan-space, bf16):
  /// 2 x 5851 x 224 7.9-8.1 us at 4-7 slices against 10.5 unsplit, 3 x 58 x 2835 8.4 at 30
  /// slices against 9.1 at 18. Along k, unmeasured, the rule stays.
  [[nodiscard]] __host__ __device__ static constexpr std::int64_t shared_min_k_per_split(bool along_n) noexcept {
    return along_n ? split_unit_k(along_n) : std::int64_t{warps} * split_unit_k(along_n);
  }
};

namespace detail {

/// Whether rows of 16-bit elements at `p`, `ld` apart, take 16-byte loads 8 elements at a
/// time from any multiple of 8: `p` on a 16-byte boundary and `ld` a multiple of 8.
template <class In>
[[nodiscard]] __host__ __device__ bool rows_take_16_byte_loads(const In* p, std::int64_t ld) noexcept {
  return is_aligned(p, 16) && ld % 8 == 0;
}

/// The logical k (position in the mma steps of a block of 32) of physical k `p` (0..31):
/// `8c + 4m + 2e + b` -> `16m + 8e + 2c + b` (see the file comment).
__host__ __device__ constexpr int skinny_mma_logical_k(int p) noexcept {
  return 16 * ((p >> 2) & 1) + 8 * ((p >> 1) & 1) + 2 * (p >> 3) + (p & 1);
}

/// Eight adjacent 16-bit elements `run[start..start + 8)` that are below `limit`, zeros
/// past it: one 16-byte load when `Vector` (the caller proved `run + start` aligned) and
/// all eight are inside, else scalar loads. `Stream`: the large operand, read once
/// (streaming hint); otherwise the small one, read through L1.
template <bool Vector, bool Stream>
__device__ __forceinline__ uint4 load_8x16(const unsigned short* run, std::int64_t start, std::int64_t limit) {
  if (Vector && start + 7 < limit) {
    const auto* v = reinterpret_cast<const uint4*>(run + start);
    return Stream ? __ldcs(v) : __ldg(v);
  }
  unsigned w[4] = {0, 0, 0, 0};
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    if (start + e < limit) {
      const unsigned x = Stream ? __ldcs(run + start + e) : __ldg(run + start + e);
      w[e / 2] |= x << (16 * (e % 2));
    }
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

/// Word `i` (0..3) of a 16-byte vector; `i` is a constant once the loops are unrolled.
__device__ __forceinline__ unsigned word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

/// Stages rows [row0, row0 + Rows) and k [k0, k0 + Chunk) of the small operand into `a_s`,
/// zeros past m and past `k_end`, 16 bytes at a time: as rows of k (`[i][k]`, row stride
/// `StrideIK`) when A is k-contiguous, else as rows of m (`[k][i]`, row stride `StrideKI`)
/// with each row at its logical k (`skinny_mma_logical_k`). `vector`: A's pointer and
/// leading dimension allow 16-byte loads. All threads of the block call it.
template <class In, int Rows, int Chunk, int StrideIK, int StrideKI>
__device__ void stage_small(const skinny_args<In>& g, std::int64_t row0, std::int64_t k0, std::int64_t k_end,
                            bool vector, unsigned short* __restrict__ a_s) {
  const auto* a = reinterpret_cast<const unsigned short*>(g.a);
  constexpr int units = Rows * Chunk / 8;  // 16-byte pieces of the chunk
  static_assert(units % skinny_mma_policy::threads == 0, "whole rounds of the block");
  if (g.a_k_contiguous) {
#pragma unroll 4
    for (int u = static_cast<int>(threadIdx.x); u < units; u += skinny_mma_policy::threads) {
      const int i = u / (Chunk / 8), q = u % (Chunk / 8);
      const std::int64_t row = row0 + i;
      uint4 v = make_uint4(0, 0, 0, 0);
      if (row < g.m) {
        v = vector ? load_8x16<true, false>(a + row * g.lda, k0 + 8 * q, k_end)
                   : load_8x16<false, false>(a + row * g.lda, k0 + 8 * q, k_end);
      }
      *reinterpret_cast<uint4*>(a_s + i * StrideIK + 8 * q) = v;
    }
  } else {
#pragma unroll 4
    for (int u = static_cast<int>(threadIdx.x); u < units; u += skinny_mma_policy::threads) {
      const int p = u / (Rows / 8), q = u % (Rows / 8);
      const std::int64_t k = k0 + p;
      uint4 v = make_uint4(0, 0, 0, 0);
      if (k < k_end) {
        v = vector ? load_8x16<true, false>(a + k * g.lda, row0 + 8 * q, g.m)
                   : load_8x16<false, false>(a + k * g.lda, row0 + 8 * q, g.m);
      }
      const int logical = (p & ~31) | skinny_mma_logical_k(p & 31);
      *reinterpret_cast<uint4*>(a_s + logical * StrideKI + 8 * q) = v;
    }
  }
}

}  // namespace detail

/// The tensor-core skinny kernel. Block (x, y, z): `skinny_mma_policy::block_large` rows
/// (along k) or columns (along n) of the large operand from x, K slice y, rows
/// [z * Rows, +Rows) of the small side. `Vector`: 16-byte loads of the large operand,
/// whose alignment the launch proved. `SharedK`: the warps hold one tile and take turns at
/// its rounds of K (see the file comment).
template <class In, int Rows, bool AlongN, bool Vector, bool SharedK = false>
__global__ void __launch_bounds__(skinny_mma_policy::threads,
                                  resident_blocks_bound(skinny_mma_policy::threads,
                                                        skinny_mma_policy::min_blocks_per_sm(Rows)))
    skinny_mma_kernel(detail::skinny_args<In> g) {
  allow_dependent_launch();
  wait_for_prior_grids();  // the kernel before on the stream may still run
  using policy = skinny_mma_policy;
  static_assert(Rows == 8 || Rows == 16 || Rows == 32, "8, 16 or 32 rows: 1, 2 or 4 mma tiles of 8");
  constexpr int tiles_n = Rows / 8;
  constexpr int tiles_m = AlongN ? policy::along_n_warp_columns / 16 : policy::along_k_row_tiles;
  constexpr int blocks_per_round = AlongN ? 1 : policy::along_k_blocks_in_flight;
  constexpr int round = 32 * blocks_per_round;
  // Along n, 8 rows of B for each quad's 8 k; along k, both 8-row halves of each tile for
  // each block of 32 k.
  constexpr int loads = AlongN ? 8 : 2 * tiles_m * blocks_per_round;
  constexpr int warp_step = SharedK ? policy::warps * round : round;  // a warp's stride through a chunk
  constexpr int chunk = policy::chunk_k;
  static_assert(chunk % round == 0, "a chunk in whole rounds");
  // Row strides, in elements, that keep the reads of a quarter warp on distinct banks:
  // [i][k]: 16-byte reads at 8c of rows g: 16 words mod 32 between rows; [k][i]: the 8
  // rows of an ldmatrix matrix, 16 bytes each, spread over the 32 banks.
  constexpr int stride_ik = chunk + 32;
  constexpr int stride_ki = Rows == 8 ? 8 : Rows + 8;
  constexpr int smem_elements = Rows * stride_ik > chunk * stride_ki ? Rows * stride_ik : chunk * stride_ki;
  __shared__ __align__(16) unsigned short a_s[smem_elements];

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int group = lane / 4, quad = lane % 4;  // the mma's row group and thread in group
  const std::int64_t row0 = std::int64_t{blockIdx.z} * Rows;
  const std::int64_t large0 = std::int64_t{blockIdx.x} * policy::block_large(AlongN, SharedK) +
                              (SharedK ? 0 : warp * policy::warp_large(AlongN));
  std::int64_t k_begin = 0, k_end = 0;
  detail::k_slice(g, k_begin, k_end);
  const auto* b = reinterpret_cast<const unsigned short*>(g.b);
  const bool small_vector = detail::rows_take_16_byte_loads(g.a, g.lda);

  float acc[tiles_m][tiles_n][4];
#pragma unroll
  for (int t = 0; t < tiles_m; ++t) {
#pragma unroll
    for (int nt = 0; nt < tiles_n; ++nt) acc[t][nt][0] = acc[t][nt][1] = acc[t][nt][2] = acc[t][nt][3] = 0.0f;
  }

  for (std::int64_t k0 = k_begin; k0 < k_end; k0 += chunk) {
    __syncthreads();  // every warp has read the previous chunk
    detail::stage_small<In, Rows, chunk, stride_ik, stride_ki>(g, row0, k0, k_end, small_vector, a_s);
    __syncthreads();
    const int kc = static_cast<int>(k_end - k0 < chunk ? k_end - k0 : chunk);
    for (int r0 = SharedK ? warp * round : 0; r0 < kc; r0 += warp_step) {
      // All loads of the round first: 8 vectors of 16 bytes a lane (`loads`).
      uint4 v[loads];
      if constexpr (AlongN) {
        // Rows k0 + r0 + 8 * quad + q of B, columns large0 + 8 * group .. + 7.
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          const std::int64_t p = k0 + r0 + 8 * quad + q;
          v[q] = p < k_end ? detail::load_8x16<Vector, true>(b + p * g.ldb, large0 + 8 * group, g.n)
                           : make_uint4(0, 0, 0, 0);
        }
      } else {
        // Row large0 + 16 t + group (+ 8 for h = 1) of B^T, k k0 + r0 + 32 u + 8 * quad .. + 7.
#pragma unroll
        for (int u = 0; u < blocks_per_round; ++u) {
#pragma unroll
          for (int t = 0; t < tiles_m; ++t) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const std::int64_t row = large0 + 16 * t + 8 * h + group;
              v[(u * tiles_m + t) * 2 + h] =
                  row < g.n ? detail::load_8x16<Vector, true>(b + row * g.ldb, k0 + r0 + 32 * u + 8 * quad, k_end)
                            : make_uint4(0, 0, 0, 0);
            }
          }
        }
      }
#pragma unroll
      for (int u = 0; u < blocks_per_round; ++u) {
        const int kb = r0 + 32 * u;  // this block of 32 within the chunk
        if (kb >= kc) break;
        // The small operand's fragments for both mma steps: bf[nt][2m + e].
        std::uint32_t bf[tiles_n][4];
#pragma unroll
        for (int nt = 0; nt < tiles_n; ++nt) {
          if (g.a_k_contiguous) {
            const uint4 x = *reinterpret_cast<const uint4*>(a_s + (8 * nt + group) * stride_ik + kb + 8 * quad);
            bf[nt][0] = x.x, bf[nt][1] = x.y, bf[nt][2] = x.z, bf[nt][3] = x.w;
          } else {
            detail::ldmatrix_x4<true>(bf[nt], detail::shared_address(a_s + (kb + lane) * stride_ki + 8 * nt));
          }
        }
#pragma unroll
        for (int m = 0; m < 2; ++m) {
#pragma unroll
          for (int t = 0; t < tiles_m; ++t) {
            std::uint32_t af[4];
            if constexpr (AlongN) {
              // Tile t: rows group <-> column 8 group + 2t, group + 8 <-> 8 group + 2t + 1.
              const std::uint32_t lo0 = detail::word(v[4 * m], t), hi0 = detail::word(v[4 * m + 1], t);
              const std::uint32_t lo1 = detail::word(v[4 * m + 2], t), hi1 = detail::word(v[4 * m + 3], t);
              af[0] = __byte_perm(lo0, hi0, 0x5410), af[1] = __byte_perm(lo0, hi0, 0x7632);
              af[2] = __byte_perm(lo1, hi1, 0x5410), af[3] = __byte_perm(lo1, hi1, 0x7632);
            } else {
              const uint4 &x = v[(u * tiles_m + t) * 2], &y = v[(u * tiles_m + t) * 2 + 1];
              af[0] = detail::word(x, 2 * m), af[1] = detail::word(y, 2 * m);
              af[2] = detail::word(x, 2 * m + 1), af[3] = detail::word(y, 2 * m + 1);
            }
#pragma unroll
            for (int nt = 0; nt < tiles_n; ++nt) {
              const std::uint32_t bm[2] = {bf[nt][2 * m], bf[nt][2 * m + 1]};
              detail::mma_m16n8k16<In>(acc[t][nt], af, bm);
            }
          }
        }
      }
    }
  }

  if constexpr (SharedK) {
    // Warps 1.. leave their partial sums in shared memory (the small operand's chunks are
    // read), lane-minor so that a warp's stores and reads hit 32 banks; warp 0 adds them.
    constexpr int per_lane = tiles_m * tiles_n * 4;
    static_assert((policy::warps - 1) * per_lane * 32 * sizeof(float) <= sizeof(a_s), "room for the partial sums");
    float* partial = reinterpret_cast<float*>(a_s);
    float* sums = &acc[0][0][0];  // indexed by constants once unrolled: stays in registers
    __syncthreads();
    if (warp > 0) {
#pragma unroll
      for (int e = 0; e < per_lane; ++e) partial[((warp - 1) * per_lane + e) * 32 + lane] = sums[e];
    }
    __syncthreads();
    if (warp > 0) return;
#pragma unroll
    for (int w = 0; w < policy::warps - 1; ++w) {
#pragma unroll
      for (int e = 0; e < per_lane; ++e) sums[e] += partial[(w * per_lane + e) * 32 + lane];
    }
  }

  // acc[t][nt]: rows group and group + 8 of tile t (of the large side), columns
  // 2 quad, 2 quad + 1 of tile nt (rows of the small side).
#pragma unroll
  for (int t = 0; t < tiles_m; ++t) {
    const std::int64_t large_lo = AlongN ? large0 + 8 * group + 2 * t : large0 + 16 * t + group;
    const std::int64_t large_hi = AlongN ? large_lo + 1 : large_lo + 8;
#pragma unroll
    for (int nt = 0; nt < tiles_n; ++nt) {
      const std::int64_t i = row0 + 8 * nt + 2 * quad;
      detail::store_result(g, i, large_lo, acc[t][nt][0]);
      detail::store_result(g, i + 1, large_lo, acc[t][nt][1]);
      detail::store_result(g, i, large_hi, acc[t][nt][2]);
      detail::store_result(g, i + 1, large_hi, acc[t][nt][3]);
    }
  }
}

/// Whether the skinny rung runs the oriented problem `g` on the tensor cores: 16-bit inputs
/// with at least `skinny_mma_policy::min_rows` rows on the small side, unless the large
/// operand is read along k without 16-byte loads (its pointer or leading dimension off 16
/// bytes): a lane's 8 scalar loads then fall 16 bytes apart, and the CUDA-core kernel,
/// whose scalar loads are coalesced, was faster (H100, session 13: 0.43-0.65x of it on
/// 787x2x3728, 514x5x10261, 6085x6x228 and 2x28x177, all misaligned along k).
template <class In>
[[nodiscard]] bool skinny_uses_mma(const detail::skinny_args<In>& g) noexcept {
  if constexpr (std::is_same_v<In, float>) {
    return false;
  } else {
    return g.m >= skinny_mma_policy::min_rows && (g.b_n_contiguous || detail::rows_take_16_byte_loads(g.b, g.ldb));
  }
}

/// The plan of the tensor-core skinny kernel for `p` (16-bit inputs) on `sm_count` SMs:
/// rows per pass (`block_m`: 8, 16 or 32), large-side extent per block (`block_n`: the
/// warps' own tiles, or one tile when they share K, `skinny_mma_policy::shares_k`), the
/// staged K chunk (`block_k`) and split-K while the blocks cannot fill the resident slots
/// (as `skinny_plan`, in whole rounds of `skinny_mma_policy::split_unit_k`); `requested`
/// as `split_k_options::split_k`.
template <class In>
[[nodiscard]] gemm_plan skinny_mma_plan(const gemm_problem<In, float>& p, int requested, int sm_count) {
  static_assert(!std::is_same_v<In, float>, "the tensor-core skinny kernel takes fp16 or bf16");
  using policy = skinny_mma_policy;
  const detail::skinny_args<In> g = detail::skinny_orient(p);
  const bool along_n = g.b_n_contiguous;
  gemm_plan plan;
  plan.rung = gemm_rung::skinny;
  plan.block_m = policy::row_bucket(g.m);
  plan.block_n = policy::block_large(along_n);
  plan.block_k = policy::chunk_k;
  plan.min_blocks_per_sm = policy::min_blocks_per_sm(plan.block_m);
  detail::finish_skinny_plan(plan, p, g, policy::split_unit_k(along_n), requested, sm_count, policy::min_k_per_split,
                             policy::max_splits, policy::max_rows, true);
  if (!policy::shares_k(plan.block_m, detail::skinny_blocks(plan, g), std::int64_t{sm_count} * plan.min_blocks_per_sm))
    return plan;
  plan.block_n = policy::block_large(along_n, true);
  detail::finish_skinny_plan(plan, p, g, policy::split_unit_k(along_n), requested, sm_count,
                             policy::shared_min_k_per_split(along_n), policy::max_splits, policy::max_rows, true, true);
  return plan;
}

namespace detail {

/// Enqueues the tensor-core skinny kernel on `s` for the oriented problem `g` of `rows`
/// rows a block (8, 16, 32; 8 when the warps share K, `shared_k`), with `k_per_split` and
/// `slice_stride` already set, in `split_k` slices. Throws `std::invalid_argument` if the
/// grid is too large or `shared_k` is asked for another row bucket.
template <class In>
void launch_skinny_mma_kernel(const skinny_args<In>& g, int rows, bool shared_k, int split_k, cuda::stream_ref s) {
  using policy = skinny_mma_policy;
  FOUNDRY_EXPECTS(!shared_k || rows == policy::shared_k_rows,
                  "the skinny kernel's warps share K only with " + std::to_string(policy::shared_k_rows) + " rows");
  const bool along_n = g.b_n_contiguous;
  const std::int64_t blocks_large = ceil_div<std::int64_t>(g.n, policy::block_large(along_n, shared_k));
  const std::int64_t row_groups = ceil_div<std::int64_t>(g.m, rows);
  FOUNDRY_EXPECTS(blocks_large <= max_grid_x && row_groups <= max_grid_yz,
                  "GEMM too large for the skinny kernel's grid: " + std::to_string(blocks_large) + " tiles, " +
                      std::to_string(row_groups) + " row groups");
  launch_config config;
  config.block = dim3(policy::threads, 1, 1);
  config.dependency = launch_dependency::programmatic;  // the kernels wait before their first access
  config.grid =
      dim3(static_cast<unsigned>(blocks_large), static_cast<unsigned>(split_k), static_cast<unsigned>(row_groups));
  // One of twelve instantiations: [along n][vector][rows 8, 16, 32].
  using kernel_type = void (*)(skinny_args<In>);
  constexpr kernel_type kernels[2][2][3] = {
      {{skinny_mma_kernel<In, 8, false, false>, skinny_mma_kernel<In, 16, false, false>,
        skinny_mma_kernel<In, 32, false, false>},
       {skinny_mma_kernel<In, 8, false, true>, skinny_mma_kernel<In, 16, false, true>,
        skinny_mma_kernel<In, 32, false, true>}},
      {{skinny_mma_kernel<In, 8, true, false>, skinny_mma_kernel<In, 16, true, false>,
        skinny_mma_kernel<In, 32, true, false>},
       {skinny_mma_kernel<In, 8, true, true>, skinny_mma_kernel<In, 16, true, true>,
        skinny_mma_kernel<In, 32, true, true>}}};
  // Warps sharing K: [along n][vector], 8 rows.
  constexpr kernel_type shared[2][2] = {
      {skinny_mma_kernel<In, 8, false, false, true>, skinny_mma_kernel<In, 8, false, true, true>},
      {skinny_mma_kernel<In, 8, true, false, true>, skinny_mma_kernel<In, 8, true, true, true>}};
  const bool vector = rows_take_16_byte_loads(g.b, g.ldb);
  const int bucket = rows == 8 ? 0 : rows == 16 ? 1 : 2;
  launch(s, config, shared_k ? shared[along_n][vector] : kernels[along_n][vector][bucket], g);
}

}  // namespace detail
}  // namespace foundry::gemm_kernels
