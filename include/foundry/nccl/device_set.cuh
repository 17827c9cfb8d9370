#pragma once
/// \file
/// `device_set`: the GPUs one process drives, each with its own stream, with peer
/// access enabled between every pair whose topology allows it.
///
///     foundry::nccl::device_set devices;                          // every visible GPU
///     auto x = devices.allocate<float>(n);                        // n floats on each GPU
///     devices.for_each([&](int i) { my_kernel_launch(x[i], devices.stream(i)); });
///     devices.synchronize();
///
/// Every member function that touches a device makes it current with `device_guard` and
/// restores the caller's current device before returning, also when it throws.
///
/// Lifetime: buffers from `allocate` are freed on the set's streams, so they must be
/// destroyed before the set (declare the set first).

#include <foundry/core/error.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda_runtime_api.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace foundry::nccl {

/// The GPUs one process drives, a stream on each, peer access enabled (move-only).
class device_set {
 public:
  /// Every visible device, in ordinal order. Throws `cuda_error` when there is none.
  device_set() : device_set(all_visible_devices()) {}

  /// The devices `ordinals`, in that order: member i is device `ordinals[i]` (and rank i
  /// of a `communicator` built on the set). Creates one non-blocking stream per device
  /// and enables peer access from each member to each other member where
  /// `cudaDeviceCanAccessPeer` allows it. Peer access stays enabled after the set is
  /// destroyed: it is a property of the process, which other code may rely on.
  /// Throws `std::invalid_argument` for an empty list, an ordinal out of range or a
  /// repeated one (NCCL does not allow two ranks on one device), `cuda_error` otherwise.
  explicit device_set(std::vector<int> ordinals) : ordinals_(std::move(ordinals)) {
    FOUNDRY_EXPECTS(!ordinals_.empty(), "device_set: no devices");
    const int count = device_count();
    for (std::size_t i = 0; i < ordinals_.size(); ++i) {
      FOUNDRY_EXPECTS(ordinals_[i] >= 0 && ordinals_[i] < count, "device_set: device " + std::to_string(ordinals_[i]) +
                                                                     " is not one of the " + std::to_string(count) +
                                                                     " visible devices");
      FOUNDRY_EXPECTS(std::count(ordinals_.begin(), ordinals_.end(), ordinals_[i]) == 1,
                      "device_set: device " + std::to_string(ordinals_[i]) + " is listed twice");
    }
    const std::size_t n = ordinals_.size();
    streams_.reserve(n);
    for (const int d : ordinals_) {
      device_guard guard(d);
      streams_.emplace_back();
    }
    peer_.assign(n * n, false);
    for (std::size_t i = 0; i < n; ++i) {
      device_guard guard(ordinals_[i]);
      for (std::size_t j = 0; j < n; ++j) {
        if (i == j) continue;
        int can = 0;
        FOUNDRY_CUDA_TRY(cudaDeviceCanAccessPeer(&can, ordinals_[i], ordinals_[j]));
        if (can == 0) continue;
        const cudaError_t status = cudaDeviceEnablePeerAccess(ordinals_[j], 0);
        // Already enabled (by another set, or the user) is what we want.
        if (status == cudaErrorPeerAccessAlreadyEnabled) {
          foundry::detail::clear_own_error(status);
        } else {
          FOUNDRY_CUDA_TRY(status);
        }
        peer_[i * n + j] = true;
      }
    }
  }

  /// Members in the set.
  [[nodiscard]] int size() const noexcept { return static_cast<int>(ordinals_.size()); }
  /// The device ordinal of member `i`.
  [[nodiscard]] int device(int i) const {
    check_member(i);
    return ordinals_[static_cast<std::size_t>(i)];
  }
  /// The device ordinals, in rank order.
  [[nodiscard]] const std::vector<int>& devices() const noexcept { return ordinals_; }
  /// The stream of member `i` (on `device(i)`).
  [[nodiscard]] cuda::stream_ref stream(int i) const {
    check_member(i);
    return streams_[static_cast<std::size_t>(i)];
  }
  /// Every member's stream, in member order: what the collectives take.
  [[nodiscard]] std::vector<cuda::stream_ref> streams() const {
    return std::vector<cuda::stream_ref>(streams_.begin(), streams_.end());
  }
  /// Whether peer access from member `i` to member `j` is enabled (`cudaDeviceEnablePeerAccess`):
  /// kernels on `i` may then dereference `cudaMalloc` memory of `j`. Buffers from `allocate`
  /// come from `j`'s stream-ordered pool, which `i` may read only after
  /// `cudaMemPoolSetAccess` (NCCL needs neither: it moves data through its own buffers).
  [[nodiscard]] bool peer_access(int i, int j) const {
    check_member(i);
    check_member(j);
    return peer_[static_cast<std::size_t>(i) * ordinals_.size() + static_cast<std::size_t>(j)];
  }

  /// Calls `f(i)` for each member `i`, with `device(i)` current during the call; the
  /// caller's current device is restored afterwards, also when `f` throws.
  template <class F>
  void for_each(F&& f) const {
    for (int i = 0; i < size(); ++i) {
      device_guard guard(device(i));
      f(i);
    }
  }

  /// `counts[i]` uninitialised elements on each member i, allocated stream-ordered on
  /// `stream(i)` (asynchronous). Throws `std::invalid_argument` unless there is one count
  /// per member, `cuda_error` if an allocation fails.
  template <class T>
  [[nodiscard]] std::vector<device_buffer<T>> allocate(const std::vector<std::size_t>& counts) const {
    FOUNDRY_EXPECTS(counts.size() == ordinals_.size(), "device_set::allocate: one count per device");
    std::vector<device_buffer<T>> buffers;
    buffers.reserve(counts.size());
    for_each([&](int i) { buffers.emplace_back(counts[static_cast<std::size_t>(i)], stream(i)); });
    return buffers;
  }
  /// `n` uninitialised elements on every member (asynchronous, as above).
  template <class T>
  [[nodiscard]] std::vector<device_buffer<T>> allocate(std::size_t n) const {
    return allocate<T>(std::vector<std::size_t>(ordinals_.size(), n));
  }

  /// Blocks the host until every member's stream is idle. Throws `cuda_error` with the
  /// first failure of any asynchronous work.
  void synchronize() const {
    for_each([&](int i) { foundry::synchronize(stream(i)); });
  }

 private:
  static std::vector<int> all_visible_devices() {
    std::vector<int> all(static_cast<std::size_t>(device_count()));
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    return all;
  }
  void check_member(int i) const {
    FOUNDRY_EXPECTS(i >= 0 && i < size(),
                    "device_set: member " + std::to_string(i) + " of a set of " + std::to_string(size()) + " devices");
  }

  std::vector<int> ordinals_;
  std::vector<foundry::stream> streams_;
  std::vector<bool> peer_;
};

/// Views of every buffer, in order: the per-device arguments of the collectives.
template <class T>
[[nodiscard]] std::vector<cuda::std::span<T>> spans(std::vector<device_buffer<T>>& buffers) {
  std::vector<cuda::std::span<T>> v;
  v.reserve(buffers.size());
  for (auto& b : buffers) v.push_back(b.span());
  return v;
}
/// Read-only spans of `buffers`, one per device, in the same order.
template <class T>
[[nodiscard]] std::vector<cuda::std::span<const T>> const_spans(const std::vector<device_buffer<T>>& buffers) {
  std::vector<cuda::std::span<const T>> v;
  v.reserve(buffers.size());
  for (const auto& b : buffers) v.push_back(b.span());
  return v;
}

}  // namespace foundry::nccl
