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

#include <string>
#include <utility>

namespace foundry {

/// Enqueues `kernel<<<c.grid, c.block, c.dynamic_shared_bytes, s>>>(args...)` through
/// `cudaLaunchKernelEx`, on the device that `s` belongs to: the configuration is checked
/// against that device, and the launch switches to it for the call when another device
/// is current. An empty grid launches nothing (its block is still checked, so that a
/// block of zero threads is an error, not a silent no-op). Dynamic shared memory above
/// the 48 KiB default (static and dynamic together) is opted into on the kernel first.
/// The launch is judged by its own returned status, never by a pending error that an
/// earlier call left behind.
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
  const bool programmatic = c.dependency == launch_dependency::programmatic && device.compute_capability_major >= 9;
  config.attrs = programmatic ? &attribute : nullptr;
  config.numAttrs = programmatic ? 1 : 0;
  FOUNDRY_CHECK_LAUNCH_STATUS(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...), s.get());
}

}  // namespace foundry
