#pragma once
/// \file
/// `launch(stream, config, kernel, args...)`: validates the configuration
/// against the stream's device, launches on an explicit stream, and checks the
/// launch's own status. Asynchronous: returns once the kernel is enqueued.

#include <foundry/core/error.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

namespace foundry {

namespace detail {

/// Whether the code of `kernel` that runs on the current device was compiled for sm_90 or
/// later (`cudaFuncGetAttributes`' ptxVersion), so that it holds the `griddepcontrol`
/// instructions that a programmatic launch relies on (dependent_launch.cuh): a program
/// built for sm_80 alone runs on Hopper from PTX of compute_80, where `wait_for_prior_grids`
/// compiles to nothing, and such a kernel launched programmatically could read its inputs
/// before the kernel ahead of it has written them. Asked once per kernel and device, then
/// read from a fixed table without a lock (a full table asks each time; the answers never
/// change, so two threads that fill one slot write the same value). `device` names the
/// current device. Throws `cuda_error` if the query fails.
inline bool kernel_controls_grid_dependency(const void* kernel, int device) {
  struct slot {
    std::atomic<std::uintptr_t> key{0};
    std::atomic<int> ptx_version{0};  // 0: being filled
  };
  constexpr std::size_t slots = 1024, probes = 16;
  static slot table[slots];
  // User-space addresses stay below 2^56: the device ordinal goes above them.
  const std::uintptr_t key = reinterpret_cast<std::uintptr_t>(kernel) ^ (static_cast<std::uintptr_t>(device + 1) << 56);
  const std::size_t home = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 54) % slots;
  slot* free_slot = nullptr;
  for (std::size_t i = 0; i < probes; ++i) {
    slot& candidate = table[(home + i) % slots];
    const std::uintptr_t held = candidate.key.load(std::memory_order_acquire);
    if (held == key) {
      const int version = candidate.ptx_version.load(std::memory_order_acquire);
      if (version != 0) return version >= 90;
      break;  // another thread is filling it: ask
    }
    if (held == 0) {
      free_slot = &candidate;
      break;
    }
  }
  cudaFuncAttributes attributes{};
  FOUNDRY_CUDA_TRY(cudaFuncGetAttributes(&attributes, kernel));
  std::uintptr_t expected = 0;
  if (free_slot != nullptr && attributes.ptxVersion > 0 &&
      free_slot->key.compare_exchange_strong(expected, key, std::memory_order_acq_rel)) {
    free_slot->ptx_version.store(attributes.ptxVersion, std::memory_order_release);
  }
  return attributes.ptxVersion >= 90;
}

}  // namespace detail

/// Enqueues `kernel<<<c.grid, c.block, c.dynamic_shared_bytes, s>>>(args...)` through
/// `cudaLaunchKernelEx`, on the device that `s` belongs to: the configuration is checked
/// against that device, and the launch switches to it for the call when another device
/// is current. An empty grid launches nothing (its block is still checked, so that a
/// block of zero threads is an error, not a silent no-op). Dynamic shared memory above
/// the 48 KiB default (static and dynamic together) is opted into on the kernel first.
/// The launch is judged by its own returned status, never by a pending error that an
/// earlier call left behind. A programmatic launch (`c.dependency`) is made as such only on
/// compute capability 9.0 or later and where the kernel's code was compiled for sm_90 or
/// later (`detail::kernel_controls_grid_dependency`); otherwise the kernel waits for the
/// work before it in full.
/// Throws `std::invalid_argument` for the null (legacy default) stream or a
/// configuration the device cannot run, and `cuda_error` if the launch fails
/// (with `FOUNDRY_DEBUG_SYNC`, also if the kernel faults).
template <class... Params, class... Args>
void launch(cuda::stream_ref s, const launch_config& c, void (*kernel)(Params...), Args&&... args) {
  detail::expect_explicit_stream(s);
  if (c.empty()) {
    FOUNDRY_EXPECTS(c.block_threads() > 0 && c.block_threads() % 32 == 0,
                    "invalid launch configuration: a block of " + std::to_string(c.block_threads()) +
                        " threads (a whole number of warps is needed)");
    return;
  }
  const int ordinal = stream_device(s.get());
  const device_properties& device = get_device_properties(ordinal);
  validate(c, device);
  // A no-op when the stream's device is current (the common case: no driver call).
  const device_guard on_stream_device(ordinal);
  if (c.dynamic_shared_bytes > 0) {
    // The kernel's limit on dynamic shared memory starts at the 48 KiB default less its
    // static shared memory, and is only ever raised: lowering it to this launch's need
    // would fail a larger launch of the same kernel that another thread has just checked.
    cudaFuncAttributes attributes{};
    FOUNDRY_CUDA_TRY(cudaFuncGetAttributes(&attributes, kernel));
    FOUNDRY_EXPECTS(attributes.sharedSizeBytes + c.dynamic_shared_bytes <= device.shared_memory_per_block_optin,
                    "invalid launch configuration: " + std::to_string(attributes.sharedSizeBytes) +
                        " bytes of static and " + std::to_string(c.dynamic_shared_bytes) +
                        " bytes of dynamic shared memory exceed the device's opt-in maximum of " +
                        std::to_string(device.shared_memory_per_block_optin) + " bytes per block");
    if (c.dynamic_shared_bytes > static_cast<std::size_t>(attributes.maxDynamicSharedSizeBytes)) {
      FOUNDRY_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(c.dynamic_shared_bytes)));
    }
  }
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = c.grid;
  config.blockDim = c.block;
  config.dynamicSmemBytes = c.dynamic_shared_bytes;
  config.stream = s.get();
  const bool programmatic = c.dependency == launch_dependency::programmatic && device.compute_capability_major >= 9 &&
                            detail::kernel_controls_grid_dependency(reinterpret_cast<const void*>(kernel), ordinal);
  config.attrs = programmatic ? &attribute : nullptr;
  config.numAttrs = programmatic ? 1 : 0;
  FOUNDRY_CHECK_LAUNCH_STATUS(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), s.get());
}

}  // namespace foundry
