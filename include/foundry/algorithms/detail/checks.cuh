#pragma once
/// \file
/// The argument checks that every algorithm runs before it enqueues anything,
/// worded the same way everywhere: each throws `std::invalid_argument` (through
/// `FOUNDRY_EXPECTS`, with file and line) naming the argument and the reason.
///
/// Two kinds, in this order: the pure checks (sizes, null pointers, shapes, overlaps),
/// which touch no GPU, then the memory checks (`expect_device_accessible`), which ask
/// the driver where a pointer lives, so that a host array passed where device memory
/// is needed is refused instead of faulting (or, for a host-side argument, crashing
/// the host). A memory check that cannot ask (no device, no driver) passes: the call
/// then fails at its first CUDA call with a `cuda_error` that says why.

#include <foundry/core/error.cuh>
#include <foundry/core/overlap.cuh>
#include <foundry/memory/checked_memory.cuh>
#include <foundry/runtime/device.cuh>

#include <cuda_runtime_api.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <string>

namespace foundry::detail {

/// `x` is empty or has a pointer.
template <class T, std::size_t Extent>
void expect_device_span(cuda::std::span<T, Extent> x, const char* what) {
  FOUNDRY_EXPECTS(x.empty() || x.data() != nullptr,
                  std::string(what) + " has " + std::to_string(x.size()) + " elements but a null pointer");
}

/// `x` has exactly `n` elements, the size of `reference` (for example "the output").
template <class T, std::size_t Extent>
void expect_same_size(cuda::std::span<T, Extent> x, std::size_t n, const char* what,
                      const char* reference = "the output") {
  FOUNDRY_EXPECTS(x.size() == n, std::string(what) + " has " + std::to_string(x.size()) + " elements, " + reference +
                                     " has " + std::to_string(n));
}

/// `x` holds at least `needed` elements and has a pointer if it must hold any.
template <class T, std::size_t Extent>
void expect_capacity(cuda::std::span<T, Extent> x, std::size_t needed, const char* what) {
  FOUNDRY_EXPECTS(x.size() >= needed, std::string(what) + " is too small: it needs " + std::to_string(needed) +
                                          " elements, it has " + std::to_string(x.size()));
  FOUNDRY_EXPECTS(needed == 0 || x.data() != nullptr, std::string(what) + " has a null pointer");
}

/// Caller-provided workspace of `given` bytes covers the `needed` bytes that
/// `size_function` (the public `*_workspace_bytes` call) reports.
inline void expect_workspace(const void* data, std::size_t given, std::size_t needed, const char* algorithm,
                             const char* size_function) {
  FOUNDRY_EXPECTS(given >= needed && (needed == 0 || data != nullptr),
                  std::string(algorithm) + " workspace is too small: " + std::to_string(given) + " bytes given, " +
                      std::to_string(needed) + " needed (" + size_function + ")");
}

/// The device that a call on `s` runs on, for the memory checks; -1 when it cannot be
/// told (no device or driver: the checks then pass, and the call's first CUDA call
/// reports the failure). Clears only the error of its own failed query.
[[nodiscard]] inline int device_for_checks(cuda::stream_ref s) noexcept {
  int device = -1;
  const cudaError_t status = query_stream_device(s.get(), device);
  clear_own_error(status);
  return status == cudaSuccess ? device : -1;
}

/// Where the driver says `p` lives; false when it cannot be told.
[[nodiscard]] inline bool query_pointer(const void* p, cudaPointerAttributes& attributes) noexcept {
  const cudaError_t status = cudaPointerGetAttributes(&attributes, p);
  clear_own_error(status);
  return status == cudaSuccess;
}

/// Refuses `p` (named `what` in the message) unless kernels on `device` can read and
/// write it: memory of that device, managed memory, page-locked host memory mapped into
/// the device's address space, or pageable host memory where the device reports pageable
/// memory access (HMM, ATS). Memory of another device passes when `device` is capable of
/// peer access to it (`cudaDeviceCanAccessPeer`); whether that access was granted
/// (`cudaDeviceEnablePeerAccess`, or `cudaMemPoolSetAccess` for stream-ordered memory) is
/// not checked. Page-locked memory is judged by its mapping on the current device.
/// One `cudaPointerGetAttributes` per pointer, except for a pointer into an allocation
/// of the device itself or managed memory that passed before (checked_memory.cuh: no
/// driver call then). Null or `device` < 0: nothing to check.
inline void expect_device_accessible(const void* p, int device, const char* what) {
  if (p == nullptr || device < 0 || is_checked_memory(p, device)) return;
  cudaPointerAttributes a{};
  if (!query_pointer(p, a)) return;
  switch (a.type) {
    case cudaMemoryTypeManaged: remember_checked_memory(p, device); return;
    case cudaMemoryTypeDevice: {
      if (a.device == device) {
        remember_checked_memory(p, device);
        return;
      }
      int peer = 0;
      clear_own_error(cudaDeviceCanAccessPeer(&peer, device, a.device));
      FOUNDRY_EXPECTS(peer != 0, std::string(what) + " is memory of device " + std::to_string(a.device) +
                                     ", which device " + std::to_string(device) + " (the stream's) cannot access");
      return;
    }
    case cudaMemoryTypeHost:
      FOUNDRY_EXPECTS(
          a.devicePointer != nullptr,
          std::string(what) + " is page-locked host memory that is not mapped for device " + std::to_string(device));
      return;
    default:  // cudaMemoryTypeUnregistered: ordinary (pageable) host memory
      FOUNDRY_EXPECTS(get_device_properties(device).pageable_memory_access,
                      std::string(what) + " is host memory, and device " + std::to_string(device) +
                          " cannot access pageable host memory: copy it into a device_buffer first");
  }
}

/// The span version: an empty span is never dereferenced, so it passes.
template <class T, std::size_t Extent>
void expect_device_accessible(cuda::std::span<T, Extent> x, int device, const char* what) {
  if (!x.empty()) expect_device_accessible(static_cast<const void*>(x.data()), device, what);
}

/// Refuses `p` (named `what`) if the host cannot read it: an argument that foundry
/// reads on the host (convolve_2d's filter), given as device memory, would crash the
/// host process instead of throwing. Null: nothing to check.
inline void expect_host_accessible(const void* p, const char* what) {
  if (p == nullptr) return;
  cudaPointerAttributes a{};
  if (!query_pointer(p, a)) return;
  FOUNDRY_EXPECTS(a.type != cudaMemoryTypeDevice, std::string(what) + " is memory of device " +
                                                      std::to_string(a.device) +
                                                      ", but it is read on the host: pass host memory");
}

}  // namespace foundry::detail
