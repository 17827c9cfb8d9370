#pragma once
// The 16-bit GEMM cases that the tensor-core rung (test_gemm_tensor_core.cu) and the wgmma rung
// (test_gemm_wgmma.cu) are checked with: a case builds A, B and C on the host (padding and C
// poisoned with NaN), runs one rung on them, and compares C element by element against a CPU
// reference accumulated in double. The rung is a callable, so both files check the same way.
//
// Tolerance (the argument is spelled out in test_gemm_tensor_core.cu): the reference multiplies
// the very values the GPU multiplies (the inputs rounded to In first), so what remains is fp32
// accumulation and one rounding of alpha·acc + beta·c, and every element must satisfy
//     |c - ref| <= 1e-3 · (|alpha|·Σ_p |a_ip·b_pj| + |beta|·|c0_ij|);
// the relative Frobenius error must be <= 1e-2 as well.
#include <catch2/catch.hpp>

#include <foundry/core/math.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/gemm/split_k.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace foundry::test {

/// A problem shape: C is m × n, A m × k, B k × n.
struct gemm_shape {
  std::int64_t m, n, k;
};

/// One case: C = alpha·A·B + beta·C of a shape, with the operands' layouts and the padding and
/// offsets that decide whether a rung's fast path (aligned rows and pointers) can run.
struct gemm_case {
  std::int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  bool a_k_contiguous = true;
  bool b_n_contiguous = true;
  // Leading dimension = stored row length rounded up to `ld_multiple`, plus `ld_extra`.
  std::int64_t ld_multiple = 8, ld_extra = 0;
  // Elements before each operand (1 breaks 16-byte alignment) and C's row padding.
  std::int64_t operand_offset = 0;
  std::int64_t c_ld_extra = 0, c_offset = 0;
  // Which operands ld_multiple, ld_extra and operand_offset apply to; the other is stored
  // aligned (leading dimension a multiple of 8, nothing before it).
  bool pad_a = true, pad_b = true;
  // The element-wise bound, as a fraction of |alpha|·Σ_p |a_ip·b_pj| + |beta|·|c0_ij|: 1e-3 for
  // 16-bit inputs (file comment); TF32 cases state their own (test_gemm_tf32.cu).
  double bound_scale = 1e-3;
};

/// A case of shape `sh` computing alpha·A·B + beta·C, every other setting at its default
/// (row-contiguous operands, leading dimensions a multiple of 8, nothing offset).
inline gemm_case make_gemm_case(const gemm_shape& sh, float alpha = 1.0f, float beta = 0.0f) {
  gemm_case c;
  c.m = sh.m;
  c.n = sh.n;
  c.k = sh.k;
  c.alpha = alpha;
  c.beta = beta;
  return c;
}

/// A bf16 problem of shape `sh` whose A, B and C sit at fake addresses (16-byte aligned, never
/// dereferenced), leading dimensions left 0: for host-only tests of a rung's path predicate and
/// of the argument checks that throw before anything is enqueued.
inline foundry::gemm_problem<__nv_bfloat16, float> fake_gemm_problem(const gemm_shape& sh) {
  foundry::gemm_problem<__nv_bfloat16, float> p;
  p.m = sh.m;
  p.n = sh.n;
  p.k = sh.k;
  p.a = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{4096});
  p.b = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{8192});
  p.c = reinterpret_cast<float*>(std::uintptr_t{16384});
  return p;
}

/// Every setting of `c`, for the failure messages.
inline std::string describe(const gemm_case& c) {
  std::ostringstream s;
  s << c.m << "x" << c.n << "x" << c.k << " alpha " << c.alpha << " beta " << c.beta << " A "
    << (c.a_k_contiguous ? "K" : "M") << "-contiguous, B " << (c.b_n_contiguous ? "N" : "K")
    << "-contiguous, ld multiple " << c.ld_multiple << " + " << c.ld_extra << ", operand offset " << c.operand_offset
    << ", ldc extra " << c.c_ld_extra << ", C offset " << c.c_offset << (c.pad_a ? "" : ", A aligned")
    << (c.pad_b ? "" : ", B aligned");
  return s.str();
}

/// The leading dimension that `make_operand` gives an operand of `stored_cols` elements a
/// stored row (`padded`: with c's settings, else a multiple of 8).
inline std::int64_t case_leading_dimension(std::int64_t stored_cols, const gemm_case& c, bool padded) {
  return foundry::round_up<std::int64_t>(std::max<std::int64_t>(stored_cols, 1), padded ? c.ld_multiple : 8) +
         (padded ? c.ld_extra : 0);
}

/// The problem of case `c` as a plan sees it, without its data: extents, layouts, alpha, beta,
/// the leading dimensions and offsets of the operands `run_gemm_case` stores, on fake 256-byte
/// aligned bases (never dereferenced).
template <class In>
foundry::gemm_problem<In, float> gemm_case_shape(const gemm_case& c) {
  foundry::gemm_problem<In, float> p;
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.alpha = c.alpha;
  p.beta = c.beta;
  p.a_k_contiguous = c.a_k_contiguous;
  p.b_n_contiguous = c.b_n_contiguous;
  p.lda = case_leading_dimension(c.a_k_contiguous ? c.k : c.m, c, c.pad_a);
  p.ldb = case_leading_dimension(c.b_n_contiguous ? c.n : c.k, c, c.pad_b);
  p.ldc = c.n + c.c_ld_extra;
  p.a = reinterpret_cast<const In*>(std::uintptr_t{1} << 12) + (c.pad_a ? c.operand_offset : 0);
  p.b = reinterpret_cast<const In*>(std::uintptr_t{1} << 30) + (c.pad_b ? c.operand_offset : 0);
  p.c = reinterpret_cast<float*>(std::uintptr_t{1} << 40) + c.c_offset;
  return p;
}

/// The value of element (outer, inner) of a logical operand (A: (i, p), B: (p, j)), before
/// rounding to the input type.
using gemm_value_fn = std::function<float(std::int64_t, std::int64_t)>;

/// `count` = outer · inner uniform values in [-1, 1] from `random_vector`'s stream `stream_id`,
/// element (o, i) being value o · inner + i.
inline gemm_value_fn random_gemm_values(std::int64_t inner, std::size_t count, std::uint64_t stream_id) {
  auto values = std::make_shared<std::vector<float>>(random_vector<float>(count, -1.0f, 1.0f, stream_id));
  return [values, inner](std::int64_t o, std::int64_t i) { return (*values)[static_cast<std::size_t>(o * inner + i)]; };
}

/// What running a case found.
struct gemm_outcome {
  bool path = false;                     // what the rung's path predicate said of the problem
  std::int64_t out_of_bound = 0;         // elements beyond the element-wise bound (NaN included)
  double worst_ratio = 0.0;              // max |c - ref| / bound
  double relative_frobenius = 0.0;       // ||c - ref||_F / ||ref||_F
  std::int64_t touched_outside = 0;      // elements of C outside the m × n window that changed
  std::vector<std::string> first_wrong;  // "C(i, j) = got, expected ref", the first few
};

/// A stored operand: logical (outer × inner: A m × k, B k × n) values `value(o, i)`, rounded to
/// In, placed in a buffer of `offset + stored_rows * ld` elements whose padding holds NaN, so
/// that a kernel reading past the matrix is caught by the comparison. Stored rows are the
/// logical rows when `inner_contiguous`, the logical columns otherwise.
template <class In>
struct stored_operand {
  std::vector<In> host;
  std::vector<double> logical;  // row-major (outer × inner) logical matrix, exact rounded values
  std::int64_t ld = 0;
  std::int64_t offset = 0;  // elements before the first
};

/// The operand of case `c` (`padded`: with c's leading-dimension settings and offset, else
/// aligned).
template <class In>
stored_operand<In> make_operand(std::int64_t outer, std::int64_t inner, bool inner_contiguous, const gemm_case& c,
                                const gemm_value_fn& value, bool padded = true) {
  const std::int64_t stored_rows = inner_contiguous ? outer : inner;
  const std::int64_t stored_cols = inner_contiguous ? inner : outer;
  stored_operand<In> op;
  op.ld = case_leading_dimension(stored_cols, c, padded);
  op.offset = padded ? c.operand_offset : 0;
  op.host.assign(static_cast<std::size_t>(op.offset + stored_rows * op.ld),
                 from_float<In>(std::numeric_limits<float>::quiet_NaN()));
  op.logical.resize(static_cast<std::size_t>(outer * inner));
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const In x = from_float<In>(value(o, i));
      op.logical[static_cast<std::size_t>(o * inner + i)] = to_float(x);
      const std::int64_t at = inner_contiguous ? o * op.ld + i : i * op.ld + o;
      op.host[static_cast<std::size_t>(op.offset + at)] = x;
    }
  }
  return op;
}

/// Runs case `c` with A(i, p) = a_value(i, p) and B(p, j) = b_value(p, j) through one rung and
/// compares the result with the reference. C starts as random values (stream 3) in its m × n
/// window when beta != 0 and NaN everywhere else, so a kernel that reads C when beta == 0, or
/// writes outside the window, is caught. `path(problem)` (recorded in the outcome before the run)
/// says which of the rung's kernels should run; `enqueue(problem, stream)` enqueues the rung.
template <class In, class Path, class Enqueue>
gemm_outcome run_gemm_case(const gemm_case& c, Path&& path, Enqueue&& enqueue, const gemm_value_fn& a_value,
                           const gemm_value_fn& b_value) {
  foundry::stream s;
  // A: m × k, "inner" = k; B: k × n, "inner" = n.
  const auto a = make_operand<In>(c.m, c.k, c.a_k_contiguous, c, a_value, c.pad_a);
  const auto b = make_operand<In>(c.k, c.n, c.b_n_contiguous, c, b_value, c.pad_b);

  const std::int64_t ldc = c.n + c.c_ld_extra;
  std::vector<float> c_host(static_cast<std::size_t>(c.c_offset + c.m * ldc), std::numeric_limits<float>::quiet_NaN());
  const auto c0 = random_vector<float>(static_cast<std::size_t>(c.m * c.n), -1.0f, 1.0f, 3);
  if (c.beta != 0.0f) {
    for (std::int64_t i = 0; i < c.m; ++i) {
      for (std::int64_t j = 0; j < c.n; ++j) {
        c_host[static_cast<std::size_t>(c.c_offset + i * ldc + j)] = c0[static_cast<std::size_t>(i * c.n + j)];
      }
    }
  }  // with beta == 0 the window stays NaN: a kernel that reads C produces NaN

  auto a_dev = to_device(a.host, s);
  auto b_dev = to_device(b.host, s);
  auto c_dev = to_device(c_host, s);

  foundry::gemm_problem<In, float> p;
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.a = a_dev.data() + a.offset;
  p.lda = a.ld;
  p.a_k_contiguous = c.a_k_contiguous;
  p.b = b_dev.data() + b.offset;
  p.ldb = b.ld;
  p.b_n_contiguous = c.b_n_contiguous;
  p.c = c_dev.data() + c.c_offset;
  p.ldc = ldc;
  p.alpha = c.alpha;
  p.beta = c.beta;

  gemm_outcome out;
  out.path = path(p);
  enqueue(p, cuda::stream_ref{s});
  const auto result = to_host(c_dev, s);

  double diff2 = 0.0;
  double ref2 = 0.0;
  for (std::int64_t i = 0; i < c.m; ++i) {
    for (std::int64_t j = 0; j < c.n; ++j) {
      double sum = 0.0;
      double magnitude = 0.0;
      for (std::int64_t q = 0; q < c.k; ++q) {
        const double term =
            a.logical[static_cast<std::size_t>(i * c.k + q)] * b.logical[static_cast<std::size_t>(q * c.n + j)];
        sum += term;
        magnitude += std::fabs(term);
      }
      const double old = c.beta != 0.0f ? c0[static_cast<std::size_t>(i * c.n + j)] : 0.0;
      const double ref = double{c.alpha} * sum + double{c.beta} * old;
      const double bound = c.bound_scale * (std::fabs(double{c.alpha}) * magnitude + std::fabs(double{c.beta} * old));
      const double got = result[static_cast<std::size_t>(c.c_offset + i * ldc + j)];
      const double err = std::fabs(got - ref);
      if (!(err <= bound)) {  // NaN fails too
        ++out.out_of_bound;
        if (out.first_wrong.size() < 8) {
          std::ostringstream w;
          w << "C(" << i << ", " << j << ") = " << got << ", expected " << ref;
          out.first_wrong.push_back(w.str());
        }
      }
      if (bound > 0.0) out.worst_ratio = std::max(out.worst_ratio, std::isnan(err) ? INFINITY : err / bound);
      diff2 += (got - ref) * (got - ref);
      ref2 += ref * ref;
    }
  }
  out.relative_frobenius = ref2 > 0.0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  if (std::isnan(out.relative_frobenius)) out.relative_frobenius = INFINITY;

  // Everything outside the m × n window started as NaN and must still be NaN.
  for (std::size_t e = 0; e < result.size(); ++e) {
    const auto rel = static_cast<std::int64_t>(e) - c.c_offset;
    const bool inside = rel >= 0 && rel % ldc < c.n && rel / ldc < c.m;
    if (!inside && !std::isnan(result[e])) ++out.touched_outside;
  }
  return out;
}

/// run_gemm_case on random data with fixed seeds: A and B uniform in [-1, 1] from streams 1 and 2.
template <class In, class Path, class Enqueue>
gemm_outcome run_gemm_case(const gemm_case& c, Path&& path, Enqueue&& enqueue) {
  return run_gemm_case<In>(c, path, enqueue, random_gemm_values(c.k, static_cast<std::size_t>(c.m * c.k), 1),
                           random_gemm_values(c.n, static_cast<std::size_t>(c.k * c.n), 2));
}

/// Checks an outcome of run_gemm_case: every element within its bound, the relative Frobenius
/// error <= 1e-2, nothing outside the m × n window written. The messages name `path_name` with
/// the path flag, the worst error against its bound and the first wrong elements. Returns `out`
/// for further checks (which path ran, exactness).
inline gemm_outcome check_gemm_outcome(const gemm_outcome& out, const char* path_name) {
  INFO(path_name << " " << out.path << ", worst error / bound " << out.worst_ratio << ", relative Frobenius "
                 << out.relative_frobenius);
  for (const auto& w : out.first_wrong) UNSCOPED_INFO(w);
  CHECK(out.out_of_bound == 0);
  CHECK(out.relative_frobenius <= 1e-2);
  CHECK(out.touched_outside == 0);
  return out;
}

/// The split-K checks shared by the rungs that split K. `run(c, options)` runs case `c` through
/// the rung with `options` and returns the checked outcome (check_gemm_outcome).
///
/// Forced counts in every layout: 3 slices of 384 (the last 232, ragged, zero-filled past K);
/// 2 slices of a K that is not a multiple of 64; 16 slices of 64, one K step each; 3 slices
/// over whole 128 × 256 tiles. C is read (beta != 0), strided and offset, so that the reduce's
/// indexing is checked too. Then 4 slices into a caller's workspace poisoned with NaN: every
/// slice must be written before the reduce reads it. Each case must take the rung's fast path.
template <class Run>
void check_split_k_cases(Run&& run) {
  struct split_case {
    gemm_shape sh;
    int splits;
  };
  for (const auto& [sh, splits] : {split_case{{300, 520, 1000}, 3}, split_case{{127, 129, 255}, 2},
                                   split_case{{130, 259, 1024}, 16}, split_case{{256, 512, 1000}, 3}}) {
    for (const bool a_k : {true, false}) {
      for (const bool b_n : {true, false}) {
        gemm_case c = make_gemm_case(sh, -0.75f, 0.5f);
        c.a_k_contiguous = a_k;
        c.b_n_contiguous = b_n;
        c.c_ld_extra = 3;
        c.c_offset = 1;
        foundry::gemm_kernels::split_k_options options;
        options.split_k = splits;
        CHECK(run(c, options).path);
      }
    }
  }
  const gemm_case c = make_gemm_case({200, 304, 704}, 1.0f, 0.0f);
  const std::size_t needed =
      foundry::gemm_kernels::split_k_workspace_bytes(fake_gemm_problem({c.m, c.n, c.k}), 4) / sizeof(float);
  REQUIRE(needed == 4u * 200u * 304u);
  foundry::stream s;
  auto workspace = poisoned_device_buffer<float>(needed, s);
  s.synchronize();
  foundry::gemm_kernels::split_k_options options;
  options.split_k = 4;
  options.workspace = workspace.span();
  CHECK(run(c, options).path);
}

/// The split-K sum, bit for bit. `launch(q, options, s)` runs the rung on problem q and
/// `depth(m, n, k, splits)` is the slice depth the rung plans for m × n × k cut in `splits`.
/// For 2, 3 and 4 slices, C = A·B of row-major random operands (fixed seeds) split that way
/// must equal, bit for bit, the float sum in slice order 0, 1, ... of the rung's unsplit
/// results on each slice's K range (sub-problems whose A and B start at the slice's first K:
/// the same k-steps in the same order, so each slice's values are the same bits). The
/// slices differ, so a lost, doubled or reordered slice changes bits; so would a sum whose
/// order depended on which block finished last. Each split run goes twice.
template <class In, class Launch, class Depth>
void check_split_k_sum_is_exact(Launch&& launch, Depth&& depth) {
  const std::int64_t m = 200, n = 304, k = 704;
  foundry::stream s;
  const auto a = to_device(from_floats<In>(random_vector<float>(static_cast<std::size_t>(m * k), -1.0f, 1.0f, 71)), s);
  const auto b = to_device(from_floats<In>(random_vector<float>(static_cast<std::size_t>(k * n), -1.0f, 1.0f, 72)), s);
  const auto problem = [&](std::int64_t k0, std::int64_t k1, float* c) {
    foundry::gemm_problem<In, float> q;
    q.m = m;
    q.n = n;
    q.k = k1 - k0;
    q.a = a.data() + k0;
    q.lda = k;
    q.b = b.data() + k0 * n;
    q.ldb = n;
    q.c = c;
    q.ldc = n;
    return q;
  };
  const auto run = [&](std::int64_t k0, std::int64_t k1, int splits) {
    auto c = poisoned_device_buffer<float>(static_cast<std::size_t>(m * n), s);
    foundry::gemm_kernels::split_k_options options;
    options.split_k = splits;
    launch(problem(k0, k1, c.data()), options, s);
    return to_host(c, s);
  };
  for (const int splits : {2, 3, 4}) {
    const std::int64_t slice_depth = depth(m, n, k, splits);
    INFO(splits << " slices of " << slice_depth);
    REQUIRE(ceil_div(k, slice_depth) == splits);
    std::vector<float> expected = run(0, slice_depth, 1);
    for (int z = 1; z < splits; ++z) {
      const std::vector<float> slice = run(z * slice_depth, std::min(k, (z + 1) * slice_depth), 1);
      for (std::size_t i = 0; i < expected.size(); ++i) expected[i] += slice[i];
    }
    for (int repeat = 0; repeat < 2; ++repeat) {
      const std::vector<float> got = run(0, k, splits);
      std::size_t differing = 0;
      for (std::size_t i = 0; i < got.size(); ++i) differing += got[i] != expected[i];  // NaN differs too
      INFO("run " << repeat << ": first element " << got[0] << ", expected " << expected[0]);
      CHECK(differing == 0);
    }
  }
}

/// A split-K request of 4 slices of 200 × 304 × 704 with a caller's workspace one float short:
/// the problem must take the rung's fast path (`path(q)`), and `launch(q, options, s)` must
/// throw, naming both sizes.
template <class In, class Path, class Launch>
void check_split_k_rejects_small_workspace(Path&& path, Launch&& launch) {
  const std::int64_t m = 200, n = 304, k = 704;
  foundry::stream s;
  foundry::device_buffer<In> a(static_cast<std::size_t>(m * k), s);
  foundry::device_buffer<In> b(static_cast<std::size_t>(k * n), s);
  foundry::device_buffer<float> out(static_cast<std::size_t>(m * n), s);
  foundry::gemm_problem<In, float> q;
  q.m = m;
  q.n = n;
  q.k = k;
  q.a = a.data();
  q.lda = k;
  q.b = b.data();
  q.ldb = n;
  q.c = out.data();
  q.ldc = n;
  REQUIRE(path(q));  // leading dimensions 704 and 304: multiples of 8
  const std::size_t needed = foundry::gemm_kernels::split_k_workspace_bytes(q, 4) / sizeof(float);
  REQUIRE(needed == 243200u);
  foundry::device_buffer<float> workspace(needed - 1, s);
  foundry::gemm_kernels::split_k_options small;
  small.split_k = 4;
  small.workspace = workspace.span();
  CHECK_THROWS_WITH(launch(q, small, s), Catch::Contains("split-K workspace of 243199 floats") &&
                                             Catch::Contains("smaller than the 243200 needed"));
  s.synchronize();
}

/// Runs a split-K case twice through `run(workspace)` (a callable returning a `gemm_outcome`,
/// whose path must hold): with no workspace, so that the call allocates its own, then with a
/// caller's workspace of `bytes` holding poison, which the call must write before it reads.
template <class Run>
void check_own_then_poisoned_workspace(std::size_t bytes, Run&& run) {
  CHECK(run(cuda::std::span<float>{}).path);
  foundry::stream s;
  auto workspace = poisoned_device_buffer<float>(bytes / sizeof(float), s);
  s.synchronize();
  CHECK(run(workspace.span()).path);
}

}  // namespace foundry::test
