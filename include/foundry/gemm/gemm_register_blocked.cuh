#pragma once
/// \file
/// Rung 3 of the GEMM ladder: register-blocked fp32 on the CUDA cores.
///
/// By default a block of 256 threads computes a 128 × 128 tile of C; each thread
/// holds an 8 × 8 sub-tile in registers (the policy's `thread_m` × `thread_n`).
/// Per step of K a thread loads 8 values of A and 8 of B from shared memory (four
/// 16-byte loads) and does 64 FMAs with them, so the arithmetic, not the memory,
/// becomes the bound. Around that core:
///
/// - **Vector loads.** Tiles move from global memory in 16-byte `float4`
///   loads when the operand's pointer and leading dimension allow it; otherwise
///   the same kernel issues four predicated scalar loads (the `Vector` flag).
/// - **Double buffering.** Two shared-memory buffers: while the block computes
///   on one, the next K slice is already in flight to registers and is stored
///   into the other, so one `__syncthreads` per slice suffices and the global
///   latency hides behind the FMAs. The register fragments are double-buffered
///   too: the loads for step kk + 1 are issued before the FMAs of step kk.
/// - **Transposed A.** Shared tiles are stored k-major (`[k][m]`, `[k][n]`), so
///   a thread's 4 consecutive rows (or columns) are one `float4` load and a
///   warp reads at most 128 distinct bytes per load: broadcasts, no conflicts.
///   A tile that arrives contiguous along k is transposed on the way in; its
///   rows are padded by 4 floats so that the scattered stores do not collide.
/// - **Thread layout.** A thread's sub-tile is made of 4 × 4 pieces (8 × 8: four,
///   64 rows and 64 columns apart in a 128 × 128 tile); a warp is a 4 × 8 grid of
///   threads, so its A loads touch 64 bytes and its B loads 128 bytes per step.
/// - **Edges.** Every global load is predicated (zeros past M, N, K) and every
///   store checked, so any M, N, K works; the predicates cost a few integer
///   instructions per 512 FMAs.
/// - **Split-K.** When the C tiles are too few to fill the GPU (1024 × 1024 ×
///   8192 has 64 tiles for 132 SMs), the K range is cut into slices computed
///   by separate blocks into a workspace, and a second kernel sums them.
/// - **Raster.** Tiles are visited in groups of 8 tile rows, so that blocks
///   running at the same time share A and B panels in L2.
///
/// The measurements behind these choices, with what was tried and rejected:
/// docs/gemm-history.md in the foundry repository.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/gemm/split_k.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace foundry::gemm_kernels {

/// Tile shape of rung 3: the block tile, the K slice, the blocks per SM the
/// registers are budgeted for, and the thread sub-tile (a multiple of 4 × 4).
template <int BlockM = 128, int BlockN = 128, int BlockK = 8, int MinBlocksPerSm = 2, int ThreadM = 8, int ThreadN = 8>
struct register_blocked_policy {
  /// 128 × 128: 32 FLOPs per byte moved from L2, enough to keep the FMA units
  /// fed. 48.3 TFLOP/s at 8192^3 fp32 on the H200 (0.94× cuBLAS).
  static constexpr int block_m = BlockM;
  static constexpr int block_n = BlockN;
  /// 8: one float4 of A and one of B per thread per slice, and 17 KiB of
  /// shared memory. BK 16 spills at 2 blocks/SM: 37.4 against 48.3 TFLOP/s at 8192^3 on the H200.
  static constexpr int block_k = BlockK;
  /// 2 blocks (16 warps) per SM: the cap of 128 registers per thread that this
  /// implies holds the default 8 × 8 tile's 64 accumulators, 32 fragment and 8 staging registers
  /// without spills on the float4 path. 48.3 TFLOP/s at 8192^3 on the H200, against 42.1 at 1 block/SM.
  static constexpr int min_blocks_per_sm = MinBlocksPerSm;

  /// A thread's sub-tile of C: (thread_m / 4) × (thread_n / 4) pieces of 4 × 4, spread
  /// over the block tile (`piece_stride_m` and `piece_stride_n` apart), so that each of
  /// a thread's shared loads is one float4 and a warp's loads cover a contiguous span.
  static constexpr int thread_m = ThreadM;
  static constexpr int thread_n = ThreadN;
  static_assert(thread_m % 4 == 0 && thread_n % 4 == 0, "a thread's sub-tile is made of 4 × 4 pieces");
  static_assert(block_m % thread_m == 0 && (block_m / thread_m) % 4 == 0 && block_n % thread_n == 0 &&
                    (block_n / thread_n) % 8 == 0,
                "a warp is a 4 × 8 grid of threads");
  static constexpr int piece_stride_m = 4 * block_m / thread_m;
  static constexpr int piece_stride_n = 4 * block_n / thread_n;
  static constexpr int threads = (block_m / thread_m) * (block_n / thread_n);
  /// Padding of a shared row that receives transposed (scattered) stores: 4
  /// floats keep rows 16-byte aligned and move the two k-halves of a warp's
  /// stores 16 banks apart.
  static constexpr int smem_pad = 4;

  static_assert(block_k % 8 == 0, "k-contiguous tiles are read in pairs of float4 along k");
  static_assert(threads % 32 == 0 && threads <= 1024, "whole warps, within the block limit");
};

/// The default tile of rung 3.
using register_blocked_default_policy = register_blocked_policy<>;

namespace detail {

/// Moves one operand tile between global memory, registers and shared memory.
/// The operand X is `Outer × K`: A is M × K (outer = i), B is seen as N × K
/// (outer = j). In global memory X(o, k) sits at `x[o * ld + k]` when
/// `KContiguous`, else at `x[k * ld + o]`. In shared memory the tile is always
/// `s[k][o]` (outer index contiguous), each row `Outer + Pad` floats long.
/// A loader is built once per block and walks along K one tile per `load`;
/// it keeps per load only a pointer and the count of in-range elements across
/// the fixed index, to stay inside the 128-register budget.
template <int Outer, int BlockK, int Threads, int Pad, bool KContiguous, bool Vector>
class operand_loader {
 public:
  static constexpr int vectors = Outer * BlockK / 4;  // float4 per tile
  static constexpr int loads = vectors / Threads;     // per thread
  static constexpr int row = Outer + Pad;             // floats per shared row
  static_assert(vectors % Threads == 0, "each thread moves a whole number of float4");

  /// Position (o, k), within the tile, of the first of the 4 elements of this
  /// thread's vector `l`. k-contiguous: vectors 2q and 2q + 1 are the two
  /// halves of one 32-byte sector along k, and consecutive pairs walk the
  /// outer index, so a warp's scattered shared stores cover 16 rows × 2 halves
  /// (32 banks, thanks to the pad). outer-contiguous: a warp reads 128
  /// consecutive floats of one k row.
  __device__ static void position(int l, int& o, int& k) {
    const int v = l * Threads + static_cast<int>(threadIdx.x);
    if constexpr (KContiguous) {
      o = (v / 2) % Outer;
      k = ((v / 2) / Outer) * 8 + (v % 2) * 4;
    } else {
      o = (v % (Outer / 4)) * 4;
      k = v / (Outer / 4);
    }
  }

  /// Points at the tile whose corner is (o0, k0); rows o >= outer_end read as 0.
  __device__ operand_loader(const float* x, std::int64_t ld, std::int64_t o0, std::int64_t outer_end, std::int64_t k0) {
#pragma unroll
    for (int l = 0; l < loads; ++l) {
      int o = 0, k = 0;
      position(l, o, k);
      const std::int64_t go = o0 + o;
      ptr_[l] = KContiguous ? x + go * ld + (k0 + k) : x + (k0 + k) * ld + go;
      // k-contiguous: 1 if the row exists; outer-contiguous: elements of the vector inside [0, outer_end).
      const std::int64_t left = outer_end - go;
      fixed_[l] = KContiguous ? (left > 0 ? 1 : 0) : static_cast<int>(left <= 0 ? 0 : (left >= 4 ? 4 : left));
    }
  }

  /// Loads the current tile into `r` and steps to the next one (`step`
  /// elements further). `k_left`: elements of K from the tile's first k to the
  /// end of the range, clamped to int; elements past it read as 0.
  __device__ void load(int k_left, std::int64_t step, float4 (&r)[loads]) {
#pragma unroll
    for (int l = 0; l < loads; ++l) {
      int o = 0, k = 0;
      position(l, o, k);
      int valid = 0;  // elements of the vector in range, 0..4, counted along the contiguous index
      if constexpr (KContiguous) {
        const int along = k_left - k;
        valid = fixed_[l] == 0 ? 0 : (along <= 0 ? 0 : (along >= 4 ? 4 : along));
      } else {
        valid = k < k_left ? fixed_[l] : 0;
      }
      const float* ptr = ptr_[l];
      if (Vector && valid == 4) {
        r[l] = __ldg(reinterpret_cast<const float4*>(ptr));
      } else {
        r[l].x = valid > 0 ? __ldg(ptr + 0) : 0.0f;
        r[l].y = valid > 1 ? __ldg(ptr + 1) : 0.0f;
        r[l].z = valid > 2 ? __ldg(ptr + 2) : 0.0f;
        r[l].w = valid > 3 ? __ldg(ptr + 3) : 0.0f;
      }
      ptr_[l] += step;
    }
  }

  /// Stores `r` (from `load`) into the shared tile `s` (`BlockK` rows of `row` floats).
  __device__ static void store(float* s, const float4 (&r)[loads]) {
#pragma unroll
    for (int l = 0; l < loads; ++l) {
      int o = 0, k = 0;
      position(l, o, k);
      if constexpr (KContiguous) {  // transpose: 4 k values of one o
        s[(k + 0) * row + o] = r[l].x;
        s[(k + 1) * row + o] = r[l].y;
        s[(k + 2) * row + o] = r[l].z;
        s[(k + 3) * row + o] = r[l].w;
      } else {
        *reinterpret_cast<float4*>(s + k * row + o) = r[l];
      }
    }
  }

 private:
  const float* ptr_[loads];
  int fixed_[loads];
};

/// Writes one row of 4 results `v` at C(row, col..col+3): `alpha * v + beta * C`
/// (C not read when beta == 0), with a float4 store when `vector_ok`.
__device__ inline void store_four(float* __restrict__ c, std::int64_t ldc, std::int64_t row, std::int64_t col,
                                  std::int64_t m, std::int64_t n, float alpha, float beta, bool vector_ok,
                                  const float (&v)[4]) {
  if (row >= m) return;
  float* ptr = c + row * ldc + col;
  if (vector_ok && col + 4 <= n) {
    float4 out = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
    if (beta != 0.0f) {
      const float4 old = *reinterpret_cast<const float4*>(ptr);
      out.x += beta * old.x;
      out.y += beta * old.y;
      out.z += beta * old.z;
      out.w += beta * old.w;
    }
    *reinterpret_cast<float4*>(ptr) = out;
  } else {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (col + e < n) ptr[e] = beta == 0.0f ? alpha * v[e] : alpha * v[e] + beta * ptr[e];
    }
  }
}

/// The tile of C a block computes: consecutive blocks walk down a group of 8
/// tile rows before moving right, so the blocks resident together share A and
/// B panels in L2 (the grouping of CUTLASS's and Triton's rasterisers).
__device__ inline void block_tile(std::int64_t tiles_m, std::int64_t tiles_n, std::int64_t& tm, std::int64_t& tn) {
  constexpr std::int64_t group = 8;
  const std::int64_t id = blockIdx.x;
  const std::int64_t per_group = group * tiles_n;
  const std::int64_t first_m = (id / per_group) * group;
  const std::int64_t rows = tiles_m - first_m < group ? tiles_m - first_m : group;
  tm = first_m + (id % per_group) % rows;
  tn = (id % per_group) / rows;
}

}  // namespace detail

/// Rung 3's kernel. Block z computes the K slice `[z * k_per_split, ...)`; its
/// results go to `out` (row-major, leading dimension `ldo`) as
/// `alpha * acc + beta * out`. Without split-K `out` is C; with it, `out` is
/// the block's slice of the workspace, written with alpha = 1, beta = 0.
/// `out_vector`: out and ldo allow float4 stores.
template <class Policy, bool AKContiguous, bool BNContiguous, bool Vector>
__global__ void __launch_bounds__(Policy::threads, Policy::min_blocks_per_sm)
    register_blocked_kernel(gemm_problem<float, float> p, std::int64_t k_per_split, float* __restrict__ out,
                            std::int64_t ldo, std::int64_t out_slice_stride, float alpha, float beta, bool out_vector) {
  constexpr int bm = Policy::block_m, bn = Policy::block_n, bk = Policy::block_k;
  constexpr int threads = Policy::threads;
  using a_loader = detail::operand_loader<bm, bk, threads, Policy::smem_pad, AKContiguous, Vector>;
  using b_loader = detail::operand_loader<bn, bk, threads, Policy::smem_pad, !BNContiguous, Vector>;
  constexpr int a_row = a_loader::row, b_row = b_loader::row;
  __shared__ __align__(16) float a_smem[2][bk * a_row];  // a_smem[buf][k * a_row + i]
  __shared__ __align__(16) float b_smem[2][bk * b_row];  // b_smem[buf][k * b_row + j]

  // This thread's place: the thread grid is (bm / thread_m) × (bn / thread_n); a warp covers 4 × 8
  // of it. Its rows are q * piece_stride_m + ty*4 + {0..3} for each row piece q; its
  // columns likewise with tx and piece_stride_n.
  constexpr int thread_m = Policy::thread_m, thread_n = Policy::thread_n;
  constexpr int stride_m = Policy::piece_stride_m, stride_n = Policy::piece_stride_n;
  constexpr int warps_across = bn / thread_n / 8;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int ty = (warp / warps_across) * 4 + lane / 8;
  const int tx = (warp % warps_across) * 8 + lane % 8;

  std::int64_t tm = 0, tn = 0;
  detail::block_tile(ceil_div<std::int64_t>(p.m, bm), ceil_div<std::int64_t>(p.n, bn), tm, tn);
  const std::int64_t m0 = tm * bm;
  const std::int64_t n0 = tn * bn;
  const std::int64_t k_begin = blockIdx.z * k_per_split;
  const std::int64_t k_end = k_begin + k_per_split < p.k ? k_begin + k_per_split : p.k;

  float acc[thread_m][thread_n];
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
#pragma unroll
    for (int j = 0; j < thread_n; ++j) acc[i][j] = 0.0f;
  }

  if (k_end > k_begin) {
    a_loader a_global(p.a, p.lda, m0, p.m, k_begin);
    b_loader b_global(p.b, p.ldb, n0, p.n, k_begin);
    const std::int64_t a_step = AKContiguous ? bk : bk * p.lda;
    const std::int64_t b_step = BNContiguous ? bk * p.ldb : bk;
    // K left from the first k of the tile being loaded; clamped to int for the predicates.
    std::int64_t k_left = k_end - k_begin;
    auto clamp_int = [](std::int64_t v) { return static_cast<int>(v < (1 << 30) ? v : (1 << 30)); };

    float4 a_next[a_loader::loads];
    float4 b_next[b_loader::loads];
    a_global.load(clamp_int(k_left), a_step, a_next);
    b_global.load(clamp_int(k_left), b_step, b_next);
    a_loader::store(a_smem[0], a_next);
    b_loader::store(b_smem[0], b_next);
    __syncthreads();

    // Register fragments, double-buffered across kk.
    float a_frag[2][thread_m];
    float b_frag[2][thread_n];
    auto load_fragments = [&](const float* as, const float* bs, int kk, int f) {
#pragma unroll
      for (int q = 0; q < thread_m / 4; ++q) {
        const float4 v = *reinterpret_cast<const float4*>(as + kk * a_row + q * stride_m + ty * 4);
        a_frag[f][4 * q + 0] = v.x, a_frag[f][4 * q + 1] = v.y, a_frag[f][4 * q + 2] = v.z, a_frag[f][4 * q + 3] = v.w;
      }
#pragma unroll
      for (int q = 0; q < thread_n / 4; ++q) {
        const float4 v = *reinterpret_cast<const float4*>(bs + kk * b_row + q * stride_n + tx * 4);
        b_frag[f][4 * q + 0] = v.x, b_frag[f][4 * q + 1] = v.y, b_frag[f][4 * q + 2] = v.z, b_frag[f][4 * q + 3] = v.w;
      }
    };
    load_fragments(a_smem[0], b_smem[0], 0, 0);

    int buf = 0;
    for (;;) {
      k_left -= bk;
      const bool has_next = k_left > 0;
      if (has_next) {  // in flight while the FMAs below run
        a_global.load(clamp_int(k_left), a_step, a_next);
        b_global.load(clamp_int(k_left), b_step, b_next);
      }
#pragma unroll
      for (int kk = 0; kk < bk; ++kk) {
        if (kk == bk - 1) {
          if (has_next) {
            // The other buffer was last read before the previous barrier.
            a_loader::store(a_smem[buf ^ 1], a_next);
            b_loader::store(b_smem[buf ^ 1], b_next);
            __syncthreads();
            buf ^= 1;
            load_fragments(a_smem[buf], b_smem[buf], 0, 0);
          }
        } else {
          load_fragments(a_smem[buf], b_smem[buf], kk + 1, (kk + 1) % 2);
        }
        // Serpentine order (CUTLASS's SIMT MMA does the same): odd rows walk the columns
        // backwards, so consecutive FFMAs share an operand at every turn as well as along a
        // row, which lets the operand reuse cache skip a register-file read.
#pragma unroll
        for (int i = 0; i < thread_m; ++i) {
#pragma unroll
          for (int jj = 0; jj < thread_n; ++jj) {
            const int j = i % 2 == 0 ? jj : thread_n - 1 - jj;
            acc[i][j] = fmaf(a_frag[kk % 2][i], b_frag[kk % 2][j], acc[i][j]);
          }
        }
      }
      if (!has_next) break;
    }
  }

  // Epilogue: each thread writes thread_m rows × (thread_n / 4) runs of 4 columns.
  float* const o = out + static_cast<std::int64_t>(blockIdx.z) * out_slice_stride;
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
    const std::int64_t row = m0 + (i / 4) * stride_m + ty * 4 + i % 4;
#pragma unroll
    for (int q = 0; q < thread_n / 4; ++q) {
      const std::int64_t col = n0 + q * stride_n + tx * 4;
      const float v[4] = {acc[i][4 * q + 0], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]};
      detail::store_four(o, ldo, row, col, p.m, p.n, alpha, beta, out_vector, v);
    }
  }
}

/// The split-K plan rung 3 uses for `p` on `sm_count` SMs (see `plan_split_k`;
/// `requested` as `split_k_options::split_k`).
template <class Policy = register_blocked_default_policy>
[[nodiscard]] split_k_plan register_blocked_split_k(const gemm_problem<float, float>& p, int requested, int sm_count) {
  // 512: below that a slice's pipeline start-up and the reduce outweigh the
  // extra SMs. Not tuned: it does not bind at 1024 × 1024 × 8192 (4 slices of 2048),
  // which runs 45.5 TFLOP/s on the H200 (0.99× cuBLAS).
  constexpr std::int64_t min_k_per_split = 512;
  const std::int64_t tiles =
      ceil_div<std::int64_t>(p.m, Policy::block_m) * ceil_div<std::int64_t>(p.n, Policy::block_n);
  return plan_split_k(tiles, std::int64_t{sm_count} * Policy::min_blocks_per_sm, sm_count, p.k, Policy::block_k,
                      requested, min_k_per_split);
}

/// Enqueues rung 3 on `s` (asynchronous). `p` must already be valid (as
/// `foundry::gemm` checks it). Any m, n, k; k = 0 gives C = beta * C.
/// The float4 path is taken when A's and B's pointers are 16-byte aligned and
/// their leading dimensions multiples of 4; otherwise the same kernel loads
/// scalars (correct, slower). With split-K and no caller workspace, the
/// workspace is allocated and freed stream-ordered on `s`.
/// Throws `std::invalid_argument` if a caller workspace is too small,
/// `cuda_error` if an allocation or a launch fails.
template <class Policy = register_blocked_default_policy>
void gemm_register_blocked(const gemm_problem<float, float>& p, const split_k_options& options, cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  if (p.m == 0 || p.n == 0) return;
  const split_k_plan plan = register_blocked_split_k<Policy>(p, options.split_k, get_device_properties().sm_count);

  const std::int64_t tiles =
      ceil_div<std::int64_t>(p.m, Policy::block_m) * ceil_div<std::int64_t>(p.n, Policy::block_n);
  FOUNDRY_EXPECTS(tiles <= max_grid_x, "GEMM too large for one grid: " + std::to_string(tiles) + " C tiles");
  launch_config config;
  config.block = dim3(Policy::threads, 1, 1);
  config.grid = dim3(static_cast<unsigned>(tiles), 1, static_cast<unsigned>(plan.splits));

  // The kernel for this problem's layouts and alignment: one of eight instantiations.
  using kernel_type =
      void (*)(gemm_problem<float, float>, std::int64_t, float*, std::int64_t, std::int64_t, float, float, bool);
  constexpr kernel_type kernels[2][2][2] = {
      // [a_k_contiguous][b_n_contiguous][vector]
      {{register_blocked_kernel<Policy, false, false, false>, register_blocked_kernel<Policy, false, false, true>},
       {register_blocked_kernel<Policy, false, true, false>, register_blocked_kernel<Policy, false, true, true>}},
      {{register_blocked_kernel<Policy, true, false, false>, register_blocked_kernel<Policy, true, false, true>},
       {register_blocked_kernel<Policy, true, true, false>, register_blocked_kernel<Policy, true, true, true>}}};
  const bool vector = is_aligned(p.a, 16) && p.lda % 4 == 0 && is_aligned(p.b, 16) && p.ldb % 4 == 0;
  const kernel_type kernel = kernels[p.a_k_contiguous][p.b_n_contiguous][vector];

  const auto enqueue = [&](const gemm_problem<float, float>& q, std::int64_t slice_stride) {
    launch(s, config, kernel, p, plan.depth, q.c, q.ldc, slice_stride, q.alpha, q.beta,
           is_aligned(q.c, 16) && q.ldc % 4 == 0);
  };
  detail::enqueue_split_k(p, plan.splits, options.workspace, enqueue, s);
}

/// Rung 3 with the default options (automatic split-K, internal workspace).
template <class Policy = register_blocked_default_policy>
void gemm_register_blocked(const gemm_problem<float, float>& p, cuda::stream_ref s) {
  gemm_register_blocked<Policy>(p, split_k_options{}, s);
}

}  // namespace foundry::gemm_kernels
