#pragma once
/// \file
/// The device side of programmatic dependent launch (`launch_dependency::programmatic`,
/// sm_90 and later): a kernel launched that way may start while the kernel before
/// it on the stream still runs, so its blocks are resident and its parameters
/// loaded by the time the data is ready. H200, back to back (bench_reduce,
/// bench_transform): a two-launch float sum of 2^14 took 5.9 us a call without
/// it and 3.5 with it; saxpy of 2^16 floats 2.25 us and 1.1.
///
///     __global__ void k(const float* in, float* out) {
///       foundry::allow_dependent_launch();   // the next kernel may start launching
///       foundry::wait_for_prior_grids();     // before the first global access
///       ...
///     }
///
/// Both are no-ops on older architectures and in kernels launched without the
/// attribute (then the prior grids have finished before the kernel starts). Code compiled
/// for an older architecture that runs on sm_90 (PTX of compute_80, JIT-compiled) lacks
/// them, so `launch` asks for a programmatic launch only for kernels whose code was
/// compiled for sm_90 or later (`detail::kernel_controls_grid_dependency`).

namespace foundry {

/// Blocks until every kernel this one depends on has finished and its memory
/// operations are visible (`griddepcontrol.wait`).
__device__ inline void wait_for_prior_grids() noexcept {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Lets the next kernel on the stream, if launched with programmatic
/// serialization, start once every block of this one has called this or exited
/// (`griddepcontrol.launch_dependents`). That kernel still waits for this one's
/// completion in its own `wait_for_prior_grids()`.
__device__ inline void allow_dependent_launch() noexcept {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

}  // namespace foundry
