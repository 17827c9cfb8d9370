#pragma once
/// \file
/// Per-thread asynchronous copies global → shared (`cp.async`, sm_80 and later):
/// the copy lands in shared memory without passing through registers, so a
/// thread can start the loads of its next tile and go on computing on the
/// current one; the loads stay in flight meanwhile, which is what keeps a
/// memory-bound kernel's bytes in flight while it computes.
///
///     async_copy_16(s_dst, g_src);   // any number of these
///     async_copy_commit();           // closes a group
///     ...                            // compute on something else
///     async_copy_wait<0>();          // this thread's copies have landed
///     __syncthreads();               // ... and everyone's are visible
///
/// (gemm/detail/mma_sync.cuh has its own `cp_async_16` with a zero-filling
/// source size, for the GEMM's edge tiles.)

#include <cstdint>

namespace foundry {

/// Starts copying 16 bytes from global `src` to shared `dst`, both 16-byte
/// aligned. `.cg` caches in L2 only: the data is reused from shared memory, not
/// from L1. Ordered only by `async_copy_commit` / `async_copy_wait`.
__device__ inline void async_copy_16(void* dst, const void* src) {
  const auto s_dst = static_cast<std::uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s_dst), "l"(__cvta_generic_to_global(src))
               : "memory");
}

/// Closes the group of this thread's `async_copy_16` calls since the last commit
/// (possibly an empty group, which completes at once).
__device__ inline void async_copy_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

/// Waits until at most `Pending` of this thread's committed groups are still in
/// flight. Other threads' copies become visible only after a barrier.
template <int Pending>
__device__ inline void async_copy_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

}  // namespace foundry
