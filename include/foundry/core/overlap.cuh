#pragma once
/// \file
/// The one overlap check that every call with an input and an output runs (transform,
/// device_copy, copy, scan, transpose, copy_2d, convolve_2d, gemm): byte ranges, whether
/// two of them share a byte, and the rule a call allows (disjoint, or exactly in place).
/// Pure address arithmetic: with unified addressing no two allocations share an address,
/// so host and device ranges compare as they are.

#include <foundry/core/error.cuh>

#include <cuda/std/span>

#include <cstddef>
#include <cstdint>
#include <string>

namespace foundry::detail {

/// The bytes `[begin, end)` that a call reads or writes; empty when `begin == end`.
struct byte_range {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  [[nodiscard]] constexpr bool empty() const noexcept { return begin == end; }
};

template <class T, std::size_t Extent>
[[nodiscard]] byte_range range_of(cuda::std::span<T, Extent> x) noexcept {
  const auto begin = reinterpret_cast<std::uintptr_t>(x.data());
  return {begin, begin + x.size_bytes()};
}

/// Whether two ranges share a byte (an empty range shares none).
[[nodiscard]] constexpr bool ranges_overlap(byte_range a, byte_range b) noexcept {
  return !a.empty() && !b.empty() && a.begin < b.end && b.begin < a.end;
}

/// Which overlaps a call allows between an input and its output.
enum class overlap_rule {
  disjoint,          ///< no shared byte
  same_or_disjoint,  ///< no shared byte, or exactly the same range (in place, element by element)
};

/// The one overlap check: refuses `a` and `b` sharing a byte, except, under
/// `same_or_disjoint`, when they are the same range with the same element size
/// (`a_element` and `b_element` bytes): exact in-place use.
inline void expect_no_forbidden_overlap(byte_range a, std::size_t a_element, byte_range b, std::size_t b_element,
                                        overlap_rule rule, const char* what) {
  const bool in_place =
      rule == overlap_rule::same_or_disjoint && a.begin == b.begin && a.end == b.end && a_element == b_element;
  FOUNDRY_EXPECTS(in_place || !ranges_overlap(a, b),
                  std::string(what) + (rule == overlap_rule::disjoint
                                           ? " overlap (the call cannot run in place)"
                                           : " overlap without being the same array (exact in place is allowed, "
                                             "a shifted or partial overlap is not)"));
}

/// The spans version of the above.
template <class A, std::size_t AExtent, class B, std::size_t BExtent>
void expect_no_forbidden_overlap(cuda::std::span<A, AExtent> a, cuda::std::span<B, BExtent> b, overlap_rule rule,
                                 const char* what) {
  expect_no_forbidden_overlap(range_of(a), sizeof(A), range_of(b), sizeof(B), rule, what);
}

}  // namespace foundry::detail
