#pragma once
/// \file
/// `communicator`: owns the NCCL communicators of the ranks this process drives.
///
/// Two ways to build one, as NCCL has:
/// - one process drives every GPU of a `device_set` (`ncclCommInitAll`): one local rank
///   per device, rank i on `devices.device(i)`;
///       foundry::nccl::device_set devices;
///       foundry::nccl::communicator comm(devices);
/// - one process (or thread) per GPU (`ncclCommInitRank`): the caller creates a
///   `unique_id()` on one rank and hands it to the others (MPI, a file, a socket), then
///   each builds its rank:
///       foundry::nccl::communicator comm(id, nranks, rank, device);
///
/// Local rank i (0 ≤ i < `size()`) is this process's i-th communicator; `rank(i)` is its
/// rank among all `nranks()`. Error handling: after an NCCL failure in any foundry call
/// the communicator is aborted (`ncclCommAbort`: peers waiting on it are released rather
/// than left to hang) and holds no ranks any more; a communicator that never failed is
/// destroyed with `ncclCommDestroy`. Destructors never throw.

#include <foundry/core/error.cuh>
#include <foundry/nccl/device_set.cuh>
#include <foundry/nccl/error.cuh>
#include <foundry/runtime/device.cuh>

#include <nccl.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace foundry::nccl {

namespace detail {
/// Restores the caller's current device at scope exit, whatever the calls in between set
/// (NCCL's set-up and group launch switch devices). Unlike `device_guard(current_device())`,
/// which switches nothing and so restores nothing, it compares on exit. Never throws on exit.
class restore_current_device {
 public:
  restore_current_device() : device_(current_device()) {}
  ~restore_current_device() {
    int now = -1;
    const cudaError_t status = cudaGetDevice(&now);
    if (status != cudaSuccess) {
      foundry::detail::clear_own_error(status);
    } else if (now != device_) {
      FOUNDRY_CUDA_REPORT(cudaSetDevice(device_));
    }
  }
  restore_current_device(const restore_current_device&) = delete;
  restore_current_device& operator=(const restore_current_device&) = delete;

 private:
  int device_;
};
}  // namespace detail

/// A new NCCL unique id (`ncclGetUniqueId`), to hand to every rank of a communicator
/// built one rank per process. Call it on one rank only. Throws `nccl_error`.
[[nodiscard]] inline ncclUniqueId unique_id() {
  ncclUniqueId id{};
  FOUNDRY_NCCL_TRY(ncclGetUniqueId(&id));
  return id;
}

/// Owns the NCCL communicators of this process's ranks (move-only; see the file comment).
class communicator {
 public:
  /// An empty communicator, holding no ranks (as a moved-from or aborted one): collectives refuse it.
  communicator() = default;

  /// One rank per member of `devices` (`ncclCommInitAll`): rank i on `devices.device(i)`.
  /// Blocks until every rank is ready. Throws `nccl_error`; whatever NCCL had created is
  /// aborted first, so nothing leaks.
  explicit communicator(const device_set& devices) : devices_(devices.devices()) {
    comms_.assign(devices_.size(), nullptr);
    const detail::restore_current_device keep;  // NCCL switches devices while it sets up
    const ncclResult_t status = ncclCommInitAll(comms_.data(), static_cast<int>(devices_.size()), devices_.data());
    if (status != ncclSuccess) {
      abort();  // ranks whose set-up had started
      throw nccl_error(status, "ncclCommInitAll(comms, ndev, devlist)", __FILE__, __LINE__);
    }
  }

  /// Rank `rank` of `nranks`, on `device`, joining the communicator named by `id`
  /// (`ncclCommInitRank`). Blocks until all `nranks` ranks have joined: every rank must
  /// make this call with the same `id` and `nranks`. Throws `std::invalid_argument` for a
  /// device out of range, `nccl_error` when NCCL refuses (a rank outside [0, nranks), for
  /// example); whatever NCCL had created is aborted first, so nothing leaks.
  communicator(const ncclUniqueId& id, int nranks, int rank, int device) : devices_{device} {
    foundry::detail::expect_visible_device(device, "communicator");
    comms_.assign(1, nullptr);
    device_guard on(device);
    const ncclResult_t status = ncclCommInitRank(&comms_[0], nranks, id, rank);
    if (status != ncclSuccess) {
      abort();
      throw nccl_error(status, "ncclCommInitRank(&comm, nranks, id, rank)", __FILE__, __LINE__);
    }
  }

  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;
  /// Takes `other`'s communicators; `other` is left empty.
  communicator(communicator&& other) noexcept
      : comms_(std::exchange(other.comms_, {})), devices_(std::exchange(other.devices_, {})) {}
  /// Destroys this object's communicators, then takes `other`'s.
  communicator& operator=(communicator&& other) noexcept {
    if (this != &other) {
      release();
      comms_ = std::exchange(other.comms_, {});
      devices_ = std::exchange(other.devices_, {});
    }
    return *this;
  }
  /// `ncclCommDestroy` on every rank; reports, never throws.
  ~communicator() { release(); }

  /// Ranks this process holds (0 after an abort or a move).
  [[nodiscard]] int size() const noexcept { return static_cast<int>(comms_.size()); }
  /// Ranks in the whole communicator.
  [[nodiscard]] int nranks() const {
    check_local(0);
    int n = 0;
    FOUNDRY_NCCL_TRY(ncclCommCount(comms_[0], &n));
    return n;
  }
  /// The rank of local rank `i` among all `nranks()`.
  [[nodiscard]] int rank(int i) const {
    check_local(i);
    int r = 0;
    FOUNDRY_NCCL_TRY(ncclCommUserRank(comms_[static_cast<std::size_t>(i)], &r));
    return r;
  }
  /// The device ordinal of local rank `i`.
  [[nodiscard]] int device(int i) const {
    check_local(i);
    return devices_[static_cast<std::size_t>(i)];
  }
  /// The NCCL handle of local rank `i`, for calls foundry does not wrap.
  [[nodiscard]] ncclComm_t get(int i) const {
    check_local(i);
    return comms_[static_cast<std::size_t>(i)];
  }

  /// `ncclCommAbort` on every rank: releases the resources without waiting for pending
  /// operations or for peers. The communicator is empty afterwards. Never throws.
  void abort() noexcept {
    for (std::size_t i = 0; i < comms_.size(); ++i) {
      if (comms_[i] == nullptr) continue;
      const int d = i < devices_.size() ? devices_[i] : -1;
      int previous = -1;
      if (d >= 0 && cudaGetDevice(&previous) == cudaSuccess) foundry::detail::clear_own_error(cudaSetDevice(d));
      FOUNDRY_NCCL_REPORT(ncclCommAbort(comms_[i]));
      if (previous >= 0) foundry::detail::clear_own_error(cudaSetDevice(previous));
    }
    comms_.clear();
    devices_.clear();
  }

 private:
  void check_local(int i) const {
    FOUNDRY_EXPECTS(i >= 0 && i < size(), "communicator: local rank " + std::to_string(i) + " of " +
                                              std::to_string(size()) +
                                              (size() == 0 ? " (the communicator was aborted or moved from)" : ""));
  }
  void release() noexcept {
    int previous = -1;
    const bool restore = cudaGetDevice(&previous) == cudaSuccess;
    for (std::size_t i = 0; i < comms_.size(); ++i) {
      if (comms_[i] != nullptr) FOUNDRY_NCCL_REPORT(ncclCommDestroy(comms_[i]));
    }
    if (restore) foundry::detail::clear_own_error(cudaSetDevice(previous));
    comms_.clear();
    devices_.clear();
  }

  std::vector<ncclComm_t> comms_;
  std::vector<int> devices_;
};

namespace detail {
/// Runs `f()`, which calls NCCL for `comm`; on an `nccl_error` aborts `comm` (so that no
/// peer waits on it for ever and its destructor does not wait either) and rethrows.
template <class F>
void abort_on_nccl_error(communicator& comm, F&& f) {
  try {
    f();
  } catch (const nccl_error&) {
    comm.abort();
    throw;
  }
}
}  // namespace detail

}  // namespace foundry::nccl
