#pragma once
/// \file
/// One-instruction wrappers over the sm_80 PTX that the tensor-core GEMM is
/// built from (all available on sm_80 and every later architecture):
///
/// - `cp_async_16`: a 16-byte global → shared copy that bypasses registers
///   (`cp.async.cg`), with a source size so that edges are zero-filled;
/// - `ldmatrix_x4`: four 8×8 matrices of 16-bit elements from shared memory
///   into the register layout `mma` expects, optionally transposed;
/// - `mma_m16n8k16`: D = A·B + D on a 16×8×16 tile, fp16 or bf16 inputs, fp32
///   accumulators (`mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32`).
///
/// A fat binary that also builds sm_75 or older compiles each wrapper there to a trap:
/// the host never plans these kernels on such a device (`gemm_rung_supports` asks for
/// compute capability 8.0), and the kernels that call them still compile for it.
///
/// Which element each lane holds is the PTX ISA's business; it is spelled out
/// in gemm_tensor_core.cuh where the fragments are addressed, and checked on the
/// host by tests/test_gemm_tensor_core.cu.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

// The architecture of this device compilation pass is older than sm_80: every wrapper traps.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define FOUNDRY_MMA_SYNC_UNAVAILABLE 1
#endif

namespace foundry::gemm_kernels::detail {

/// The 32-bit shared-state-space address of a pointer into shared memory.
__device__ inline std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

/// Starts an asynchronous copy of 16 bytes from global `src` to shared `dst`
/// (both 16-byte aligned). Only the first `src_bytes` (0 to 16) bytes are read;
/// the rest of the 16 are zero-filled, so `src_bytes == 0` writes 16 zero bytes
/// and reads nothing. The copy is ordered by `cp_async_commit`/`cp_async_wait`.
__device__ inline void cp_async_16(std::uint32_t dst, const void* src, std::uint32_t src_bytes) {
#ifdef FOUNDRY_MMA_SYNC_UNAVAILABLE
  __trap();
#else
  // .cg: cache in L2 only; the tile is reused from shared memory, not from L1.
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(__cvta_generic_to_global(src)),
               "r"(src_bytes)
               : "memory");
#endif
}

/// Closes the group of this thread's `cp_async_16` calls issued since the last commit.
__device__ inline void cp_async_commit() {
#ifdef FOUNDRY_MMA_SYNC_UNAVAILABLE
  __trap();
#else
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/// Waits until at most `Pending` of this thread's committed groups are still in
/// flight. Other threads' copies become visible only after a barrier.
template <int Pending>
__device__ inline void cp_async_wait() {
#ifdef FOUNDRY_MMA_SYNC_UNAVAILABLE
  __trap();
#else
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
}

/// Loads four 8×8 matrices of 16-bit elements: lanes 8j..8j+7 give the shared
/// addresses of the 8 rows (16 bytes each) of matrix j, and register j receives
/// matrix j. Without `Transpose`, lane l gets row l/4, columns 2(l%4) and
/// 2(l%4)+1 of each matrix; with it, rows 2(l%4) and 2(l%4)+1 of column l/4.
/// Volatile: it reads shared memory written by other threads, so it must stay
/// between the barriers around it.
template <bool Transpose>
__device__ inline void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t address) {
#ifdef FOUNDRY_MMA_SYNC_UNAVAILABLE
  __trap();
#else
  if constexpr (Transpose) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  }
#endif
}

/// d = a·b + d for one 16×8×16 tile held across the warp: a is 16×16 (row
/// layout, four 32-bit registers of two elements), b is 16×8 (column layout, two
/// registers), d is 16×8 in fp32 (four floats). `In` is `__half` or `__nv_bfloat16`.
/// Not volatile: a pure function of its registers, free to be scheduled.
template <class In>
__device__ inline void mma_m16n8k16(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
#ifdef FOUNDRY_MMA_SYNC_UNAVAILABLE
  __trap();
#else
  static_assert(std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>,
                "mma_m16n8k16 takes __half or __nv_bfloat16 inputs");
  if constexpr (std::is_same_v<In, __half>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
#endif
}

}  // namespace foundry::gemm_kernels::detail

#undef FOUNDRY_MMA_SYNC_UNAVAILABLE
