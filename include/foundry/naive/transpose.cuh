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

/// `out = in^T`, one thread per element. See `foundry::transpose` for the contract.
template <class In, class T>
void transpose(matrix_view<In> in, matrix_view<T> out, cuda::stream_ref s) {
  foundry::detail::static_check_matrix_types<In, T>();
  FOUNDRY_NVTX_FUNCTION_RANGE();
  const matrix_view<const T> in_c{in.data, in.rows, in.cols, in.ld, in.layout};
  if (!foundry::detail::check_matrix_pair(in_c, out, foundry::detail::matrix_pairing::transposed, "naive::transpose")) {
    return;
  }
  // The kernel is the fast call's for elements too large for a shared tile.
  foundry::detail::launch_transpose_elements(foundry::detail::stored_form(in_c), foundry::detail::stored_form(out),
                                             in.layout == out.layout, s);
}

}  // namespace foundry::naive
