#pragma once
/// \file
/// The operators and accumulator rules that every reduction-shaped algorithm
/// shares (`reduce`, `transform_reduce`, and the scans and histograms built
/// the same way): NaN-propagating `minimum` and `maximum` with their
/// identities, the default accumulator of an input type, and the conversion
/// into it.
///
///     foundry::reduce(x, out, foundry::minimum_identity<float>(), foundry::minimum{}, s);
///     using acc = foundry::accumulator_t<__half>;   // float

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/limits>

#include <type_traits>

namespace foundry {

/// The accumulator that a reduction of `T` uses by default: `float` for `__half`
/// and `__nv_bfloat16` (their 8- and 11-bit mantissas lose a sum's low bits
/// fast), `T` otherwise. Specialise it for your own types.
template <class T>
struct accumulator {
  /// The accumulator type: T itself.
  using type = T;
};
template <>
struct accumulator<__half> {
  /// The accumulator type: float.
  using type = float;
};
template <>
struct accumulator<__nv_bfloat16> {
  /// The accumulator type: float.
  using type = float;
};
/// The type in which values of T are accumulated (float for 16-bit floats, T otherwise).
template <class T>
using accumulator_t = typename accumulator<std::remove_const_t<T>>::type;

/// The name `reduce` used before the trait was shared.
template <class T>
using reduce_accumulator_t = accumulator_t<T>;

/// `x` as `To`. Half-precision types convert through float: their own
/// conversion operators make a direct cast to, say, `double` ambiguous.
template <class To, class From>
__host__ __device__ constexpr To convert_to(const From& x) {
  if constexpr (std::is_same_v<std::remove_cv_t<From>, __half> ||
                std::is_same_v<std::remove_cv_t<From>, __nv_bfloat16>) {
    return static_cast<To>(static_cast<float>(x));
  } else {
    return static_cast<To>(x);
  }
}

/// True for a NaN of a type that has one; false for every other type and value.
template <class T>
__host__ __device__ constexpr bool is_nan(const T& x) noexcept {
  if constexpr (cuda::std::numeric_limits<T>::has_quiet_NaN) {
    return !(x == x);
  } else {
    return false;
  }
}

/// `min(a, b)` that returns NaN when either operand is NaN (as a sequential CPU
/// loop with `std::isnan` checks would). libcu++'s `cuda::minimum` returns `b`
/// when `a` is NaN and `a` when `b` is, so the result would depend on where the
/// NaN sits in the reduction tree.
struct minimum {
  /// The smaller of a and b; NaN if either is NaN.
  template <class T>
  __host__ __device__ constexpr T operator()(const T& a, const T& b) const {
    return (a < b || is_nan(a)) ? a : b;
  }
};

/// `max(a, b)` that returns NaN when either operand is NaN. See `minimum`.
struct maximum {
  /// The larger of a and b; NaN if either is NaN.
  template <class T>
  __host__ __device__ constexpr T operator()(const T& a, const T& b) const {
    return (b < a || is_nan(a)) ? a : b;
  }
};

/// The identity of `minimum` for `T`: +infinity, or the largest finite value.
template <class T>
__host__ __device__ constexpr T minimum_identity() noexcept {
  if constexpr (cuda::std::numeric_limits<T>::has_infinity) {
    return cuda::std::numeric_limits<T>::infinity();
  } else {
    return cuda::std::numeric_limits<T>::max();
  }
}

/// The identity of `maximum` for `T`: -infinity, or the lowest finite value.
template <class T>
__host__ __device__ constexpr T maximum_identity() noexcept {
  if constexpr (cuda::std::numeric_limits<T>::has_infinity) {
    return -cuda::std::numeric_limits<T>::infinity();
  } else {
    return cuda::std::numeric_limits<T>::lowest();
  }
}

/// `x`, unchanged: the transform of a plain `reduce`.
struct identity {
  /// Returns x.
  template <class T>
  __host__ __device__ constexpr T operator()(const T& x) const {
    return x;
  }
};

namespace detail {

/// A running reduction or scan value that may not have seen an element yet, so
/// that no identity of the operator is needed (an `init` is folded in once,
/// where the algorithm says).
template <class Acc>
struct partial_result {
  Acc value;
  bool valid;

  template <class Op>
  __host__ __device__ void fold(const Acc& x, Op& op) {
    value = valid ? op(value, x) : x;
    valid = true;
  }
};

/// `op` lifted to partial results, order kept (`a` before `b`): an empty side
/// leaves the other unchanged.
template <class Op>
struct partial_result_op {
  Op op;
  template <class Acc>
  __host__ __device__ partial_result<Acc> operator()(const partial_result<Acc>& a, const partial_result<Acc>& b) const {
    if (!a.valid) return b;
    if (!b.valid) return a;
    return {op(a.value, b.value), true};
  }
};

}  // namespace detail

}  // namespace foundry
