#pragma once
/// \file
/// The argument checks that every algorithm runs before it enqueues anything,
/// worded the same way everywhere: each throws `std::invalid_argument` (through
/// `FOUNDRY_EXPECTS`, with file and line) naming the argument and the reason.

#include <foundry/core/error.cuh>

#include <cuda/std/span>

#include <cstddef>
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

/// Caller-provided scratch of `given` bytes covers the `needed` bytes that
/// `size_function` (the public `*_scratch_bytes` call) reports.
inline void expect_scratch(const void* data, std::size_t given, std::size_t needed, const char* algorithm,
                           const char* size_function) {
  FOUNDRY_EXPECTS(given >= needed && (needed == 0 || data != nullptr),
                  std::string(algorithm) + " scratch is too small: " + std::to_string(given) + " bytes given, " +
                      std::to_string(needed) + " needed (" + size_function + ")");
}

}  // namespace foundry::detail
