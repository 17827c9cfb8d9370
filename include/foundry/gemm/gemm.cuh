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
///                                                            (FOUNDRY_HAS_SM90A=1); also fp32 in as
///                                                            TF32 when the call asks (`gemm_math::tf32`)
///   +  `skinny`           gemm_skinny.cuh                    any input type, M or N small: memory-bound,
///                                                            chosen by shape (`skinny_shape`), not by type
/// `gemm` builds a `gemm_plan` (gemm_plan.cuh: rung, tile, stages, split, packing, why) with
/// `make_gemm_plan` and hands it to the launch function of the kernel it names:
/// public call -> plan + launch function -> kernel. A rung is an enum value, a line
/// in `gemm_rung_supports`, one in `best_gemm_rung`'s preference list, one case in
/// `detail::plan_rung` and one in `detail::launch_plan`.
///
/// The measurements behind these choices, with what was tried and rejected:
/// docs/gemm-history.md in the foundry repository.

#include <foundry/algorithms/detail/checks.cuh>
#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/core/overlap.cuh>
#include <foundry/gemm/gemm_pack.cuh>
#include <foundry/gemm/gemm_plan.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/gemm/gemm_register_blocked.cuh>
#include <foundry/gemm/gemm_shared_tiled.cuh>
#include <foundry/gemm/gemm_skinny.cuh>
#include <foundry/gemm/gemm_tensor_core.cuh>
#include <foundry/gemm/gemm_wgmma.cuh>
#include <foundry/naive/gemm.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace foundry {

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
    // 16-bit products of 2 rows or more take its mma.sync kernel (gemm_skinny_mma.cuh).
    case gemm_rung::skinny: return fp32 || (half_in_float_out && compute_capability >= 80);
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
  if (x.rows == 0 || x.cols == 0) return;
  // The last element sits at (outer - 1) * ld + contiguous - 1: that must not overflow.
  const std::int64_t outer = x.layout == matrix_layout::row_major ? x.rows : x.cols;
  constexpr std::int64_t max_elements = std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(sizeof(T));
  FOUNDRY_EXPECTS(outer - 1 <= (max_elements - contiguous) / x.ld,
                  "gemm: " + describe(name, x.rows, x.cols, x.layout) + " with leading dimension " +
                      std::to_string(x.ld) + " overflows the address range");
}

/// The bytes a stored matrix spans, from its first element to its last (empty if it has none).
template <class T>
byte_range stored_range(const matrix_view<T>& x) noexcept {
  if (x.data == nullptr) return {};
  const bool row_major = x.layout == matrix_layout::row_major;
  return gemm_kernels::operand_range(
      x.data, row_major ? gemm_kernels::stored_shape{x.rows, x.cols} : gemm_kernels::stored_shape{x.cols, x.rows},
      x.ld);
}

/// The checks of `gemm` and `gemm_with` past the shapes: C must not overlap A or B
/// (it is written while they are read; ranges from first to last element, so views
/// interleaved in one allocation are refused too), and A, B and C must be memory that
/// the device of `s` can access.
template <class TA, class TB, class TC>
void expect_gemm_memory(const matrix_view<TA>& a, const matrix_view<TB>& b, const matrix_view<TC>& c,
                        cuda::stream_ref s) {
  expect_no_forbidden_overlap(stored_range(c), sizeof(TC), stored_range(a), sizeof(TA), overlap_rule::disjoint,
                              "gemm: C and A");
  expect_no_forbidden_overlap(stored_range(c), sizeof(TC), stored_range(b), sizeof(TB), overlap_rule::disjoint,
                              "gemm: C and B");
  const int device = device_for_checks(s);
  if (a.rows > 0 && a.cols > 0) expect_device_accessible(a.data, device, "gemm: A");
  if (b.rows > 0 && b.cols > 0) expect_device_accessible(b.data, device, "gemm: B");
  expect_device_accessible(c.data, device, "gemm: C");
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
  // An empty product is zero whatever alpha: C = beta * C as BLAS gives it, also for an
  // infinite or NaN alpha, whose product with the zero sum would be NaN.
  p.alpha = k == 0 ? 0.0f : alpha;
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

/// The plan of `rung` for `p` (`requested_split` as `split_k_options::split_k`);
/// `sm_count()` is called only where the plan depends on the SM count, and rung 4 fits its
/// tiling to `shared_memory_optin` (`gemm_kernels::tensor_core_picks_shallow_k`; the default:
/// a device where every tiling fits). For 16-bit problems that TMA cannot describe, the wgmma
/// rung plans rung 4 instead.
/// Throws `std::invalid_argument` if `rung` does not handle these types, or as the
/// rung's plan builder.
template <class In, class Out, class SmCount>
[[nodiscard]] gemm_plan plan_rung(gemm_rung rung, const gemm_problem<In, Out>& p, int requested_split,
                                  SmCount&& sm_count,
                                  std::size_t shared_memory_optin = gemm_kernels::tensor_core_any_shared_memory) {
  if (rung == gemm_rung::naive) {
    gemm_plan plan;
    plan.why = p.k == 0 ? "K = 0: C = beta * C, one pass over C" : "one thread per element of C";
    return plan;
  }
  if constexpr (std::is_same_v<Out, float>) {
    if (rung == gemm_rung::skinny) return gemm_kernels::skinny_plan<In>(p, requested_split, sm_count());
  }
  if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float>) {
    // TF32, only under gemm_math::tf32: K-major operands TMA can describe, else rung 3
    // (make_gemm_plan then asks pack_where_it_pays whether copies make them so).
    if (rung == gemm_rung::wgmma && p.math == gemm_math::tf32) {
      if (gemm_kernels::gemm_wgmma_tma_path(p)) return gemm_kernels::wgmma_plan<In>(p, requested_split, sm_count());
      gemm_plan plan = gemm_kernels::register_blocked_plan_for_shape(p, requested_split, sm_count());
      plan.why =
          "TF32 asked for, but its wgmma kernel reads only K-major operands with rows on 16-byte boundaries, and "
          "copying these would cost more than the product: fp32 on the CUDA cores";
      return plan;
    }
    if (rung == gemm_rung::shared_tiled) {
      gemm_plan plan;
      plan.rung = rung;
      plan.block_m = plan.block_n = plan.block_k = gemm_kernels::shared_tile;
      plan.why = "32 x 32 shared-memory tiles";
      return plan;
    }
    if (rung == gemm_rung::register_blocked)
      return gemm_kernels::register_blocked_plan_for_shape(p, requested_split, sm_count());
  } else {
    if (rung == gemm_rung::tensor_core)
      return gemm_kernels::tensor_core_plan<In>(p, requested_split, sm_count, shared_memory_optin);
    if (rung == gemm_rung::wgmma) {
      if (gemm_kernels::gemm_wgmma_tma_path(p)) return gemm_kernels::wgmma_plan<In>(p, requested_split, sm_count());
      gemm_plan plan = gemm_kernels::tensor_core_plan<In>(p, requested_split, sm_count, shared_memory_optin);
      plan.why = "16-bit inputs on Hopper that TMA cannot describe (alignment, leading dimension, extent, K = 0)";
      return plan;
    }
  }
  // Unreachable through gemm and gemm_with, which check gemm_rung_supports first.
  throw std::invalid_argument(std::string("gemm: rung ") + gemm_rung_name(rung) + " does not handle these types");
}

/// Rung 4's fallback at two splits: the one the packing rule judges by (`judged`, the split
/// `Judge`'s time model favours, whose time the rule compares with the copies'), and the one
/// that runs if the fallback wins (`runs`, the split `Model` favours).
struct fallback_splits {
  gemm_plan judged;  ///< at `Judge`'s favoured split
  gemm_plan runs;    ///< at `Model`'s favoured split
};

/// The plan of `rung` for `p` with rung 4's fallback kernel at the splits that two time
/// models (`gemm_kernels::modelled_us` with `Judge` and with `Model`) favour, each `plan`
/// (the rung's own fallback plan, on `sm_count` SMs) unless a split of 1 to
/// `gemm_kernels::max_fallback_splits_for` slices (that model's cap for C) is modelled at most
/// that model's `clear_gain` of its time.
/// Each candidate split is planned once for both. The fallback's steps are latency-bound, so
/// slices that shorten each block's chain of steps pay where the blocks are few: 1950 x 23 x
/// 670 runs 31 blocks of 21 steps unsplit (modelled 22 us by `fallback_split_policy`), 11
/// slices of 2 steps (8 us) instead; the tensor-core rungs' own rule wants at least 512 of K
/// per slice, for their pipelines. Touches no GPU.
template <class Judge, class Model = gemm_kernels::fallback_split_policy, class In>
[[nodiscard]] fallback_splits fallback_at_modelled_splits(const gemm_plan& plan, gemm_rung rung,
                                                          const gemm_problem<In, float>& p, int sm_count) {
  const double judge_own_us = gemm_kernels::modelled_us<In, Judge>(plan, p, sm_count);
  const double model_own_us = gemm_kernels::modelled_us<In, Model>(plan, p, sm_count);
  gemm_plan judged = plan, runs = plan;
  double judged_us = judge_own_us, runs_us = model_own_us;
  // More slices than K steps plan no differently (plan_split_k); one step is nothing to shorten.
  const std::int64_t k_steps = ceil_div<std::int64_t>(p.k, plan.block_k);
  const int judge_most = gemm_kernels::max_fallback_splits_for<Judge>(p.m, p.n);
  const int model_most = gemm_kernels::max_fallback_splits_for<Model>(p.m, p.n);
  const auto most =
      static_cast<int>(k_steps <= 1 ? 0 : std::min<std::int64_t>(std::max(judge_most, model_most), k_steps));
  const auto sms = [sm_count] { return sm_count; };
  for (int splits = 1; splits <= most; ++splits) {
    const gemm_plan split = plan_rung(rung, p, splits, sms);
    if (!split.fallback) continue;
    if (const double us = gemm_kernels::modelled_us<In, Judge>(split, p, sm_count);
        splits <= judge_most && us < judged_us)
      judged = split, judged_us = us;
    if (const double us = gemm_kernels::modelled_us<In, Model>(split, p, sm_count);
        splits <= model_most && us < runs_us)
      runs = split, runs_us = us;
  }
  const auto kept = [&plan](gemm_plan best, double best_us, double own_us, double clear_gain) {
    if (best.split_k == plan.split_k || best_us > clear_gain * own_us) return plan;
    best.why =
        "16-bit operand rows off a 16-byte boundary, packing modelled no faster: rung 4's fallback, K split to "
        "shorten each block's chain of latency-bound steps";
    return best;
  };
  return {kept(judged, judged_us, judge_own_us, Judge::clear_gain),
          kept(runs, runs_us, model_own_us, Model::clear_gain)};
}

/// The plan of `rung` (a 16-bit rung: tensor_core or wgmma; or wgmma for TF32) for `p`,
/// packed where that pays: `plan` is the rung's own plan for `p`; where operand rows off
/// 16-byte boundaries (or, for TF32, operands that are not K-major) keep it below the fast
/// kernel `rung` names (rung 4's fallback, rung 4 for the wgmma rung, rung 3 for TF32), the
/// plan of `rung` on the copies (`gemm_kernels::operands_to_copy`, transposed for TF32),
/// with their fields and workspace recorded, if
/// - the copies cost no more than the product at the device's ceilings
///   (`gemm_kernels::packing_pays`: the large products), unless `plan` is rung 4's fallback
///   and the time model puts it (at its best split) at most `Policy::clear_gain` of the
///   copies' and the fast kernel's time: 2502 x 11840 x 18 with C's rows off sectors, 118 MB
///   of C, ran 96.6 us packed and 69.7 on the fallback (H100); or
/// - where `plan` is rung 4's fallback, the time model (`gemm_kernels::modelled_us`) puts
///   the copies and the fast kernel at most `Policy::clear_gain` of the fallback's time at
///   its best split, whatever the product's size.
/// The fallback's time in both comparisons is `Policy`'s at the split `Policy` favours, as
/// the rule was fitted; where the fallback wins, it runs at the split
/// `gemm_kernels::fallback_split_policy` favours, which may differ
/// (`fallback_at_modelled_splits`).
/// Rung 4's fast kernel (on Hopper, where only TMA cannot describe the operands) keeps
/// `plan` where the ceiling rule fails, as does any TF32 problem (the model is fitted on rung
/// 4's fallback). `Policy` as
/// `gemm_kernels::gemm_pack_policy`; `shared_memory_optin` as `plan_rung`. Touches no GPU.
template <class Policy = gemm_kernels::gemm_pack_policy, class In, class SmCount>
[[nodiscard]] gemm_plan pack_where_it_pays(
    const gemm_plan& plan, gemm_rung rung, const gemm_problem<In, float>& p, SmCount&& sm_count,
    std::size_t shared_memory_optin = gemm_kernels::tensor_core_any_shared_memory) {
  if (!plan.fallback && plan.rung == rung) return plan;  // already the rung's fast kernel
  constexpr bool tf32 = std::is_same_v<In, float>;
  const gemm_kernels::gemm_pack_plan packing = gemm_kernels::operands_to_copy(p, /*k_major=*/tf32);
  if (!packing.any()) return plan;
  gemm_plan copies;
  gemm_kernels::detail::record_packing(copies, packing);
  // Any pack_alignment-aligned address stands for the workspace: the plan reads only alignment.
  gemm_plan packed = plan_rung(rung, gemm_kernels::packed_problem(p, copies, gemm_kernels::pack_alignment), 0, sm_count,
                               shared_memory_optin);
  // Not reached for 16-bit inputs (the copies' rows are aligned); for TF32, an extent
  // TMA cannot address (2^31 or more) stays off the wgmma kernel, copied or not.
  if (packed.fallback || packed.rung != rung) return plan;
  gemm_kernels::detail::record_packing(packed, packing);
  if constexpr (tf32) {
    if (!gemm_kernels::packing_pays<In, Policy>(p, packing.copy_bytes)) return plan;
    packed.why =
        "TF32 asked for: fp32 operands packed K-major with 16-byte rows (transposed where M- or N-contiguous) for "
        "the wgmma kernel; the copy costs less than the product at the device's ceilings";
    return packed;
  } else {
    const bool tma = packed.rung == gemm_rung::wgmma;
    if (gemm_kernels::packing_pays<In, Policy>(p, packing.copy_bytes)) {
      if (plan.fallback) {
        // Cheap copies need not make a fast call: where C's writes bind (a step or two of K),
        // the fallback's many small blocks write C faster than the fast kernels' stores.
        const int sms = sm_count();
        const fallback_splits fallback_at = fallback_at_modelled_splits<Policy>(plan, rung, p, sms);
        if (gemm_kernels::modelled_us<In, Policy>(fallback_at.judged, p, sms) <=
            Policy::clear_gain * gemm_kernels::modelled_us<In, Policy>(packed, p, sms)) {
          gemm_plan fallback = fallback_at.runs;
          if (fallback.split_k == plan.split_k)
            fallback.why =
                "16-bit operand rows off a 16-byte boundary: rung 4's fallback, modelled faster than the copies and "
                "the pipelined kernel (C's writes bind)";
          return fallback;
        }
      }
      packed.why =
          tma ? "16-bit operand rows off a 16-byte boundary, packed for TMA: the copy costs less than the "
                "product at the device's ceilings"
              : "16-bit operand rows off a 16-byte boundary, packed for cp.async: the copy costs less than the "
                "product at the device's ceilings";
      return packed;
    }
    // Rung 4's fast kernel has nothing latency-bound to replace.
    if (!plan.fallback) return plan;
    const int sms = sm_count();
    const fallback_splits fallback_at = fallback_at_modelled_splits<Policy>(plan, rung, p, sms);
    if (gemm_kernels::modelled_us<In, Policy>(packed, p, sms) >
        Policy::clear_gain * gemm_kernels::modelled_us<In, Policy>(fallback_at.judged, p, sms)) {
      return fallback_at.runs;
    }
    packed.why = tma ? "16-bit operand rows off a 16-byte boundary, packed for TMA: the copies and the pipelined "
                       "kernel are modelled faster than the fallback's latency-bound steps"
                     : "16-bit operand rows off a 16-byte boundary, packed for cp.async: the copies and the pipelined "
                       "kernel are modelled faster than the fallback's latency-bound steps";
    return packed;
  }
}

/// `plan` (rung 3's, for fp32 `p`) with A and B copied where their rows are off 16-byte
/// boundaries, so that the kernel takes its float4 path, if K is at least `Policy::min_k` and
/// the copies cost no more than the product at the CUDA cores' ceilings (`gemm_kernels::plan_packing` with `Policy`, as
/// `gemm_kernels::register_blocked_pack_policy`); else `plan`, whose kernel then loads
/// scalars. A plan of another rung, or one that already packs, is returned as it is. The
/// tile and split do not change: the copies have the operands' shapes. Touches no GPU.
template <class Policy = gemm_kernels::register_blocked_pack_policy>
[[nodiscard]] gemm_plan pack_for_vector_loads(const gemm_plan& plan, const gemm_problem<float, float>& p) {
  if (plan.rung != gemm_rung::register_blocked || plan.pack_a || plan.pack_b || p.k < Policy::min_k) return plan;
  const gemm_kernels::gemm_pack_plan packing = gemm_kernels::plan_packing<float, Policy>(p);
  if (!packing.any()) return plan;
  gemm_plan packed = plan;
  gemm_kernels::detail::record_packing(packed, packing);
  packed.why =
      "fp32 operand rows off a 16-byte boundary, packed for float4 loads: the copy costs less than the product at "
      "the CUDA cores' ceilings";
  return packed;
}

/// Enqueues `p` on `s` with the launch function of the kernel `plan` names
/// (asynchronous); `workspace` as `split_k_options::workspace`. A plan that packs
/// operands first enqueues their copies (`gemm_kernels::detail::packed_operands`: a
/// value that holds the workspace, not a hop) and hands the rung the copies and the rest
/// of the workspace.
template <class In, class Out>
void launch_plan(const gemm_plan& plan, const gemm_problem<In, Out>& p, cuda::std::span<float> workspace,
                 cuda::stream_ref s) {
  if (plan.rung == gemm_rung::naive) return naive::gemm(p, s);
  if constexpr (std::is_same_v<Out, float>) {
    if (plan.rung == gemm_rung::skinny) return gemm_kernels::launch_skinny<In>(plan, p, workspace, s);
  }
  if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float>) {
    if (plan.rung == gemm_rung::shared_tiled) return gemm_kernels::gemm_shared_tiled(p, s);
    if (plan.rung == gemm_rung::register_blocked) {
      const gemm_kernels::detail::packed_operands<In> operands(plan, p, workspace, s);  // none: p itself
      return gemm_kernels::launch_register_blocked_as_planned(plan, operands.problem(), operands.workspace(), s);
    }
    if (plan.rung == gemm_rung::wgmma) {                                                // TF32
      const gemm_kernels::detail::packed_operands<In> operands(plan, p, workspace, s);  // none: p itself
      return gemm_kernels::launch_wgmma<In>(plan, operands.problem(), operands.workspace(), s);
    }
  } else {
    const gemm_kernels::detail::packed_operands<In> operands(plan, p, workspace, s);  // none: p itself
    if (plan.rung == gemm_rung::tensor_core) {
      return gemm_kernels::launch_tensor_core<In>(plan, operands.problem(), operands.workspace(), s);
    }
    if (plan.rung == gemm_rung::wgmma) {
      return gemm_kernels::launch_wgmma<In>(plan, operands.problem(), operands.workspace(), s);
    }
  }
  throw std::invalid_argument(std::string("gemm: rung ") + gemm_rung_name(plan.rung) + " does not handle these types");
}

/// Whether `gemm` takes A, B and C of these element types; a `static_assert` says why not.
/// The callers compile their bodies only where it holds (`if constexpr`), so that a wrong
/// type gives the one message, not a cascade from every rung's kernels.
template <class TA, class TB, class TC>
constexpr bool check_gemm_types() {
  using in = std::remove_const_t<TA>;
  constexpr bool same = std::is_same_v<in, std::remove_const_t<TB>>;
  constexpr bool input = is_gemm_input_v<in>;
  constexpr bool output = std::is_same_v<TC, float>;
  static_assert(same, "gemm: A and B must have the same element type");
  static_assert(input, "gemm: inputs must be float, __half or __nv_bfloat16");
  static_assert(output, "gemm: C must be (non-const) float");
  return same && input && output;
}

template <class T>
matrix_view<const std::remove_const_t<T>> as_const_view(const matrix_view<T>& x) noexcept {
  return {x.data, x.rows, x.cols, x.ld, x.layout};
}

}  // namespace detail

/// The plan `gemm` follows for `p` on `device` (`gemm` passes the device of its stream): naive for
/// K = 0 (C = beta * C is one pass over C), the skinny rung where M or N is small
/// (`gemm_kernels::skinny_shape`: at most 8, on sm_80+ for 16-bit inputs, with 2 MiB of large
/// operand or more for fp32 inputs, 1 MiB for 16-bit ones on the tensor-core kernel), else
/// the best rung for the types (`best_gemm_rung`), with automatic split-K. For 16-bit
/// inputs, operands whose rows are off 16-byte boundaries (which would keep the rung off
/// its fast kernel) are packed into the workspace first where the copy is cheap next to
/// the product, or, for a small product, where a time model finds it faster than rung 4's
/// fallback; otherwise the fallback splits K as that model favours
/// (`detail::pack_where_it_pays`, gemm_pack.cuh). fp32 inputs under `gemm_math::tf32`
/// (`p.math`) that would take rung 3 take the wgmma kernel as TF32 instead where the device
/// runs it (compute capability 9.0, sm_90a code built), their operands packed K-major first
/// where they are not and the copy pays. fp32 operands whose rows are off 16-byte boundaries
/// are copied for rung 3's float4 loads where the copy is cheap next to the product
/// (`detail::pack_for_vector_loads`). Touches no GPU
/// but the (cached) device query. Throws
/// `cuda_error` if the device cannot be queried, `std::invalid_argument` as the
/// rung's plan builder (a grid too large, K too long).
template <class In, class Out>
[[nodiscard]] gemm_plan make_gemm_plan(const gemm_problem<In, Out>& p, const device_properties& device) {
  const bool skinny =
      gemm_kernels::skinny_shape(p) && gemm_rung_supports<In, Out>(gemm_rung::skinny, device.compute_capability());
  const gemm_rung rung = p.k == 0 ? gemm_rung::naive
                         : skinny ? gemm_rung::skinny
                                  : best_gemm_rung<In, Out>(device.compute_capability());
  const auto sm_count = [&device] { return device.sm_count; };
  const std::size_t optin = device.shared_memory_per_block_optin;
  if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float>) {
    if (p.math == gemm_math::tf32 && rung == gemm_rung::register_blocked &&
        gemm_kernels::gemm_wgmma_available(device.compute_capability())) {
      // Where TF32's copies do not pay, rung 3 may still pack for its float4 loads.
      return detail::pack_for_vector_loads(
          detail::pack_where_it_pays(detail::plan_rung(gemm_rung::wgmma, p, 0, sm_count), gemm_rung::wgmma, p,
                                     sm_count),
          p);
    }
  }
  const gemm_plan plan = detail::plan_rung(rung, p, 0, sm_count, optin);
  if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float>) {
    if (rung == gemm_rung::register_blocked) return detail::pack_for_vector_loads(plan, p);
  }
  if constexpr (!std::is_same_v<In, float> && std::is_same_v<Out, float>) {
    if (rung == gemm_rung::tensor_core || rung == gemm_rung::wgmma) {
      return detail::pack_where_it_pays(plan, rung, p, sm_count, optin);
    }
  }
  return plan;
}

/// `make_gemm_plan(p, device)` for the current device.
template <class In, class Out>
[[nodiscard]] gemm_plan make_gemm_plan(const gemm_problem<In, Out>& p) {
  return make_gemm_plan(p, get_device_properties());
}

/// The plan of rung `rung` for `p` on a device of `sm_count` SMs where every tiling fits its
/// shared memory (as the H100 and H200), `split_k` as
/// `split_k_options::split_k` (0: automatic), as the rung is: without packing. Touches no GPU. Throws
/// `std::invalid_argument` if `rung` does not handle these types, or as the rung's
/// plan builder.
template <class In, class Out>
[[nodiscard]] gemm_plan make_gemm_plan(const gemm_problem<In, Out>& p, gemm_rung rung, int sm_count, int split_k = 0) {
  return detail::plan_rung(rung, p, split_k, [sm_count] { return sm_count; });
}

/// `C = alpha * op(A) * op(B) + beta * C` with the rung `rung`, for teaching
/// and benchmarks: the rung as it is, without packing (a misaligned 16-bit operand takes
/// rung 4's fallback). Same contract as `gemm`; also throws
/// `std::invalid_argument` if `rung` does not handle these types or this device.
template <class TA, class TB, class TC>
void gemm_with(gemm_rung rung, float alpha, matrix_view<TA> a, matrix_op op_a, matrix_view<TB> b, matrix_op op_b,
               float beta, matrix_view<TC> c, cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  if constexpr (detail::check_gemm_types<TA, TB, TC>()) {
    using in = std::remove_const_t<TA>;
    gemm_problem<in, TC> p =
        make_gemm_problem<in, TC>(alpha, detail::as_const_view(a), op_a, detail::as_const_view(b), op_b, beta, c);
    if (p.m == 0 || p.n == 0) return;  // nothing to compute, nothing to touch
    if (p.alpha == 0.0f) p.k = 0;      // as gemm: A and B are not read
    const device_properties& device = get_device_properties(stream_device(s.get()));
    const int cc = device.compute_capability();
    FOUNDRY_EXPECTS(
        (gemm_rung_supports<in, TC>(rung, cc)),
        std::string("gemm: rung ") + gemm_rung_name(rung) + " does not handle these types on sm_" + std::to_string(cc));
    detail::expect_gemm_memory(a, b, c, s);
    if (p.k == 0 && p.beta == 1.0f) return;  // C = C: BLAS returns without touching C
    detail::launch_plan(detail::plan_rung(
                            rung, p, 0, [&device] { return device.sm_count; }, device.shared_memory_per_block_optin),
                        p, {}, s);
  }
}

/// `C = alpha * op(A) * op(B) + beta * C`.
///
/// - A, B: `float`, `__half` or `__nv_bfloat16` (both the same); C: `float`.
///   Any layout of each (row- or column-major, leading dimension at least the
///   contiguous extent), `op_a`/`op_b` transpose them. op(A) is M × K, op(B)
///   K × N, C M × N; any M, N, K ≥ 0.
/// - `beta == 0`: C is not read (it may hold NaN). K = 0 or `alpha == 0`: C = beta * C
///   whatever alpha, and A and B are not read (as BLAS: NaN or infinity there does not
///   reach C); with `beta == 1` as well, nothing is enqueued and C is not touched.
///   M or N = 0: nothing is enqueued. C must not overlap A or B.
/// - Pointers need no particular alignment: misaligned operands take a scalar
///   path (slower) instead of the 16-byte vector loads. 16-bit operands whose
///   bases are not 16-byte aligned or whose leading dimensions are not multiples
///   of 8 are copied first into an aligned workspace where the product is large
///   next to them, or where that is modelled faster for a small product
///   (gemm_pack.cuh), so that the fast kernels run; otherwise they take rung 4's
///   fallback kernel, K split as the same model favours. fp32 operands off 16-byte
///   rows are copied likewise for rung 3's float4 loads where the product is large
///   (at least 2^31 FLOPs and K of 64 or more) next to them.
/// - Asynchronous: enqueued on `s`; returns without synchronising. The fp32
///   path and the 16-bit rungs (tensor_core, wgmma) may allocate split-K
///   workspace and the packed copies, stream-ordered on `s`; so
///   may the skinny rung (M or N small). On sm_90 and later the kernels of rungs 3 to 5,
///   of the skinny rung, of the copies and of the split-K reduce are programmatic dependent
///   launches (`launch_dependency::programmatic`): each may become resident while the kernel
///   before it on `s` runs, and waits for it before touching memory.
/// - Throws `std::invalid_argument` for inconsistent shapes, a leading
///   dimension too small, an extent past the address range or a null pointer with
///   elements (before touching the GPU), C overlapping A or B, or an operand that the
///   stream's device cannot access (host memory, say), and `cuda_error` if the device
///   query, an allocation or a launch fails.
/// - Follows `make_gemm_plan` for the device of `s`: the skinny rung where M or N is small,
///   else `best_gemm_rung<In, float>()`.
/// - `math`: `gemm_math::tf32` lets fp32 inputs run on tensor cores as TF32 (opt-in; see
///   `gemm_math` for the accuracy), where the device has foundry's TF32 kernel and the
///   problem is large enough; operands that are not K-major (A column-major, B row-major,
///   after op() and C's layout) are first copied transposed into the workspace (one more
///   read and write of them). Ignored for 16-bit inputs.
template <class TA, class TB, class TC>
void gemm(float alpha, matrix_view<TA> a, matrix_op op_a, matrix_view<TB> b, matrix_op op_b, float beta,
          matrix_view<TC> c, cuda::stream_ref s, gemm_math math = gemm_math::fp32) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  if constexpr (detail::check_gemm_types<TA, TB, TC>()) {
    using in = std::remove_const_t<TA>;
    gemm_problem<in, TC> p =
        make_gemm_problem<in, TC>(alpha, detail::as_const_view(a), op_a, detail::as_const_view(b), op_b, beta, c);
    p.math = math;
    if (p.m == 0 || p.n == 0) return;
    detail::expect_gemm_memory(a, b, c, s);
    if (p.alpha == 0.0f) p.k = 0;            // BLAS: C = beta * C without reading A or B (NaN there stays out of C)
    if (p.k == 0 && p.beta == 1.0f) return;  // C = C: BLAS returns without touching C
    detail::launch_plan(make_gemm_plan(p, get_device_properties(stream_device(s.get()))), p, {}, s);
  }
}

namespace gemm_kernels {

/// Enqueues C = alpha·A·B + beta·C on `s` with rung 5 (fp16 or bf16 in, fp32
/// accumulation and C) where TMA can describe the operands, else with rung 4
/// (`gemm_tensor_core`), with the same contract and the same `options` (split-K as
/// `split_k_options`). Asynchronous. Shapes and leading dimensions are the caller's
/// to validate (foundry::gemm does); an empty C launches nothing and C is not read
/// when beta == 0. Throws `std::invalid_argument` if this program has no sm_90a code
/// (FOUNDRY_HAS_SM90A) or the current device is not of compute capability 9.0, or
/// as `launch_wgmma` and `launch_tensor_core`. (A tuning candidate of the wgmma
/// kernel goes through `wgmma_plan` and `launch_wgmma`, which take any policy.)
template <class In, class Policy = wgmma_policy>
void gemm_wgmma(const gemm_problem<In, float>& p, const split_k_options& options, cuda::stream_ref s) {
  static_assert(std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>,
                "gemm_wgmma takes __half or __nv_bfloat16 inputs");
  static_assert(std::is_same_v<Policy, wgmma_policy>,
                "gemm_wgmma plans its own tiles (128 x 256, or 128 x 64 where N <= 64 or the SMs would idle)");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::require_wgmma_built();
  if (p.m <= 0 || p.n <= 0) return;  // nothing to compute, nothing to touch
  const auto& device = get_device_properties(stream_device(s.get()));
  detail::require_wgmma_device(device.compute_capability());
  const gemm_plan plan = foundry::detail::plan_rung(
      gemm_rung::wgmma, p, options.split_k, [&] { return device.sm_count; }, device.shared_memory_per_block_optin);
  // The plan's own two rungs, not launch_plan: that would instantiate the naive kernels here.
  if (plan.rung == gemm_rung::wgmma) return launch_wgmma<In>(plan, p, options.workspace, s);
  launch_tensor_core<In>(plan, p, options.workspace, s);
}

/// `gemm_wgmma` with the default options (automatic split-K, internal workspace).
template <class In, class Policy = wgmma_policy>
void gemm_wgmma(const gemm_problem<In, float>& p, cuda::stream_ref s) {
  gemm_wgmma<In, Policy>(p, split_k_options{}, s);
}

}  // namespace gemm_kernels

}  // namespace foundry
