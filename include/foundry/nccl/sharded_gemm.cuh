#pragma once
/// \file
/// `sharded_gemm`: `C = alpha * A * op(B) + beta * C` with A split by row blocks across
/// the ranks of a communicator. Each rank computes its rows of C with `foundry::gemm`
/// from its rows of A and a full copy of B; then either every rank receives all of C
/// (`result_placement::gathered`) or each keeps its own rows (`result_placement::sharded`).
///
///     const auto rows = foundry::nccl::shard_rows(m, comm.nranks(), comm.rank(i));  // rank i's rows
///     a[i] = {a_block_i.data(), rows.count, k, k};                                  // on device i
///     foundry::nccl::sharded_gemm(comm, 1.0f, a, b, foundry::matrix_op::none, 0.0f, c,
///                                 foundry::nccl::result_placement::gathered, devices.streams());
///
/// Equality with one GPU: rank r's rows are exactly `foundry::gemm` of its row block, so
/// they equal, bit for bit, that call on one GPU of the same kind with operands equally
/// aligned (alignment picks the kernel: wgmma needs 16-byte aligned bases). Against `foundry::gemm`
/// of the whole A they are equal bit for bit when the same kernel runs for both: one rank
/// (the same call), or problems where neither splits K. A row block has fewer C tiles, so
/// the GEMM may split K where the whole did not (gemm/split_k.cuh), which changes the
/// order of the fp32 sums; the difference is then within the GEMM's own rounding.
///
/// Gathering C: the row blocks of a row-major C with `ld == N` are contiguous, so one
/// in-place `all_gather` assembles C when M is a multiple of the rank count; otherwise the
/// blocks differ in size, which an all-gather cannot express, and each block is broadcast
/// from its owner, all in one NCCL group. A column-major C (or one with padded rows) has
/// no contiguous row blocks: `gathered` refuses it, `sharded` accepts any layout.

#include <foundry/core/error.cuh>
#include <foundry/gemm/gemm.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/nccl/collectives.cuh>
#include <foundry/nccl/communicator.cuh>
#include <foundry/nccl/error.cuh>
#include <foundry/runtime/device.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace foundry::nccl {

/// Rows [begin, begin + count) of a matrix.
struct row_range {
  /// First row of the shard.
  std::int64_t begin = 0;
  /// Rows in the shard.
  std::int64_t count = 0;
};

/// The rows of an `m`-row matrix that rank `rank` of `nranks` owns: consecutive blocks in
/// rank order, the first `m % nranks` ranks one row more than the others.
/// Precondition: nranks > 0, 0 <= rank < nranks, m >= 0.
[[nodiscard]] constexpr row_range shard_rows(std::int64_t m, int nranks, int rank) noexcept {
  const std::int64_t base = m / nranks;
  const std::int64_t extra = m % nranks;
  return {rank * base + std::min<std::int64_t>(rank, extra), base + (rank < extra ? 1 : 0)};
}

/// Rows `r` of `x`, a view of the same memory with the same layout and leading dimension.
template <class T>
[[nodiscard]] constexpr matrix_view<T> row_block(const matrix_view<T>& x, row_range r) noexcept {
  T* data = x.data;
  if (data != nullptr) data += x.layout == matrix_layout::row_major ? r.begin * x.ld : r.begin;
  return {data, r.count, x.cols, x.ld, x.layout};
}

/// Where `sharded_gemm` leaves C.
enum class result_placement {
  gathered,  ///< every rank holds all of C (row-major, ld == N)
  sharded,   ///< each rank holds its own rows of C only
};

/// `C = alpha * A * op(B) + beta * C`, A split by row blocks over the ranks.
/// - `a[i]`: local rank i's rows of the M × K A, any layout, on `comm.device(i)`.
/// - `b[i]`: all of B (K × N, or N × K with `op_b == transpose`), any layout, on device i.
/// - gathered: `c[i]` is all of the M × N C on device i, row-major with `ld == N`; `a[i]`
///   must hold the rows `shard_rows(M, nranks, rank(i))` of A. Rank r writes its rows of
///   its own C (reading them first when beta != 0), then every rank receives every
///   other rank's rows: on return (asynchronously) all ranks hold the same C.
/// - sharded: `c[i]` is rank i's rows of C (`a[i].rows × N`), any layout; nothing is
///   communicated, so any split of A's rows is accepted.
/// Types as `foundry::gemm`: A and B float, __half or __nv_bfloat16, C float.
/// Asynchronous on `streams` (one per local rank, of its device); the GEMM may allocate
/// split-K workspace stream-ordered on them. The caller's current device is unchanged.
/// Throws `std::invalid_argument` for arguments that do not match the ranks, shapes
/// `foundry::gemm` refuses, or a gathered C that is not row-major and contiguous;
/// `cuda_error`, or `nccl_error` after aborting the communicator, on a failure.
template <class In>
void sharded_gemm(communicator& comm, float alpha, const std::vector<matrix_view<const In>>& a,
                  const std::vector<matrix_view<const In>>& b, matrix_op op_b, float beta,
                  const std::vector<matrix_view<float>>& c, result_placement placement,
                  const std::vector<cuda::stream_ref>& streams) {
  detail::expect_per_rank("sharded_gemm", comm, a, "A blocks");
  detail::expect_per_rank("sharded_gemm", comm, b, "B matrices");
  detail::expect_per_rank("sharded_gemm", comm, c, "C matrices");
  detail::expect_streams("sharded_gemm", comm, streams);
  const int nranks = comm.nranks();
  const std::int64_t m = c[0].rows;
  const std::int64_t n = c[0].cols;
  std::vector<matrix_view<float>> c_rows(c.size());
  for (int i = 0; i < comm.size(); ++i) {
    const auto& ci = c[static_cast<std::size_t>(i)];
    if (placement == result_placement::sharded) {
      c_rows[static_cast<std::size_t>(i)] = ci;
      continue;
    }
    FOUNDRY_EXPECTS(ci.layout == matrix_layout::row_major && ci.ld == ci.cols,
                    "sharded_gemm: gathering C needs a row-major C with ld == N (its row blocks are then "
                    "contiguous); a column-major or padded C has none: use result_placement::sharded");
    FOUNDRY_EXPECTS(ci.rows == m && ci.cols == n, "sharded_gemm: the C of local rank " + std::to_string(i) +
                                                      " is not the same M x N as local rank 0's");
    const row_range rows = shard_rows(m, nranks, comm.rank(i));
    FOUNDRY_EXPECTS(a[static_cast<std::size_t>(i)].rows == rows.count,
                    "sharded_gemm: the A block of local rank " + std::to_string(i) + " has " +
                        std::to_string(a[static_cast<std::size_t>(i)].rows) + " rows, shard_rows gives it " +
                        std::to_string(rows.count));
    c_rows[static_cast<std::size_t>(i)] = row_block(ci, rows);
  }

  {
    const detail::restore_current_device keep;
    for (int i = 0; i < comm.size(); ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (c_rows[k].rows == 0 || c_rows[k].cols == 0) continue;  // a rank with no rows has nothing to compute
      device_guard on(comm.device(i));
      gemm(alpha, a[k], matrix_op::none, b[k], op_b, beta, c_rows[k], streams[k]);
    }
  }
  if (placement == result_placement::sharded || m == 0 || n == 0 || nranks == 1) return;

  const auto rows_of = [&](int r) { return shard_rows(m, nranks, r); };
  const auto block = [&](float* base, int r) {
    return cuda::std::span<float>(base + rows_of(r).begin * n, static_cast<std::size_t>(rows_of(r).count * n));
  };
  if (m % nranks == 0) {
    std::vector<cuda::std::span<const float>> send;
    std::vector<cuda::std::span<float>> recv;
    for (int i = 0; i < comm.size(); ++i) {
      float* base = c[static_cast<std::size_t>(i)].data;
      send.push_back(block(base, comm.rank(i)));  // in place: block rank(i) of the whole C
      recv.emplace_back(base, static_cast<std::size_t>(m * n));
    }
    all_gather(comm, send, recv, streams);
    return;
  }
  detail::for_each_rank_grouped(comm, streams, [&](int i, cudaStream_t s) {
    float* base = c[static_cast<std::size_t>(i)].data;
    for (int root = 0; root < nranks; ++root) {
      const auto piece = block(base, root);
      if (piece.empty()) continue;  // every rank skips the same roots: the partition is the same everywhere
      FOUNDRY_NCCL_TRY(ncclBroadcast(piece.data(), piece.data(), piece.size(), ncclFloat32, root, comm.get(i), s));
    }
  });
}

}  // namespace foundry::nccl
