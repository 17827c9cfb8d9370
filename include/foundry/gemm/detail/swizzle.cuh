#pragma once
/// \file
/// The XOR swizzle of shared-memory tiles that `ldmatrix` reads (rung 4). Rung 5's
/// tiles use the same 16-byte-chunk XOR, applied by TMA and wgmma themselves
/// (`smem_swizzle::bytes_128`, detail/wgmma.cuh).

namespace foundry::gemm_kernels::detail {

/// A tile of `Rows` shared-memory rows of `RowChunks` 16-byte chunks (8 fp16/bf16
/// each). Chunk c of row r is stored at chunk position c ^ key(r): the key
/// differs between the 8 consecutive rows that one ldmatrix phase reads (at the
/// same logical chunk), so they land in 8 different 16-byte bank groups of the
/// 128-byte bank window. Rows shorter than 128 bytes share a 128-byte line with
/// their neighbours; the key then changes once per line. The key depends only
/// on r mod 8, so moving down 8 rows is a plain offset.
template <int Rows, int RowChunks>
struct swizzled_tile {
  static_assert(RowChunks > 0 && (RowChunks & (RowChunks - 1)) == 0, "chunks per row: a power of two");
  static constexpr int rows = Rows;
  static constexpr int row_chunks = RowChunks;
  static constexpr int row_bytes = RowChunks * 16;
  static constexpr int bytes = Rows * row_bytes;

  [[nodiscard]] __host__ __device__ static constexpr int key(int row) noexcept {
    if constexpr (RowChunks >= 8) {
      return row & 7;
    } else {
      return (row / (8 / RowChunks)) & (RowChunks - 1);
    }
  }
  /// Byte offset of logical chunk `chunk` of row `row`.
  [[nodiscard]] __host__ __device__ static constexpr int offset(int row, int chunk) noexcept {
    return row * row_bytes + ((chunk ^ key(row)) * 16);
  }
  /// Byte offset of element `col` (0 .. 8·RowChunks-1) of row `row`.
  [[nodiscard]] __host__ __device__ static constexpr int element_offset(int row, int col) noexcept {
    return offset(row, col / 8) + (col % 8) * 2;
  }
};

}  // namespace foundry::gemm_kernels::detail
