#pragma once
/// \file
/// A per-thread memo of the allocations that the argument checks already found
/// accessible from a device, so that an algorithm called again on the same buffers does
/// not ask the driver again.
///
/// Why: `cudaPointerGetAttributes` costs a few hundred nanoseconds, and a small call
/// (a reduce of 4 Ki floats runs in about 2 us) checks two or three pointers. The memo
/// keeps the address range of each allocation that passed (from the driver's
/// `CU_POINTER_ATTRIBUTE_RANGE_START_ADDR` and `_RANGE_SIZE`), with the device it was
/// checked for; a pointer inside a remembered range passes with no driver call.
///
/// Only what cannot change while the allocation lives is remembered: memory of the
/// device itself and managed memory. A foundry buffer (`device_buffer`,
/// `managed_buffer`) that frees an allocation that any thread remembered makes every
/// thread forget every range, since its addresses may come back as another kind of
/// memory; the frees of allocations that were never checked (an algorithm's own
/// workspace) cost one look at a short list. Memory that the caller frees outside foundry
/// (a raw `cudaFree`) stays remembered until such a free or until
/// `foundry::forget_checked_memory()`: if its addresses are reused by memory that the
/// device cannot access, a pointer there passes the check, and the kernel faults as it
/// would have without the check.

#include <foundry/runtime/device.cuh>

#include <cuda.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace foundry {
namespace detail {

/// Bumped when remembered memory is freed; a range remembered under an older value is
/// forgotten.
inline std::atomic<std::uint64_t>& checked_memory_generation() noexcept {
  static std::atomic<std::uint64_t> generation{1};
  return generation;
}

/// Every range that some thread remembers, so that a free can tell whether it matters.
/// Locked on a miss (after a driver query) and on a foundry free, never on a hit.
struct checked_memory_registry {
  std::mutex mutex;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
};
/// Never destroyed: a buffer with static storage may be freed after every function-local
/// static of this header is gone.
inline checked_memory_registry& checked_memory_ranges() {
  static auto* registry = new checked_memory_registry;
  return *registry;
}

struct checked_range {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  int device = -1;
  std::uint64_t generation = 0;  // 0: empty
};

/// Eight ranges per thread, replaced in turn: enough for the operands of a few calls in
/// a loop, small enough that a miss costs a few compares.
struct checked_range_memo {
  std::array<checked_range, 8> ranges{};
  unsigned next = 0;
};

inline checked_range_memo& this_thread_checked_ranges() noexcept {
  thread_local checked_range_memo memo;
  return memo;
}

/// True when `p` lies in a range that was found accessible from `device` since the last
/// foundry free.
[[nodiscard]] inline bool is_checked_memory(const void* p, int device) noexcept {
  const std::uint64_t now = checked_memory_generation().load(std::memory_order_acquire);
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  for (const checked_range& r : this_thread_checked_ranges().ranges) {
    if (r.generation == now && r.device == device && address >= r.begin && address < r.end) return true;
  }
  return false;
}

using cu_pointer_get_attributes_fn = int (*)(unsigned, CUpointer_attribute*, void**, CUdeviceptr);

/// Remembers the allocation that holds `p` as accessible from `device`. Does nothing
/// when the driver cannot tell its range (the next check asks again).
inline void remember_checked_memory(const void* p, int device) noexcept {
  static const auto get = driver_entry_point<cu_pointer_get_attributes_fn>("cuPointerGetAttributes");
  if (get == nullptr) return;
  CUdeviceptr start = 0;
  std::size_t size = 0;
  std::array<CUpointer_attribute, 2> attributes{CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  std::array<void*, 2> data{&start, &size};
  if (get(2, attributes.data(), data.data(), static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p))) != 0 ||
      size == 0)
    return;
  const auto begin = static_cast<std::uintptr_t>(start);
  const auto end = begin + size;
  std::uint64_t now = 0;
  try {
    checked_memory_registry& registry = checked_memory_ranges();
    const std::lock_guard<std::mutex> lock(registry.mutex);
    // Bounded: past 256 ranges that no foundry free removed, start again.
    if (registry.ranges.size() >= 256) {
      registry.ranges.clear();
      checked_memory_generation().fetch_add(1, std::memory_order_acq_rel);
    }
    registry.ranges.emplace_back(begin, end);
    now = checked_memory_generation().load(std::memory_order_acquire);
  } catch (...) {  // no memory for the list: remember nothing
    return;
  }
  checked_range_memo& memo = this_thread_checked_ranges();
  memo.ranges[memo.next] = {begin, end, device, now};
  memo.next = (memo.next + 1) % memo.ranges.size();
}

/// Forgets every range on every thread.
inline void forget_all_checked_memory() noexcept {
  try {
    checked_memory_registry& registry = checked_memory_ranges();
    const std::lock_guard<std::mutex> lock(registry.mutex);
    registry.ranges.clear();
  } catch (...) {  // the lock failed: the generation below still forgets every range
  }
  checked_memory_generation().fetch_add(1, std::memory_order_acq_rel);
}

/// Called by a foundry buffer before it frees `[p, p + bytes)`: forgets every range if
/// any thread remembered memory there.
inline void forget_checked_memory_on_free(const void* p, std::size_t bytes) noexcept {
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const auto end = begin + (bytes == 0 ? 1 : bytes);
  bool remembered = true;  // when the list cannot be read, forget
  try {
    checked_memory_registry& registry = checked_memory_ranges();
    const std::lock_guard<std::mutex> lock(registry.mutex);
    remembered = false;
    for (const auto& [b, e] : registry.ranges) remembered = remembered || (begin < e && b < end);
  } catch (...) {
  }
  if (remembered) forget_all_checked_memory();
}

}  // namespace detail

/// Forgets, on every thread, the allocations that foundry's argument checks found
/// accessible. Call it after freeing, outside foundry (`cudaFree`, `cudaFreeAsync`),
/// memory that was passed to a foundry algorithm, if that address range may come back
/// as memory the device cannot access. foundry's own buffers do this when they free.
inline void forget_checked_memory() noexcept { detail::forget_all_checked_memory(); }

}  // namespace foundry
