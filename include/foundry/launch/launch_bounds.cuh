#pragma once
/// \file
/// `resident_blocks_bound`: the second argument of a kernel's `__launch_bounds__`, capped
/// at what an SM of the architecture being compiled holds.
///
/// A policy tuned on the H200 asks the compiler to keep, say, 5 blocks of 256 threads
/// resident on an SM (1280 threads). An SM of sm_75 holds 1024 threads, one of sm_86 to
/// sm_89, sm_110 or sm_12x 1536; ptxas then ignores the bound with a warning, which a
/// user's `--Werror all-warnings` turns into a failed build of their fat binary. Capping
/// the bound per architecture (threads and blocks) keeps every tuned figure where it fits
/// and compiles everywhere.

namespace foundry {

/// The most threads an SM of the architecture this compilation pass targets holds (2048
/// in the host pass, where `__launch_bounds__` is not read): ptxas 13.0's limits.
__host__ __device__ constexpr int max_threads_per_sm_of_target() noexcept {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
  return 1024;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 880 || \
                                 __CUDA_ARCH__ == 890 || __CUDA_ARCH__ == 1100 || __CUDA_ARCH__ >= 1200)
  return 1536;
#else
  return 2048;
#endif
}

/// The most blocks an SM of this pass's architecture holds (32 in the host pass): 16 on
/// sm_75, sm_86, sm_87 and sm_88, 24 on sm_89, sm_110 and sm_12x, 32 on sm_80, sm_90 and sm_10x.
__host__ __device__ constexpr int max_blocks_per_sm_of_target() noexcept {
#if defined(__CUDA_ARCH__) && \
    (__CUDA_ARCH__ == 750 || __CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 880)
  return 16;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 890 || __CUDA_ARCH__ == 1100 || __CUDA_ARCH__ >= 1200)
  return 24;
#else
  return 32;
#endif
}

/// `wanted` resident blocks of `threads` threads, capped at what an SM of this pass's
/// architecture holds in threads and in blocks (at least 1), for
/// `__launch_bounds__(threads, ...)`.
__host__ __device__ constexpr int resident_blocks_bound(int threads, int wanted) noexcept {
  const int by_threads = threads > 0 ? max_threads_per_sm_of_target() / threads : wanted;
  const int fit = by_threads < max_blocks_per_sm_of_target() ? by_threads : max_blocks_per_sm_of_target();
  const int capped = wanted < fit ? wanted : fit;
  return capped > 1 ? capped : 1;
}

}  // namespace foundry
