#pragma once
/// \file
/// Wrappers over the sm_90a instructions of the Hopper GEMM rung (gemm_wgmma.cuh):
///
/// - `wgmma_m64n256k16`: D (64 × 256, fp32, in registers across a warpgroup of
///   128 threads) += A (64 × 16) · B (16 × 256), A and B fp16 or bf16 read from
///   shared memory through 64-bit matrix descriptors
///   (`wgmma.mma_async.sync.aligned.m64n256k16.f32.{f16,bf16}.{f16,bf16}`);
/// - `wgmma_m64n64k16`: the same for B (16 × 64), a quarter of the accumulators, for
///   products of N at most 64 (`wgmma_m64k16` picks either from the accumulators' shape);
/// - `wgmma_m64n256k8_tf32`: the same for A (64 × 8) and B (8 × 256) read as TF32
///   from fp32 in shared memory, both K-major (the TF32 form has no transpose);
/// - `wgmma_fence`, `wgmma_commit`, `wgmma_wait`: the fence before a batch of
///   wgmma, the commit that closes a group of them, and the wait for groups;
/// - `setmaxnreg_increase`/`setmaxnreg_decrease`: moving registers between
///   warpgroups of one block;
/// - `make_smem_descriptor`: the matrix descriptor, a constexpr function checked
///   on the host by tests/test_gemm_wgmma.cu.
///
/// wgmma and setmaxnreg exist only in the architecture-specific target sm_90a
/// (`__CUDA_ARCH_FEAT_SM90_ALL`); the caller compiles its uses only there. The
/// functions here are templates or unused inline functions elsewhere, so that an
/// sm_80 or plain sm_90 pass never emits them.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace foundry::gemm_kernels::detail {

/// How the rows of a shared-memory operand tile are swizzled (bits 62-63 of a
/// wgmma matrix descriptor). foundry uses only the 128-byte swizzle, the one TMA
/// writes with CU_TENSOR_MAP_SWIZZLE_128B: in every 1024-byte block of 8 rows of
/// 128 bytes, 16-byte chunk c of row r sits at chunk c ^ (r % 8).
enum class smem_swizzle : std::uint64_t { none = 0, bytes_128 = 1, bytes_64 = 2, bytes_32 = 3 };

/// The 64-bit wgmma matrix descriptor of a shared-memory operand tile (PTX ISA,
/// "Matrix Descriptor Format" of wgmma):
///   bits  0-13  start address >> 4        (the tile's shared-state-space address)
///   bits 16-29  leading byte offset >> 4  (LBO)
///   bits 32-45  stride byte offset >> 4   (SBO)
///   bits 49-51  base offset               (0: every swizzle atom starts 1024-byte aligned)
///   bits 62-63  swizzle mode
/// With the 128-byte swizzle (the canonical layouts of CUTLASS's make_gmma_desc):
/// - K-major operand (rows = M or N, 64 K-elements of 128 bytes per row): SBO =
///   1024, the distance between groups of 8 rows; LBO is unused (one wgmma's
///   K = 16 stays inside a 128-byte row), conventionally 1 (16 bytes). The K
///   offset inside the row is added to the start address (32 bytes per K = 16).
/// - MN-major operand (rows = K, 64 M/N-elements of 128 bytes per row): SBO =
///   1024, the distance between groups of 8 K-rows; LBO = the distance between
///   consecutive 64-element M/N chunks (8192 bytes in gemm_wgmma's tiles).
[[nodiscard]] __host__ __device__ constexpr std::uint64_t make_smem_descriptor(std::uint32_t start_address,
                                                                               std::uint32_t leading_byte_offset,
                                                                               std::uint32_t stride_byte_offset,
                                                                               smem_swizzle swizzle) noexcept {
  return (std::uint64_t{(start_address >> 4) & 0x3FFFu}) | (std::uint64_t{(leading_byte_offset >> 4) & 0x3FFFu} << 16) |
         (std::uint64_t{(stride_byte_offset >> 4) & 0x3FFFu} << 32) | (static_cast<std::uint64_t>(swizzle) << 62);
}

/// Orders this thread's earlier register and shared-memory accesses before the
/// wgmma that follow (`wgmma.fence.sync.aligned`). Needed before the first wgmma
/// of a batch, and whenever the accumulators were touched by other instructions.
/// Executed by all threads of the warpgroup.
__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

/// Closes the group of this warpgroup's wgmma issued since the last commit.
__device__ inline void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

/// Waits until at most `Pending` committed wgmma groups of this warpgroup are in
/// flight: then the accumulators of the finished groups may be read and their
/// shared-memory operands overwritten.
template <int Pending>
__device__ inline void wgmma_wait() {
  static_assert(Pending >= 0 && Pending <= 7, "wgmma.wait_group takes 0 to 7");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

/// An empty asm that claims to read and write every accumulator: the compiler may
/// not move accumulator reads or writes across it (CUTLASS's
/// warpgroup_fence_operand). Placed around the wgmma batches and after the last
/// wait, so that the epilogue reads registers only after the hardware wrote them.
template <int Rows, int Cols>
__device__ inline void fence_accumulators(float (&d)[Rows][Cols]) {
#pragma unroll
  for (int i = 0; i < Rows; ++i) {
#pragma unroll
    for (int j = 0; j < Cols; ++j) asm volatile("" : "+f"(d[i][j])::"memory");
  }
}

/// Raises this warpgroup's register limit to `Registers` per thread (waits until
/// another warpgroup of the block released enough). All 128 threads execute it.
template <int Registers>
__device__ inline void setmaxnreg_increase() {
  static_assert(Registers >= 24 && Registers <= 256 && Registers % 8 == 0, "setmaxnreg: 24 to 256, a multiple of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

/// Lowers this warpgroup's register limit to `Registers` per thread, releasing
/// the rest to the block's pool. All 128 threads execute it.
template <int Registers>
__device__ inline void setmaxnreg_decrease() {
  static_assert(Registers >= 24 && Registers <= 256 && Registers % 8 == 0, "setmaxnreg: 24 to 256, a multiple of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

// The 128 accumulator placeholders and operands of an m64n256 wgmma: %0 .. %127
// are d[i][j] = d[4i + j] of the PTX fragment; %128 and %129 the descriptors of A
// and B, %130 scale-d, %131 and %132 the transpose immediates.
#define FOUNDRY_WGMMA_N256_D_PLACEHOLDERS \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define FOUNDRY_WGMMA_N256_D_OPERANDS \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), \
      "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), \
      "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), \
      "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), \
      "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), \
      "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), \
      "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), \
      "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), \
      "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), \
      "+f"(d[15][3]), "+f"(d[16][0]), "+f"(d[16][1]), "+f"(d[16][2]), "+f"(d[16][3]), "+f"(d[17][0]), "+f"(d[17][1]), \
      "+f"(d[17][2]), "+f"(d[17][3]), "+f"(d[18][0]), "+f"(d[18][1]), "+f"(d[18][2]), "+f"(d[18][3]), "+f"(d[19][0]), \
      "+f"(d[19][1]), "+f"(d[19][2]), "+f"(d[19][3]), "+f"(d[20][0]), "+f"(d[20][1]), "+f"(d[20][2]), "+f"(d[20][3]), \
      "+f"(d[21][0]), "+f"(d[21][1]), "+f"(d[21][2]), "+f"(d[21][3]), "+f"(d[22][0]), "+f"(d[22][1]), "+f"(d[22][2]), \
      "+f"(d[22][3]), "+f"(d[23][0]), "+f"(d[23][1]), "+f"(d[23][2]), "+f"(d[23][3]), "+f"(d[24][0]), "+f"(d[24][1]), \
      "+f"(d[24][2]), "+f"(d[24][3]), "+f"(d[25][0]), "+f"(d[25][1]), "+f"(d[25][2]), "+f"(d[25][3]), "+f"(d[26][0]), \
      "+f"(d[26][1]), "+f"(d[26][2]), "+f"(d[26][3]), "+f"(d[27][0]), "+f"(d[27][1]), "+f"(d[27][2]), "+f"(d[27][3]), \
      "+f"(d[28][0]), "+f"(d[28][1]), "+f"(d[28][2]), "+f"(d[28][3]), "+f"(d[29][0]), "+f"(d[29][1]), "+f"(d[29][2]), \
      "+f"(d[29][3]), "+f"(d[30][0]), "+f"(d[30][1]), "+f"(d[30][2]), "+f"(d[30][3]), "+f"(d[31][0]), "+f"(d[31][1]), \
      "+f"(d[31][2]), "+f"(d[31][3])

#define FOUNDRY_WGMMA_M64N256K16(type) \
  asm volatile( \
      "{\n" \
      ".reg .pred p;\n" \
      "setp.ne.b32 p, %130, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." type "." type " {" FOUNDRY_WGMMA_N256_D_PLACEHOLDERS \
      "}, %128, %129, p, 1, 1, %131, %132;\n" \
      "}\n" \
      : FOUNDRY_WGMMA_N256_D_OPERANDS \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TransposeA ? 1 : 0), "n"(TransposeB ? 1 : 0))

/// d = A·B + (scale_d ? d : 0) for a 64 × 256 × 16 tile, issued asynchronously by
/// the whole warpgroup: the instruction only starts the work; `wgmma_commit` and
/// `wgmma_wait` say when d is ready. `In` is `__half` or `__nv_bfloat16`.
/// `TransposeA`: A is M-major in shared memory (else K-major); `TransposeB`: B is
/// N-major (else K-major). Thread t of the warpgroup (warp w = t / 32, lane l)
/// holds, for i = 0 .. 31,
///   d[i][0], d[i][1] = D(16w + l/4,     8i + 2(l%4) + {0, 1})
///   d[i][2], d[i][3] = D(16w + l/4 + 8, 8i + 2(l%4) + {0, 1})
/// (PTX ISA, "Matrix fragments for wgmma .m64nNk16", accumulator D): per warp
/// the same as 32 mma.m16n8 accumulator fragments side by side.
template <class In, bool TransposeA, bool TransposeB>
__device__ inline void wgmma_m64n256k16(float (&d)[32][4], std::uint64_t desc_a, std::uint64_t desc_b,
                                        std::uint32_t scale_d = 1) {
  static_assert(std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>,
                "wgmma_m64n256k16 takes __half or __nv_bfloat16 inputs");
  if constexpr (std::is_same_v<In, __half>) {
    FOUNDRY_WGMMA_M64N256K16("f16");
  } else {
    FOUNDRY_WGMMA_M64N256K16("bf16");
  }
}

/// d = A·B + (scale_d ? d : 0) for a 64 × 256 × 8 tile with TF32 inputs
/// (`wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32`): A and B are fp32 in shared
/// memory, read as TF32 (the hardware uses sign, exponent and the top 10 mantissa bits
/// of each, dropping the other 13), both K-major: the TF32 form takes no transpose
/// immediate. Asynchronous as `wgmma_m64n256k16`, with the same accumulator fragment.
__device__ inline void wgmma_m64n256k8_tf32(float (&d)[32][4], std::uint64_t desc_a, std::uint64_t desc_b,
                                            std::uint32_t scale_d = 1) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" FOUNDRY_WGMMA_N256_D_PLACEHOLDERS
      "}, %128, %129, p, 1, 1;\n"
      "}\n"
      : FOUNDRY_WGMMA_N256_D_OPERANDS
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// The 32 accumulator placeholders and operands of an m64n64 wgmma: %0 .. %31 are d[i][j]
// = d[4i + j] of the PTX fragment; %32 and %33 the descriptors of A and B, %34 scale-d, %35
// and %36 the transpose immediates.
#define FOUNDRY_WGMMA_N64_D_PLACEHOLDERS \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define FOUNDRY_WGMMA_N64_D_OPERANDS \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), \
      "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), \
      "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), \
      "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), \
      "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])

#define FOUNDRY_WGMMA_M64N64K16(type) \
  asm volatile( \
      "{\n" \
      ".reg .pred p;\n" \
      "setp.ne.b32 p, %34, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." type "." type " {" FOUNDRY_WGMMA_N64_D_PLACEHOLDERS \
      "}, %32, %33, p, 1, 1, %35, %36;\n" \
      "}\n" \
      : FOUNDRY_WGMMA_N64_D_OPERANDS \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TransposeA ? 1 : 0), "n"(TransposeB ? 1 : 0))

/// `wgmma_m64n256k16` for a 64 × 64 × 16 tile (`wgmma.mma_async...m64n64k16`): a quarter
/// of the accumulators, d[i] for i = 0 .. 7 with the same fragment layout, for products
/// whose N is at most 64, where the m64n256 form would multiply zeros in 3/4 of its work
/// or more.
template <class In, bool TransposeA, bool TransposeB>
__device__ inline void wgmma_m64n64k16(float (&d)[8][4], std::uint64_t desc_a, std::uint64_t desc_b,
                                       std::uint32_t scale_d = 1) {
  static_assert(std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>,
                "wgmma_m64n64k16 takes __half or __nv_bfloat16 inputs");
  if constexpr (std::is_same_v<In, __half>) {
    FOUNDRY_WGMMA_M64N64K16("f16");
  } else {
    FOUNDRY_WGMMA_M64N64K16("bf16");
  }
}

/// The 16-bit wgmma of a consumer's 64 × N × 16 step, N = 8 × NFragments: 256 or 64.
template <class In, bool TransposeA, bool TransposeB, int NFragments>
__device__ inline void wgmma_m64k16(float (&d)[NFragments][4], std::uint64_t desc_a, std::uint64_t desc_b) {
  static_assert(NFragments == 32 || NFragments == 8, "wgmma N: 256 or 64");
  if constexpr (NFragments == 32) {
    wgmma_m64n256k16<In, TransposeA, TransposeB>(d, desc_a, desc_b);
  } else {
    wgmma_m64n64k16<In, TransposeA, TransposeB>(d, desc_a, desc_b);
  }
}

#undef FOUNDRY_WGMMA_M64N256K16
#undef FOUNDRY_WGMMA_M64N64K16
#undef FOUNDRY_WGMMA_N64_D_OPERANDS
#undef FOUNDRY_WGMMA_N64_D_PLACEHOLDERS
#undef FOUNDRY_WGMMA_N256_D_OPERANDS
#undef FOUNDRY_WGMMA_N256_D_PLACEHOLDERS

}  // namespace foundry::gemm_kernels::detail
