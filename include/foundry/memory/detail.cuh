#pragma once
/// \file
/// Byte-count arithmetic shared by the buffer types.

#include <foundry/core/error.cuh>

#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>

namespace foundry::detail {

template <class T>
constexpr void require_buffer_element() {
  static_assert(std::is_trivially_copyable_v<T>,
                "foundry buffers hold trivially copyable types only: their bytes are copied "
                "between host and device without running constructors");
}

/// `n * sizeof(T)`, rejecting a count whose byte size does not fit in size_t.
template <class T>
std::size_t checked_bytes(std::size_t n) {
  FOUNDRY_EXPECTS(n <= std::numeric_limits<std::size_t>::max() / sizeof(T),
                  "element count " + std::to_string(n) + " overflows the byte size");
  return n * sizeof(T);
}

inline std::string describe_allocation(std::size_t bytes, const char* kind) {
  return "allocating " + std::to_string(bytes) + " bytes (" +
         std::to_string(static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0)) + " GiB) of " + kind;
}

}  // namespace foundry::detail
