#pragma once
/// \file
/// The Tensor Memory Accelerator (TMA) and the transaction barriers that the
/// Hopper GEMM rung (gemm_wgmma.cuh) is fed by:
///
/// - host: `make_tensor_map_2d`, a `CUtensorMap` describing a row-major 2D view
///   of a global matrix and the box one copy moves, with the 128-byte swizzle;
///   encoded by the driver's `cuTensorMapEncodeTiled`, looked up through the
///   runtime (`cudaGetDriverEntryPointByVersion`), so that users need not link
///   libcuda;
/// - device: `tma_load_2d` (one box global → shared, completing on an mbarrier)
///   and `mbarrier_wait_parity`, over the `cuda::ptx` wrappers of CCCL.
///
/// The device functions need sm_90; the caller compiles their uses only there.

#include <foundry/core/error.cuh>

#include <cuda.h>          // CUtensorMap and its enums: types only, no libcuda symbol is referenced
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <cuda/ptx>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace foundry::gemm_kernels::detail {

/// The driver's cuTensorMapEncodeTiled (the CUDA 12.0 ABI), looked up once per
/// process. Throws `cuda_error` if the runtime call fails and
/// `std::runtime_error` if the driver lacks the symbol.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encoder = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    FOUNDRY_CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
#else
    FOUNDRY_CUDA_TRY(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &found));
#endif
    if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
      throw std::runtime_error(
          "gemm_wgmma: the CUDA driver has no cuTensorMapEncodeTiled (a driver for CUDA 12.0 "
          "or later is needed)");
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encoder;
}

/// The TMA element type of `T`. A float is moved as FLOAT32, its 32 bits unchanged: the
/// TF32 wgmma reads the top 19 of them (sign, exponent, 10 mantissa bits).
template <class T>
constexpr CUtensorMapDataType tensor_map_type() noexcept {
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, float>,
                "TMA maps here hold fp16, bf16 or fp32");
  if constexpr (std::is_same_v<T, float>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  return std::is_same_v<T, __half> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
}

/// A TMA descriptor for the row-major view `outer` rows × `inner` contiguous
/// elements, rows `ld` elements apart, starting at `base`; each copy moves a box
/// of `box_outer` rows × `box_inner` elements. With the 128-byte swizzle the box
/// row must be exactly 128 bytes (`box_inner * sizeof(T) == 128`): shared row r
/// of a box then holds its 16-byte chunk c at chunk c ^ (r % 8), the layout wgmma
/// reads with swizzle mode 1. Boxes reaching past the matrix are zero-filled,
/// and their full size still counts towards the barrier's transaction bytes.
/// Preconditions (checked by the caller, gemm_wgmma_tma_path): `base` 16-byte
/// aligned, `ld * sizeof(T)` a multiple of 16 below 2^40, extents 1 .. 2^32.
/// Throws `std::runtime_error` with the driver's CUresult if encoding fails.
template <class T>
CUtensorMap make_tensor_map_2d(const T* base, std::uint64_t inner, std::uint64_t outer, std::uint64_t ld,
                               std::uint32_t box_inner, std::uint32_t box_outer) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {inner, outer};
  const cuuint64_t strides[1] = {ld * sizeof(T)};  // bytes between rows; the innermost stride is implicit
  const cuuint32_t box[2] = {box_inner, box_outer};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult result = tensor_map_encoder()(
      &map, tensor_map_type<T>(), 2, const_cast<T*>(base), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B,  // boxes are whole 128-byte rows: fetch L2 lines of 256 B
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);  // NONE = out-of-bounds elements read as zero
  if (result != CUDA_SUCCESS) {
    throw std::runtime_error("gemm_wgmma: cuTensorMapEncodeTiled failed with CUresult " +
                             std::to_string(static_cast<int>(result)) + " for a " + std::to_string(outer) + " x " +
                             std::to_string(inner) + " view, ld " + std::to_string(ld) + ", box " +
                             std::to_string(box_outer) + " x " + std::to_string(box_inner));
  }
  return map;
}

/// Spins until the phase of `barrier` with parity `parity` has completed.
/// A fresh barrier is in phase 0: waiting for parity 1 returns at once (the
/// "previous" phase counts as complete), which lets a producer pass its first
/// lap of the ring without a consumer having released anything.
__device__ inline void mbarrier_wait_parity(std::uint64_t* barrier, std::uint32_t parity) {
  while (!cuda::ptx::mbarrier_try_wait_parity(barrier, parity)) {
  }
}

/// Starts the TMA copy of the box at coordinates (`inner`, `outer`) (elements,
/// rows) of `map` into shared memory at `s_dst` (1024-byte aligned for the
/// 128-byte swizzle); its bytes complete a transaction on `barrier`.
__device__ inline void tma_load_2d(void* s_dst, const CUtensorMap* map, std::int32_t inner, std::int32_t outer,
                                   std::uint64_t* barrier) {
  const std::int32_t coordinates[2] = {inner, outer};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, s_dst, map, coordinates, barrier);
}

}  // namespace foundry::gemm_kernels::detail
