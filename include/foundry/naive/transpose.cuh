#pragma once
/// \file
/// `foundry::naive::transpose`: the textbook first attempt, the twin of
/// `foundry::transpose` (<foundry/algorithms/transpose.cuh>): one thread per element,
/// 32 × 8 blocks, lanes along an input row, so the reads are coalesced and the writes
/// go down an output column, one row pitch apart per lane. No shared memory.
/// Same contract and argument checks as the fast version; it is the baseline the
/// benchmarks set beside it.

#include <foundry/algorithms/transpose.cuh>
#include <foundry/core/error.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/stream_ref>

#include <cstdint>

namespace foundry::naive {

namespace detail {

/// Element (r, c) of the stored input goes to `out[r * out_row_step + c * out_col_step]`:
/// (1, pitch) transposes, (pitch, 1) copies (views of different layouts).
template <class T>
__global__ void transpose_kernel(matrix_view<const T> in, T* out, std::int64_t out_row_step,
                                 std::int64_t out_col_step) {
  // 64-bit indices: a matrix may hold more than 2^31 elements.
  const std::int64_t c = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (c >= in.cols) return;
  // Rows beyond the 65535-block grid limit are reached by striding over y.
  for (std::int64_t r = std::int64_t{blockIdx.y} * blockDim.y + threadIdx.y; r < in.rows;
       r += std::int64_t{gridDim.y} * blockDim.y) {
    out[r * out_row_step + c * out_col_step] = in.data[r * in.ld + c];
  }
}

}  // namespace detail

/// `out = in^T`, one thread per element. See `foundry::transpose` for the contract.
template <class In, class T>
void transpose(matrix_view<In> in, matrix_view<T> out, cuda::stream_ref s) {
  foundry::detail::static_check_matrix_types<In, T>();
  FOUNDRY_NVTX_FUNCTION_RANGE();
  const matrix_view<const T> in_c{in.data, in.rows, in.cols, in.ld, in.layout};
  if (!foundry::detail::check_matrix_pair(in_c, out, foundry::detail::matrix_pairing::transposed, "naive::transpose")) {
    return;
  }
  const matrix_view<const T> src = foundry::detail::stored_form(in_c);
  const matrix_view<T> dst = foundry::detail::stored_form(out);
  const bool transposes = in.layout == out.layout;
  launch(s, make_launch_config_2d(static_cast<std::uint64_t>(src.cols), static_cast<std::uint64_t>(src.rows), 32, 8),
         detail::transpose_kernel<T>, src, dst.data, transposes ? std::int64_t{1} : dst.ld,
         transposes ? dst.ld : std::int64_t{1});
}

}  // namespace foundry::naive
