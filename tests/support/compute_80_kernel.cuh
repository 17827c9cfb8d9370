#pragma once
// The kernel of compute_80_kernel.cu, a unit built as compute_80 PTX alone.

#include <cuda/stream_ref>

#include <cstddef>

namespace foundry::test {

/// The address of compute_80_kernel.cu's copy kernel, for `cudaFuncGetAttributes`.
const void* compute_80_copy_kernel() noexcept;

/// Enqueues that kernel on `s` through `foundry::launch` with
/// `launch_dependency::programmatic`: `out[i] = in[i]` for `i < n`. Asynchronous.
void launch_compute_80_copy(const int* in, int* out, std::size_t n, cuda::stream_ref s);

}  // namespace foundry::test
