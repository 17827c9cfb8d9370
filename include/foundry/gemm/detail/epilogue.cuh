#pragma once
/// \file
/// The GEMM epilogue, `C = alpha * acc + beta * C`, for every rung and the split-K
/// reduce. Two rules hold in each function here: when beta == 0, C is not read (it
/// may hold NaN or be uninitialised, as in BLAS), and elements past M or N are
/// neither read nor written. The functions differ only in how many adjacent values
/// of a row they write at once (the widest store the rung's register layout allows).
/// The split-K reduce (detail/split_k.cuh) keeps its row epilogue inline, on
/// `load_floats`: as a call it compiled to different code.
/// Each keeps the arithmetic of the kernel it came from, so that the machine code
/// does not change: `alpha * acc + beta * c` where nvcc contracts it, an explicit
/// `fmaf(beta, c, alpha * acc)` where the mma accumulators are stored.

#include <foundry/core/math.cuh>
#include <foundry/gemm/gemm_problem.cuh>

#include <cuda/std/array>

#include <cstdint>

namespace foundry::gemm_kernels::detail {

/// One element: `alpha * acc + beta * *c`, reading `*c` only when beta != 0.
__device__ __forceinline__ float blend(float alpha, float acc, float beta, const float* c) {
  return beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}

/// `Width` consecutive floats from `from` (one float4 load for 4: `from` 16-byte aligned).
template <int Width>
__device__ cuda::std::array<float, Width> load_floats(const float* from) {
  if constexpr (Width == 4) {
    const float4 v = *reinterpret_cast<const float4*>(from);
    return {v.x, v.y, v.z, v.w};
  } else {
    return {*from};
  }
}

/// Four results `v` of one row at C(row, col..col+3) of an m × n C (rung 3), with
/// a float4 store when `vector_ok` and all four columns are inside.
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
      if (col + e < n) ptr[e] = blend(alpha, v[e], beta, ptr + e);
    }
  }
}

/// A warp's mma accumulators at (row0, col0) of `p`'s C (rungs 4 and 5: the wgmma
/// accumulator layout of a warp is that of NFragments mma.m16n8 tiles side by side).
/// Accumulator c0,c1 of fragment (i, j) sits at row 16i + g, columns 8j + 2t and
/// 8j + 2t + 1 (lane = 4g + t); c2,c3 eight rows lower. Adjacent pairs go out as one
/// 8-byte store when C allows it.
template <int MFragments, int NFragments, class In>
__device__ void store_accumulators(const float (&acc)[MFragments][NFragments][4], const gemm_problem<In, float>& p,
                                   std::int64_t row0, std::int64_t col0, int lane) {
  const int g = lane >> 2;
  const int t = lane & 3;
  const bool pairs = p.ldc % 2 == 0 && is_aligned(p.c, 2 * sizeof(float));
  const bool read_c = p.beta != 0.0f;
#pragma unroll
  for (int i = 0; i < MFragments; ++i) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const std::int64_t row = row0 + 16 * i + 8 * half + g;
      if (row >= p.m) continue;
      float* c_row = p.c + row * p.ldc;
#pragma unroll
      for (int j = 0; j < NFragments; ++j) {
        const std::int64_t col = col0 + 8 * j + 2 * t;
        float v0 = p.alpha * acc[i][j][2 * half];
        float v1 = p.alpha * acc[i][j][2 * half + 1];
        if (pairs && col + 1 < p.n) {
          auto* c2 = reinterpret_cast<float2*>(c_row + col);
          if (read_c) {
            const float2 old = *c2;
            v0 = fmaf(p.beta, old.x, v0);
            v1 = fmaf(p.beta, old.y, v1);
          }
          *c2 = make_float2(v0, v1);
        } else {
          if (col < p.n) c_row[col] = read_c ? fmaf(p.beta, c_row[col], v0) : v0;
          if (col + 1 < p.n) c_row[col + 1] = read_c ? fmaf(p.beta, c_row[col + 1], v1) : v1;
        }
      }
    }
  }
}

/// Whether every row of `p`'s C starts on a 32-byte sector: then `store_accumulators`'
/// 8-byte pairs fill whole sectors, 8 rows of 32 bytes per warp store. Otherwise each of
/// those rows straddles two sectors (or, ldc odd, goes out 4 bytes at a time), and the
/// stores move two to four times the sectors they fill.
template <class In>
__host__ __device__ bool c_rows_on_sectors(const gemm_problem<In, float>& p) noexcept {
  return p.ldc % 8 == 0 && is_aligned(p.c, 32);
}

/// Floats of a warp's swizzled staging tile (`store_accumulators_swizzled`): 16 rows of 32, no
/// padding (2 KiB), so that four warps fit rung 4's fallback's 8 KiB of operand tiles.
inline constexpr int swizzled_tile_floats = 16 * 32;

/// Where row `r`, column `c` of a swizzled staging tile sits: the column XOR 8 times the row's
/// place in its group of 4, so that the float2 writes of the mma layout (8 rows by 4 lanes,
/// half a warp at a time) and the reads of a row (32 lanes) each meet 32 different banks.
__device__ __forceinline__ int swizzled_index(int r, int c) { return r * 32 + (c ^ (8 * (r & 3))); }

/// `store_accumulators` for a warp's MFragments x NFragments mma tiles through `stage`, the
/// warp's own swizzled tile of `swizzled_tile_floats`: each 16-row fragment, 32 columns at a
/// time, goes into the tile in the mma layout, then each row's 32 columns go out as one store
/// of 128 contiguous bytes, whatever C's alignment (4 or 5 sectors where the pairs would touch
/// 8 or 16). For C whose rows are off sectors (`c_rows_on_sectors`): rung 4's fallback and
/// the wgmma kernel (MFragments = 1). Same arithmetic as `store_accumulators`.
template <int MFragments, int NFragments, class In>
__device__ void store_accumulators_swizzled(const float (&acc)[MFragments][NFragments][4],
                                            const gemm_problem<In, float>& p, std::int64_t row0, std::int64_t col0,
                                            int lane, float* stage) {
  static_assert(NFragments % 4 == 0, "32 columns (4 fragments) a pass");
  const int g = lane >> 2;
  const int t = lane & 3;
  const bool read_c = p.beta != 0.0f;
#pragma unroll
  for (int i = 0; i < MFragments; ++i) {
    const std::int64_t rows = row0 + 16 * i;
    if (rows >= p.m) break;  // the same for the whole warp
#pragma unroll
    for (int pass = 0; pass < NFragments / 4; ++pass) {
      if (col0 + 32 * pass >= p.n) break;  // the same for the whole warp
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          *reinterpret_cast<float2*>(stage + swizzled_index(8 * half + g, 8 * j + 2 * t)) =
              make_float2(acc[i][4 * pass + j][2 * half], acc[i][4 * pass + j][2 * half + 1]);
        }
      }
      __syncwarp();
      const std::int64_t col = col0 + 32 * pass + lane;
      if (col < p.n) {
#pragma unroll
        for (int r = 0; r < 16; ++r) {
          if (rows + r >= p.m) break;
          float* out = p.c + (rows + r) * p.ldc + col;
          const float v = p.alpha * stage[swizzled_index(r, lane)];
          *out = read_c ? fmaf(p.beta, *out, v) : v;
        }
      }
      __syncwarp();  // the tile is read before the next pass overwrites it
    }
  }
}

}  // namespace foundry::gemm_kernels::detail
