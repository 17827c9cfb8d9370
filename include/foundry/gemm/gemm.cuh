#pragma once
/// \file
/// The public GEMM: `C = alpha * op(A) * op(B) + beta * C` for row- and
/// column-major matrices, any M, N, K, on an explicit stream.
///
///     foundry::gemm(1.0f, a, foundry::matrix_op::none, b, foundry::matrix_op::transpose, 0.0f, c, stream);
///
/// `gemm` checks the arguments, reduces every layout and transpose to the one
/// canonical problem of gemm_problem.cuh (row-major C; a column-major C is
/// solved as the row-major C^T = op(B)^T op(A)^T), picks the best rung of the
/// GEMM ladder for the types and the device, and calls that rung's launch
/// function. Every rung stays callable through `gemm_with`.
///
/// The ladder (each rung one header, one launch function, one kernel):
///   1. `naive`            foundry/naive/gemm.cuh             any input type
///   2. `shared_tiled`     gemm_shared_tiled.cuh              fp32
///   3. `register_blocked` gemm_register_blocked.cuh          fp32, the fp32 default
///   4. `tensor_core`      gemm_tensor_core.cuh (mma.sync)    fp16/bf16 in, fp32 out, sm_80+
///   5. `wgmma`            gemm_wgmma.cuh (wgmma + TMA)       fp16/bf16 in, fp32 out, compute
///                                                            capability 9.0 with sm_90a code built
///                                                            (FOUNDRY_HAS_SM90A=1)
/// A rung is an enum value, a line in `gemm_rung_supports`, one in
/// `best_gemm_rung`'s preference list and one case in `detail::run_rung`.
///
/// The measurements behind these choices, with what was tried and rejected:
/// docs/gemm-history.md in the foundry repository.

#include <foundry/core/error.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/gemm/gemm_register_blocked.cuh>
#include <foundry/gemm/gemm_shared_tiled.cuh>
#include <foundry/gemm/gemm_tensor_core.cuh>
#include <foundry/gemm/gemm_wgmma.cuh>
#include <foundry/naive/gemm.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/stream_ref>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace foundry {

/// The rungs of the GEMM ladder, slowest first.
enum class gemm_rung {
  naive,             ///< one thread per element of C, global memory only
  shared_tiled,      ///< 32 × 32 shared-memory tiles, one element per thread
  register_blocked,  ///< 128 × 128 tiles, 8 × 8 per thread in registers, float4, double-buffered
  tensor_core,       ///< mma.sync m16n8k16, fp16/bf16 inputs, fp32 accumulation (sm_80+)
  wgmma,             ///< wgmma m64n256k16 fed by TMA, fp16/bf16 inputs, fp32 accumulation (sm_90a)
};

/// The rung's name as benchmarks print it ("register_blocked", ...).
[[nodiscard]] constexpr const char* gemm_rung_name(gemm_rung rung) noexcept {
  switch (rung) {
    case gemm_rung::naive: return "naive";
    case gemm_rung::shared_tiled: return "shared_tiled";
    case gemm_rung::register_blocked: return "register_blocked";
    case gemm_rung::tensor_core: return "tensor_core";
    case gemm_rung::wgmma: return "wgmma";
  }
  return "unknown";
}

/// Input types the GEMM accepts: float, __half, __nv_bfloat16. C is float.
template <class In>
inline constexpr bool is_gemm_input_v =
    std::is_same_v<In, float> || std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>;

/// Whether `rung` solves `In × In → Out` on a device of compute capability
/// `compute_capability` (major * 10 + minor).
template <class In, class Out>
[[nodiscard]] constexpr bool gemm_rung_supports(gemm_rung rung, int compute_capability) noexcept {
  constexpr bool fp32 = std::is_same_v<In, float> && std::is_same_v<Out, float>;
  constexpr bool half_in_float_out =
      (std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>)&&std::is_same_v<Out, float>;
  switch (rung) {
    case gemm_rung::naive: return fp32 || half_in_float_out;
    case gemm_rung::shared_tiled: return fp32;
    case gemm_rung::register_blocked: return fp32;
    case gemm_rung::tensor_core:
      return half_in_float_out && compute_capability >= 80;  // bf16 mma needs sm_80
    // sm_90a code runs on 9.0 only, and exists only when the program was built with it.
    case gemm_rung::wgmma: return half_in_float_out && gemm_kernels::gemm_wgmma_available(compute_capability);
  }
  return false;
}

/// The fastest rung for `In × In → Out` on a device of compute capability
/// `compute_capability`: the first supported rung in order of preference.
/// fp32 → register_blocked; fp16/bf16 → wgmma on compute capability 9.0 when
/// sm_90a code was built (`gemm_kernels::gemm_wgmma_built`, from
/// FOUNDRY_HAS_SM90A), else tensor_core on sm_80+, else naive.
/// The device decides, at run time: the host pass of nvcc cannot know which of
/// the compiled architectures will run.
template <class In, class Out>
[[nodiscard]] constexpr gemm_rung best_gemm_rung(int compute_capability) noexcept {
  constexpr gemm_rung preference[] = {gemm_rung::wgmma, gemm_rung::tensor_core, gemm_rung::register_blocked,
                                      gemm_rung::shared_tiled, gemm_rung::naive};
  for (const gemm_rung rung : preference) {
    if (gemm_rung_supports<In, Out>(rung, compute_capability)) return rung;
  }
  return gemm_rung::naive;
}

/// The fastest rung for `In × In → Out` on the current device. Throws
/// `cuda_error` if the device cannot be queried.
template <class In, class Out>
[[nodiscard]] gemm_rung best_gemm_rung() {
  return best_gemm_rung<In, Out>(get_device_properties().compute_capability());
}

namespace detail {

inline std::string describe(const char* name, std::int64_t rows, std::int64_t cols, matrix_layout layout) {
  return std::string(name) + " (" + std::to_string(rows) + " x " + std::to_string(cols) + ", " +
         (layout == matrix_layout::row_major ? "row-major" : "column-major") + ")";
}

/// Throws `std::invalid_argument` unless `x` is a well-formed stored matrix.
template <class T>
void check_matrix(const char* name, const matrix_view<T>& x) {
  FOUNDRY_EXPECTS(x.rows >= 0 && x.cols >= 0,
                  "gemm: " + describe(name, x.rows, x.cols, x.layout) + " has a negative extent");
  const std::int64_t contiguous = x.layout == matrix_layout::row_major ? x.cols : x.rows;
  FOUNDRY_EXPECTS(x.ld >= contiguous, "gemm: the leading dimension " + std::to_string(x.ld) + " of " +
                                          describe(name, x.rows, x.cols, x.layout) + " is smaller than its " +
                                          (x.layout == matrix_layout::row_major ? "row length " : "column length ") +
                                          std::to_string(contiguous));
  FOUNDRY_EXPECTS(x.data != nullptr || x.rows == 0 || x.cols == 0,
                  "gemm: " + describe(name, x.rows, x.cols, x.layout) + " has elements but a null pointer");
}

/// Rows and columns of op(X).
template <class T>
constexpr std::int64_t op_rows(const matrix_view<T>& x, matrix_op op) noexcept {
  return op == matrix_op::none ? x.rows : x.cols;
}
template <class T>
constexpr std::int64_t op_cols(const matrix_view<T>& x, matrix_op op) noexcept {
  return op == matrix_op::none ? x.cols : x.rows;
}

/// Whether op(X)'s column index is the contiguous one in memory.
template <class T>
constexpr bool op_cols_contiguous(const matrix_view<T>& x, matrix_op op) noexcept {
  return (x.layout == matrix_layout::row_major) != (op == matrix_op::transpose);
}

}  // namespace detail

/// Checks the arguments of `C = alpha * op(A) * op(B) + beta * C` and reduces
/// them to the canonical problem (row-major C). Touches no GPU.
/// Throws `std::invalid_argument` with the reason when a view has a negative
/// extent, a leading dimension smaller than its contiguous extent, a null
/// pointer with elements, or when the shapes of op(A), op(B) and C disagree.
template <class In, class Out>
[[nodiscard]] gemm_problem<In, Out> make_gemm_problem(float alpha, matrix_view<const In> a, matrix_op op_a,
                                                      matrix_view<const In> b, matrix_op op_b, float beta,
                                                      matrix_view<Out> c) {
  detail::check_matrix("A", a);
  detail::check_matrix("B", b);
  detail::check_matrix("C", c);
  const std::int64_t m = detail::op_rows(a, op_a), k = detail::op_cols(a, op_a);
  const std::int64_t kb = detail::op_rows(b, op_b), n = detail::op_cols(b, op_b);
  FOUNDRY_EXPECTS(k == kb, "gemm: op(A) is " + std::to_string(m) + " x " + std::to_string(k) + " but op(B) is " +
                               std::to_string(kb) + " x " + std::to_string(n) + ": the inner dimensions differ");
  FOUNDRY_EXPECTS(c.rows == m && c.cols == n, "gemm: C is " + std::to_string(c.rows) + " x " + std::to_string(c.cols) +
                                                  " but op(A) op(B) is " + std::to_string(m) + " x " +
                                                  std::to_string(n));

  // op(A)(i, p): p is contiguous ⇔ row-major XOR transposed; likewise for op(B)(p, j) and j.
  const bool a_k_contiguous = detail::op_cols_contiguous(a, op_a);
  const bool b_n_contiguous = detail::op_cols_contiguous(b, op_b);
  gemm_problem<In, Out> p;
  p.k = k;
  p.c = c.data;
  p.ldc = c.ld;
  p.alpha = alpha;
  p.beta = beta;
  if (c.layout == matrix_layout::row_major) {
    p.m = m;
    p.n = n;
    p.a = a.data, p.lda = a.ld, p.a_k_contiguous = a_k_contiguous;
    p.b = b.data, p.ldb = b.ld, p.b_n_contiguous = b_n_contiguous;
  } else {
    // Column-major C(i, j) = c[j * ldc + i] is the row-major n × m matrix C^T,
    // and C^T = op(B)^T op(A)^T: the new A is op(B)^T (its k is contiguous
    // where op(B)'s n was not), the new B is op(A)^T.
    p.m = n;
    p.n = m;
    p.a = b.data, p.lda = b.ld, p.a_k_contiguous = !b_n_contiguous;
    p.b = a.data, p.ldb = a.ld, p.b_n_contiguous = !a_k_contiguous;
  }
  return p;
}

namespace detail {

/// Hands the canonical problem to one rung's launch function.
template <class In, class Out>
void run_rung(gemm_rung rung, const gemm_problem<In, Out>& p, cuda::stream_ref s) {
  if (rung == gemm_rung::naive) {
    naive::gemm(p, s);
    return;
  }
  if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float>) {
    if (rung == gemm_rung::shared_tiled) return gemm_kernels::gemm_shared_tiled(p, s);
    if (rung == gemm_rung::register_blocked) {
      return gemm_kernels::gemm_register_blocked(p, gemm_kernels::split_k_options{}, s);
    }
  } else {
    if (rung == gemm_rung::tensor_core) return gemm_kernels::gemm_tensor_core<In>(p, s);
    // Falls back to tensor_core itself for problems TMA cannot describe (see gemm_wgmma.cuh).
    if (rung == gemm_rung::wgmma) return gemm_kernels::gemm_wgmma<In>(p, gemm_kernels::split_k_options{}, s);
  }
  // Unreachable through gemm and gemm_with, which check gemm_rung_supports first.
  throw std::invalid_argument(std::string("gemm: rung ") + gemm_rung_name(rung) + " does not handle these types");
}

template <class TA, class TB, class TC>
constexpr void check_gemm_types() {
  using in = std::remove_const_t<TA>;
  static_assert(std::is_same_v<in, std::remove_const_t<TB>>, "gemm: A and B must have the same element type");
  static_assert(is_gemm_input_v<in>, "gemm: inputs must be float, __half or __nv_bfloat16");
  static_assert(std::is_same_v<TC, float>, "gemm: C must be (non-const) float");
}

template <class T>
matrix_view<const std::remove_const_t<T>> as_const_view(const matrix_view<T>& x) noexcept {
  return {x.data, x.rows, x.cols, x.ld, x.layout};
}

}  // namespace detail

/// `C = alpha * op(A) * op(B) + beta * C` with the rung `rung`, for teaching
/// and benchmarks. Same contract as `gemm`; also throws
/// `std::invalid_argument` if `rung` does not handle these types or this device.
template <class TA, class TB, class TC>
void gemm_with(gemm_rung rung, float alpha, matrix_view<TA> a, matrix_op op_a, matrix_view<TB> b, matrix_op op_b,
               float beta, matrix_view<TC> c, cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::check_gemm_types<TA, TB, TC>();
  using in = std::remove_const_t<TA>;
  const gemm_problem<in, TC> p =
      make_gemm_problem<in, TC>(alpha, detail::as_const_view(a), op_a, detail::as_const_view(b), op_b, beta, c);
  if (p.m == 0 || p.n == 0) return;  // nothing to compute, nothing to touch
  const int cc = get_device_properties().compute_capability();
  FOUNDRY_EXPECTS(
      (gemm_rung_supports<in, TC>(rung, cc)),
      std::string("gemm: rung ") + gemm_rung_name(rung) + " does not handle these types on sm_" + std::to_string(cc));
  detail::run_rung(rung, p, s);
}

/// `C = alpha * op(A) * op(B) + beta * C`.
///
/// - A, B: `float`, `__half` or `__nv_bfloat16` (both the same); C: `float`.
///   Any layout of each (row- or column-major, leading dimension at least the
///   contiguous extent), `op_a`/`op_b` transpose them. op(A) is M × K, op(B)
///   K × N, C M × N; any M, N, K ≥ 0.
/// - `beta == 0`: C is not read (it may hold NaN). K = 0: C = beta * C.
///   M or N = 0: nothing is enqueued. C must not overlap A or B.
/// - Pointers need no particular alignment: misaligned operands take a scalar
///   path (slower) instead of the 16-byte vector loads. On Hopper, 16-bit
///   operands whose bases are not 16-byte aligned or whose leading dimensions
///   are not multiples of 8 leave the wgmma rung for the mma.sync one.
/// - Asynchronous: enqueued on `s`; returns without synchronising. The fp32
///   path and the 16-bit rungs (tensor_core, wgmma) may allocate split-K
///   scratch, stream-ordered on `s`.
/// - Throws `std::invalid_argument` for inconsistent shapes, a leading
///   dimension too small or a null pointer with elements (before touching the
///   GPU), and `cuda_error` if the device query, an allocation or a launch fails.
/// - Picks `best_gemm_rung<In, float>()` for the current device.
template <class TA, class TB, class TC>
void gemm(float alpha, matrix_view<TA> a, matrix_op op_a, matrix_view<TB> b, matrix_op op_b, float beta,
          matrix_view<TC> c, cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::check_gemm_types<TA, TB, TC>();
  using in = std::remove_const_t<TA>;
  const gemm_problem<in, TC> p =
      make_gemm_problem<in, TC>(alpha, detail::as_const_view(a), op_a, detail::as_const_view(b), op_b, beta, c);
  if (p.m == 0 || p.n == 0) return;
  // K = 0 is only C = beta * C: one pass over C, which the naive rung is.
  const gemm_rung rung = p.k == 0 ? gemm_rung::naive : best_gemm_rung<in, TC>();
  detail::run_rung(rung, p, s);
}

}  // namespace foundry
