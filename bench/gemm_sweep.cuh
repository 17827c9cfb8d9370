#pragma once
// The GEMM shape sweep (issue 21): the public foundry::gemm beside cuBLAS on the shapes users
// call, not only bench_gemm's four. One binary per input precision (bench_gemm_sweep_fp32,
// bench_gemm_sweep_bf16, bench_gemm_sweep_fp16: one instantiation of foundry::gemm per
// translation unit, for CI's two cores); this header is what they share.
//
// Rows: gemm_sweep_<precision>/{foundry,cublas}/<M>x<N>x<K>_<layouts>_<pads>
//   op(A) is M x K, op(B) is K x N, C = op(A) op(B) (alpha = 1, beta = 0) is M x N.
//   <layouts>: two letters for A, then two for B: the storage, r (row-major) or c (column-major),
//     then the op, n (as stored) or t (transposed). `_rn_ct`: A row-major as stored, B
//     column-major transposed (B is stored N x K).
//   <pads>: p<A>_<B>_<C>, each leading dimension being the operand's contiguous extent (its
//     columns when row-major, its rows when column-major) plus that pad, 0 to 7 elements.
//   C is float and row-major: a column-major C is the row-major C^T = op(B)^T op(A)^T, which
//   the random layouts of A and B already cover.
//
// Problems (sweep_class counter in brackets); the same list for each precision, so that the
// precisions compare on the same shapes:
//   [0] random, 48: std::mt19937_64 seeded with bench::default_seed (20261202). M, N, K each
//       round(2^(14 u)) with u uniform in [0, 1) (log-uniform in [1, 16384]), the triple drawn
//       again until M N K <= 2^36; then A's and B's layouts (storage and op, the four pairs
//       equally likely) and the pads of A, B, C (0..7). Only the engine's raw output is used
//       (u from its top 53 bits, the rest from its low bits), never std::*_distribution, whose
//       results differ between standard libraries: every toolchain builds the same list.
//   [1] vector and skinny: M or N in {1, 2, 4, 8, 16, 32, 64}, the other two 16384.
//   [2] shallow K: K in {1, 2, 4, 8, 16, 32, 33, 64} at M = N = 16384.
//   [3] deep K: K >= 8192 with M N <= 2^20 (one of them with odd extents, 1000 x 1000 x 12000).
//   [4] bench_gemm's committed shapes: 4096^3, 8192^3, 8192x8192x1024, 1024x1024x8192.
//   The named classes [1]-[4] are stored as bench_gemm stores them, `_rn_rn_p0_0_0`, so that
//   only the shape differs from the case the ladder was tuned on.
//   `--benchmark_list_tests` prints the list; it needs no GPU.
//
// fp32 problems whose plan copies misaligned operands for rung 3's float4 loads
// (foundry::detail::pack_for_vector_loads) also get a row gemm_sweep_fp32/foundry_unpacked/<shape>:
// rung 3 as it is (gemm_with), on the scalar loads, so that the report gives what the copies gain.
//
// cuBLAS: cublasGemmEx with CUBLAS_COMPUTE_32F (fp32 accumulation; for fp32 inputs true fp32,
// not TF32: the handle keeps cuBLAS's default math mode), fp32 C, on the same operands.
//
// Correct before timed. The foundry row first runs foundry::gemm once into a C poisoned with
// NaN (its padding too) and compares it on the device with cuBLAS's C (one pass over C, no
// copy to the host). It fails when
//   - an element differs by more than the bound below (a NaN, an element not written, ...);
//   - ||C - C_cublas||_F / ||C_cublas||_F exceeds 1e-4 (fp32) or 1e-3 (fp16, bf16);
//   - an element of C's padding no longer holds the poison (foundry wrote outside C's view).
// The element bound: both sides accumulate the K products in fp32 in some order (products of
// 16-bit inputs are exact in fp32; fp32 inputs meet in FMAs), so each is within gamma_K
// sum_p |a_ip||b_pj| of the exact result (Higham, Accuracy and Stability, 3.1; any summation
// order), gamma_K = rho K u / (1 - rho K u), u = 2^-24. rho = 1 for fp32 (round-to-nearest
// FMAs on both sides), rho = 2 for 16-bit inputs (tensor cores may truncate when they add,
// which costs up to one ulp = 2u per addition). The inputs are uniform in [-1, 1], so
// sum_p |a_ip||b_pj| <= K, and the bound is |c - c_cublas| <= 2 gamma_K K: it can never fail
// on a correct result. It is loose at large K (about 32 at K = 16384 in fp32, where |c| is
// about sqrt(K)/3 = 43): there the Frobenius check carries, for which the rounding
// differences of random-sign sums are about 0.4 u sqrt(K) (3e-6 at K = 16384) for fp32 and,
// with truncating tensor-core additions every 16 products, at most about 0.04 u K (4e-5) for
// 16-bit inputs, while one wrong row of C in 16384 reads 1e-2 and one missing K slice of 64
// in 16384 reads 6e-2. (bench_gemm's rows pass the same Frobenius tolerances on the H200.)
// Counters on the foundry row: rel_error (the Frobenius figure), max_err_over_bound (the
// largest |c - c_cublas| over its element bound).
//
// Time (the sweep must fit one 10-minute GPU command with the rest of the run): every row
// takes at most `samples_per_row` samples within `seconds_per_row` (a hot sample is a batch of
// calls of at least 100 us, bench/harness.cuh); A, B, C and the reference are allocated once
// per binary at their largest (2^28 elements each: 4 GiB for fp32) and reused by every row.
// Expected on the H200 (a model from bench_gemm's measured times, not yet a run): most random
// problems are small (log-uniform extents: M N K is 2^21 at the median), so a row costs its
// fixed ~5-10 ms of harness, check and synchronisation; the longest, fp32 8192^3 (~22 ms a
// call, ~25 calls with warm-up and check), about 0.6 s. About 3 s of GPU work per precision,
// 10-30 s per binary with start-up (ceilings ~1 s) and --benchmark_repetitions=1, under 2
// minutes for all three even with foundry 5x slower than cuBLAS on every shape.
//
// A row whose foundry::gemm throws (an unsupported case, a grid too large) or whose CUDA work
// fails is a failed row with the reason, not the end of the binary; the binary then exits 1.

#include <foundry/bench/cublas.cuh>
#include <foundry/bench/harness.cuh>
#include <foundry/bench/random.cuh>
#include <foundry/core/error.cuh>
#include <foundry/gemm/gemm.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>

#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <math_constants.h>
#include <cuda/stream_ref>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace gemm_sweep {

namespace bench = foundry::bench;
using foundry::matrix_layout;
using foundry::matrix_op;
using foundry::matrix_view;

/// Samples per row and the wall-clock budget for them: bench_gemm's 20 (relative standard
/// deviation of the samples ~0.4% on the H200, bench/harness.cuh); 0.5 s holds 20 samples of
/// the longest call (fp32 8192^3, ~22 ms) and cuts a row short only if it is far slower.
inline constexpr int samples_per_row = 20;
inline constexpr double seconds_per_row = 0.5;
/// Random problems per precision (issue 21 asks for at least 48).
inline constexpr int random_problems = 48;
/// Largest extent and largest M N K of the random problems.
inline constexpr std::int64_t max_extent = 16384;
inline constexpr std::int64_t max_volume = std::int64_t{1} << 36;

/// Which part of the list a problem comes from: the counter `sweep_class` of both rows.
enum class sweep_class { random = 0, vector_or_skinny = 1, shallow_k = 2, deep_k = 3, committed = 4 };

/// A stored operand: `rows x cols` in `layout`, leading dimension its contiguous extent plus `pad`.
struct stored_matrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  matrix_layout layout = matrix_layout::row_major;
  int pad = 0;

  [[nodiscard]] std::int64_t ld() const { return (layout == matrix_layout::row_major ? cols : rows) + pad; }
  /// Elements from the first to past the last leading-dimension stride (padding included).
  [[nodiscard]] std::size_t elements() const {
    return static_cast<std::size_t>((layout == matrix_layout::row_major ? rows : cols) * ld());
  }
  template <class T>
  [[nodiscard]] matrix_view<T> view(T* data) const {
    return {data, rows, cols, ld(), layout};
  }
};

/// The stored form of an operand X whose op(X) is `op_rows x op_cols`.
inline stored_matrix stored(std::int64_t op_rows, std::int64_t op_cols, matrix_layout layout, matrix_op op, int pad) {
  return op == matrix_op::none ? stored_matrix{op_rows, op_cols, layout, pad}
                               : stored_matrix{op_cols, op_rows, layout, pad};
}

struct sweep_problem {
  std::int64_t m = 0, n = 0, k = 0;
  matrix_layout layout_a = matrix_layout::row_major;
  matrix_op op_a = matrix_op::none;
  matrix_layout layout_b = matrix_layout::row_major;
  matrix_op op_b = matrix_op::none;
  int pad_a = 0, pad_b = 0, pad_c = 0;
  sweep_class kind = sweep_class::random;

  [[nodiscard]] stored_matrix a() const { return stored(m, k, layout_a, op_a, pad_a); }
  [[nodiscard]] stored_matrix b() const { return stored(k, n, layout_b, op_b, pad_b); }
  [[nodiscard]] stored_matrix c() const { return stored(m, n, matrix_layout::row_major, matrix_op::none, pad_c); }

  /// `<M>x<N>x<K>_<layouts>_<pads>`, as the file comment describes.
  [[nodiscard]] std::string name() const {
    const auto code = [](matrix_layout l, matrix_op o) {
      return std::string(l == matrix_layout::row_major ? "r" : "c") + (o == matrix_op::none ? "n" : "t");
    };
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "_" + code(layout_a, op_a) + "_" +
           code(layout_b, op_b) + "_p" + std::to_string(pad_a) + "_" + std::to_string(pad_b) + "_" +
           std::to_string(pad_c);
  }
};

/// A problem stored as bench_gemm stores its own: row-major, as stored, no padding.
inline sweep_problem plain(std::int64_t m, std::int64_t n, std::int64_t k, sweep_class kind) {
  sweep_problem p;
  p.m = m, p.n = n, p.k = k, p.kind = kind;
  return p;
}

/// The sweep's problems, in the order they are registered (the file comment says how they
/// are drawn). Host only: registration runs before main and must not need a GPU.
inline const std::vector<sweep_problem>& sweep_problems() {
  static const std::vector<sweep_problem> list = [] {
    std::vector<sweep_problem> v;
    std::set<std::string> names;
    const auto add = [&](const sweep_problem& p) {  // a shape drawn twice is registered once
      if (names.insert(p.name()).second) v.push_back(p);
    };

    std::mt19937_64 engine(bench::default_seed);
    const auto extent = [&] {
      const double u = static_cast<double>(engine() >> 11) * 0x1.0p-53;  // [0, 1)
      const auto x = static_cast<std::int64_t>(std::llround(std::exp2(14.0 * u)));
      return std::clamp<std::int64_t>(x, 1, max_extent);
    };
    int drawn = 0;
    while (drawn < random_problems) {
      sweep_problem p;
      do {
        p.m = extent(), p.n = extent(), p.k = extent();
      } while (p.m * p.n * p.k > max_volume);
      const std::uint64_t la = engine() & 3, lb = engine() & 3;
      p.layout_a = (la & 1) != 0 ? matrix_layout::col_major : matrix_layout::row_major;
      p.op_a = (la & 2) != 0 ? matrix_op::transpose : matrix_op::none;
      p.layout_b = (lb & 1) != 0 ? matrix_layout::col_major : matrix_layout::row_major;
      p.op_b = (lb & 2) != 0 ? matrix_op::transpose : matrix_op::none;
      p.pad_a = static_cast<int>(engine() % 8);
      p.pad_b = static_cast<int>(engine() % 8);
      p.pad_c = static_cast<int>(engine() % 8);
      if (names.count(p.name()) == 0) ++drawn;
      add(p);
    }

    for (const std::int64_t small : {1, 2, 4, 8, 16, 32, 64}) {
      add(plain(small, max_extent, max_extent, sweep_class::vector_or_skinny));  // row vector(s) times a matrix
      add(plain(max_extent, small, max_extent, sweep_class::vector_or_skinny));  // a matrix times column vector(s)
    }
    for (const std::int64_t k : {1, 2, 4, 8, 16, 32, 33, 64})
      add(plain(max_extent, max_extent, k, sweep_class::shallow_k));
    const sweep_problem deep[] = {
        plain(1024, 1024, 16384, sweep_class::deep_k), plain(2048, 512, 16384, sweep_class::deep_k),
        plain(512, 2048, 8192, sweep_class::deep_k),   plain(256, 256, 16384, sweep_class::deep_k),
        plain(128, 1024, 16384, sweep_class::deep_k),  plain(1000, 1000, 12000, sweep_class::deep_k)};
    for (const sweep_problem& p : deep) add(p);
    const sweep_problem committed[] = {
        plain(4096, 4096, 4096, sweep_class::committed), plain(8192, 8192, 8192, sweep_class::committed),
        plain(8192, 8192, 1024, sweep_class::committed), plain(1024, 1024, 8192, sweep_class::committed)};
    for (const sweep_problem& p : committed) add(p);
    return v;
  }();
  return list;
}

// cuBLAS: bench::shared_cublas and bench::cublas_data_type (include/foundry/bench/cublas.cuh).

/// C = op(A) op(B) by cuBLAS, asynchronous on `s`; throws `std::runtime_error` if cuBLAS
/// refuses. cuBLAS is column-major: the row-major C (ldc) is its N x M matrix C^T =
/// op(B)^T op(A)^T, and op(B)^T is B's memory as stored exactly when op(B)'s columns are
/// contiguous (row-major XOR transposed), likewise op(A)^T when op(A)'s K is contiguous.
template <class In>
void cublas_gemm(const sweep_problem& p, const In* a, const In* b, float* c, cuda::stream_ref s) {
  const bool a_k_contiguous = (p.layout_a == matrix_layout::row_major) != (p.op_a == matrix_op::transpose);
  const bool b_n_contiguous = (p.layout_b == matrix_layout::row_major) != (p.op_b == matrix_op::transpose);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  bench::cublas_try(
      cublasGemmEx(bench::shared_cublas(s).get(), b_n_contiguous ? CUBLAS_OP_N : CUBLAS_OP_T,
                   a_k_contiguous ? CUBLAS_OP_N : CUBLAS_OP_T, static_cast<int>(p.n), static_cast<int>(p.m),
                   static_cast<int>(p.k), &alpha, b, bench::cublas_data_type<In>(), static_cast<int>(p.b().ld()), a,
                   bench::cublas_data_type<In>(), static_cast<int>(p.a().ld()), &beta, c, CUDA_R_32F,
                   static_cast<int>(p.c().ld()), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "cublasGemmEx");
}

// ---------------------------------------------------------------------------
// The comparison on the device.

/// Unit roundoff of fp32 (round to nearest).
inline constexpr double fp32_unit_roundoff = 0x1.0p-24;

/// The largest |c_foundry - c_cublas| a correct element can show (file comment): 2 gamma_K K,
/// gamma_K = rho K u / (1 - rho K u), rho = 1 for fp32 inputs and 2 for 16-bit ones.
template <class In>
double element_bound(std::int64_t k) {
  const double rho = std::is_same_v<In, float> ? 1.0 : 2.0;
  const double rho_k_u = rho * static_cast<double>(k) * fp32_unit_roundoff;  // <= 2^-9 for K <= 16384
  return 2.0 * rho_k_u / (1.0 - rho_k_u) * static_cast<double>(k);
}

/// The largest ||C - C_cublas||_F / ||C_cublas||_F accepted (file comment).
template <class In>
inline constexpr double frobenius_tolerance = std::is_same_v<In, float> ? 1e-4 : 1e-3;

/// What the comparison kernel accumulates (zeroed before it runs).
struct comparison {
  double diff_sq;                   ///< sum over C's view of (c - c_ref)^2
  double ref_sq;                    ///< sum over C's view of c_ref^2
  unsigned long long over_bound;    ///< elements with |c - c_ref| > bound, NaN included
  unsigned long long outside_view;  ///< padding elements of C that no longer hold the poison
  unsigned long long worst_bits;    ///< bits of max |c - c_ref| / bound (+inf for NaN): a
                                    ///< non-negative double's bits order as its values
};

/// Elements past the end of C's storage that are poisoned with C and must stay poisoned.
inline constexpr std::size_t c_guard_elements = 1024;

/// C is poisoned with this NaN before foundry::gemm writes it.
inline std::uint32_t poison_bits() {
  const float poison = std::numeric_limits<float>::quiet_NaN();
  std::uint32_t bits = 0;
  std::memcpy(&bits, &poison, sizeof bits);
  return bits;
}

/// Whether the `c_guard_elements` floats at `guard` (device memory) still hold the
/// poison. Blocks the host until `s` has finished.
inline bool guard_band_untouched(const float* guard, cuda::stream_ref s) {
  std::vector<std::uint32_t> bits(c_guard_elements);
  FOUNDRY_CUDA_TRY(
      cudaMemcpyAsync(bits.data(), guard, c_guard_elements * sizeof(float), cudaMemcpyDeviceToHost, s.get()));
  FOUNDRY_CUDA_TRY(cudaStreamSynchronize(s.get()));
  return std::all_of(bits.begin(), bits.end(), [](std::uint32_t b) { return b == poison_bits(); });
}

/// Blocks stride over the rows of C (row-major, `ld` apart), threads over a row's `ld`
/// elements: the first `cols` are compared with `ref`, the padding after them checked for
/// the poison. One atomic set per warp. (A template, like the harness's kernels.)
template <int = 0>
__global__ void compare_kernel(const float* c, const float* ref, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                               double bound, std::uint32_t poison, comparison* out) {
  double diff_sq = 0.0;
  double ref_sq = 0.0;
  double worst = 0.0;
  unsigned long long over = 0;
  unsigned long long outside = 0;
  for (std::int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    for (std::int64_t j = threadIdx.x; j < ld; j += blockDim.x) {
      const std::int64_t at = i * ld + j;
      const float x = c[at];
      if (j >= cols) {
        outside += __float_as_uint(x) != poison ? 1 : 0;
        continue;
      }
      const double r = ref[at];
      const double d = fabs(static_cast<double>(x) - r);  // NaN when x is NaN
      diff_sq += d * d;
      ref_sq += r * r;
      over += d <= bound ? 0 : 1;
      worst = fmax(worst, isnan(d) ? CUDART_INF : d / bound);
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    diff_sq += __shfl_down_sync(0xFFFFFFFFu, diff_sq, offset);
    ref_sq += __shfl_down_sync(0xFFFFFFFFu, ref_sq, offset);
    over += __shfl_down_sync(0xFFFFFFFFu, over, offset);
    outside += __shfl_down_sync(0xFFFFFFFFu, outside, offset);
    worst = fmax(worst, __shfl_down_sync(0xFFFFFFFFu, worst, offset));
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&out->diff_sq, diff_sq);
    atomicAdd(&out->ref_sq, ref_sq);
    if (over != 0) atomicAdd(&out->over_bound, over);
    if (outside != 0) atomicAdd(&out->outside_view, outside);
    atomicMax(&out->worst_bits, static_cast<unsigned long long>(__double_as_longlong(worst)));
  }
}

struct check_result {
  double rel_error = 0;           ///< ||C - C_ref||_F / ||C_ref||_F (NaN if C holds NaN)
  double max_err_over_bound = 0;  ///< max |c - c_ref| / bound
  unsigned long long over_bound = 0;
  unsigned long long outside_view = 0;
};

/// Compares the row-major `c_shape` view at `c` with the same view at `ref`, and C's padding
/// with the poison. `scratch` is one device `comparison`. Blocks the host until `s` has
/// finished; throws `cuda_error` if a launch or copy fails.
inline check_result compare(const float* c, const float* ref, const stored_matrix& c_shape, double bound,
                            comparison* scratch, cuda::stream_ref s) {
  FOUNDRY_CUDA_TRY(cudaMemsetAsync(scratch, 0, sizeof(comparison), s.get()));
  foundry::launch_config config;
  config.block = dim3(256);
  config.grid = dim3(static_cast<unsigned>(
      std::min<std::int64_t>(c_shape.rows, static_cast<std::int64_t>(foundry::resident_grid_blocks(8, s)))));
  foundry::launch(s, config, compare_kernel<>, c, ref, c_shape.rows, c_shape.cols, c_shape.ld(), bound, poison_bits(),
                  scratch);
  comparison host{};
  FOUNDRY_CUDA_TRY(cudaMemcpyAsync(&host, scratch, sizeof host, cudaMemcpyDeviceToHost, s.get()));
  foundry::synchronize(s);
  check_result r;
  r.rel_error = std::sqrt(host.diff_sq) / std::sqrt(host.ref_sq);
  std::memcpy(&r.max_err_over_bound, &host.worst_bits, sizeof r.max_err_over_bound);
  r.over_bound = host.over_bound;
  r.outside_view = host.outside_view;
  return r;
}

// ---------------------------------------------------------------------------
// The operands, shared by every row of a binary.

/// A, B (random, fixed seeds, uniform in [-1, 1]), C and cuBLAS's reference C, each as large
/// as the sweep's largest, on one stream. Built by the first row that runs (registration must
/// not touch the GPU), then reused: a row uses the first elements of each.
template <class In>
struct operands {
  explicit operands(const std::vector<sweep_problem>& problems) : s() {
    std::size_t a_size = 1, b_size = 1, c_size = 1;
    for (const sweep_problem& p : problems) {
      a_size = std::max(a_size, p.a().elements());
      b_size = std::max(b_size, p.b().elements());
      c_size = std::max(c_size, p.c().elements());
    }
    // Keep freed pool memory instead of returning it at every synchronisation, so that the
    // split-K workspace of foundry::gemm is reused across calls, as in an application that
    // keeps its pool warm (as bench_gemm does).
    cudaMemPool_t pool = nullptr;
    FOUNDRY_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, foundry::stream_device(s.get())));
    std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
    FOUNDRY_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    a = foundry::device_buffer<In>(a_size, s);
    b = foundry::device_buffer<In>(b_size, s);
    c = foundry::device_buffer<float>(c_size + c_guard_elements, s);
    reference = foundry::device_buffer<float>(c_size, s);
    scratch = foundry::device_buffer<comparison>(1, s);
    bench::fill_uniform(a.span(), -1.0, 1.0, bench::default_seed, s);
    bench::fill_uniform(b.span(), -1.0, 1.0, bench::default_seed + 1, s);
    foundry::synchronize(s);
  }

  foundry::stream s;
  foundry::device_buffer<In> a;
  foundry::device_buffer<In> b;
  foundry::device_buffer<float> c;
  foundry::device_buffer<float> reference;
  foundry::device_buffer<comparison> scratch;
};

/// The binary's operands, built on first use. Deliberately never destroyed (freeing them
/// during static destruction may run after the CUDA runtime has shut down); the process's
/// exit releases them. If building them throws, the next row tries again.
template <class In>
operands<In>& shared_operands() {
  static operands<In>* const d = new operands<In>(sweep_problems());
  return *d;
}

template <class In>
bench::work work_of(const sweep_problem& p) {
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n), k = static_cast<double>(p.k);
  return {(m * k + k * n) * sizeof(In), m * n * sizeof(float), 2.0 * m * n * k};
}

template <class In>
bench::options options_of() {
  bench::options opt;
  opt.ceiling = std::is_same_v<In, float> ? bench::flop_ceiling::fp32_cuda_cores : bench::flop_ceiling::bf16_tensor;
  opt.max_samples = samples_per_row;
  opt.max_seconds = seconds_per_row;
  return opt;
}

/// Marks the row failed with `why` (counted: the binary exits 1), unless it already failed.
inline void fail(benchmark::State& state, const std::string& why) {
  if (!state.error_occurred()) bench::detail::fail(state, why);
}

// ---------------------------------------------------------------------------
// The rows.

/// Which foundry call a row times: `foundry::gemm` (its plan, copies included), or rung 3 as
/// it is (`gemm_with`, no copies: misaligned operands on the scalar loads), to measure what
/// fp32 packing gains on the problems where the plan packs.
enum class foundry_call { planned, unpacked };

/// Whether foundry::gemm copies operands of fp32 problem `p` for rung 3's float4 loads: the
/// plan make_gemm_plan gives it on an H200-like device (132 SMs, compute capability 9.0), with
/// the operands where the rows put them (each at the start of a buffer: 256-byte aligned).
/// Host only: it reads the shape, never the memory.
inline bool fp32_plan_packs(const sweep_problem& p) {
  const auto at = [](std::uintptr_t address) { return reinterpret_cast<const float*>(address); };
  const foundry::gemm_problem<float, float> q =
      foundry::make_gemm_problem<float, float>(1.0f, p.a().view(at(256)), p.op_a, p.b().view(at(512)), p.op_b, 0.0f,
                                               p.c().view(reinterpret_cast<float*>(std::uintptr_t{768})));
  foundry::device_properties h200_like;
  h200_like.sm_count = 132;
  h200_like.compute_capability_major = 9;
  const foundry::gemm_plan plan = foundry::make_gemm_plan(q, h200_like);
  return plan.rung == foundry::gemm_rung::register_blocked && (plan.pack_a || plan.pack_b);
}

template <class In>
void bm_foundry(benchmark::State& state, sweep_problem p, foundry_call call) {
  state.counters["sweep_class"] = static_cast<double>(p.kind);
  try {
    operands<In>& d = shared_operands<In>();
    const stored_matrix a = p.a(), b = p.b(), c = p.c();
    const matrix_view<const In> va = a.view<const In>(d.a.data());
    const matrix_view<const In> vb = b.view<const In>(d.b.data());
    const matrix_view<float> vc = c.view(d.c.data());
    // C and a guard band past its last element hold the poison; so does cuBLAS's C, so
    // that a reference cuBLAS did not write fails the comparison instead of passing with
    // the previous row's result.
    foundry::fill(cuda::std::span<float>(d.c.data(), c.elements() + c_guard_elements),
                  std::numeric_limits<float>::quiet_NaN(), d.s);
    foundry::fill(cuda::std::span<float>(d.reference.data(), c.elements()), std::numeric_limits<float>::quiet_NaN(),
                  d.s);
    try {
      cublas_gemm<In>(p, d.a.data(), d.b.data(), d.reference.data(), d.s);
    } catch (const std::exception& e) {
      fail(state, std::string("the cuBLAS reference failed: ") + e.what());
      return;
    }
    const auto run = [&](cuda::stream_ref st) {
      if (call == foundry_call::unpacked) {
        foundry::gemm_with(foundry::gemm_rung::register_blocked, 1.0f, va, p.op_a, vb, p.op_b, 0.0f, vc, st);
      } else {
        foundry::gemm(1.0f, va, p.op_a, vb, p.op_b, 0.0f, vc, st);
      }
    };
    try {
      run(d.s);
    } catch (const std::exception& e) {
      fail(state, std::string("foundry::gemm threw: ") + e.what());
      return;
    }
    if (!bench::expect(state, guard_band_untouched(d.c.data() + c.elements(), d.s),
                       "foundry::gemm wrote past the last element of C (the guard band lost its poison)"))
      return;
    const double bound = element_bound<In>(p.k);
    const check_result r = compare(d.c.data(), d.reference.data(), c, bound, d.scratch.data(), d.s);
    state.counters["rel_error"] = r.rel_error;
    state.counters["max_err_over_bound"] = r.max_err_over_bound;
    const double tolerance = frobenius_tolerance<In>;
    if (!bench::expect(state, r.outside_view == 0,
                       std::to_string(r.outside_view) + " element(s) of C's padding written (outside C's view)") ||
        !bench::expect(state, r.over_bound == 0,
                       std::to_string(r.over_bound) + " element(s) differ from cuBLAS by more than the bound " +
                           std::to_string(bound) + " (worst at " + std::to_string(r.max_err_over_bound) +
                           " times it; NaN: not written)") ||
        !bench::expect(state, r.rel_error <= tolerance,
                       "relative Frobenius error against cuBLAS " + std::to_string(r.rel_error) + " exceeds " +
                           std::to_string(tolerance)))
      return;
    // The label names the plan the row ran (rung, tile, split, packing), so that the
    // report's worst rows say why.
    bench::options opt = options_of<In>();
    const foundry::gemm_problem<In, float> problem =
        foundry::make_gemm_problem<In, float>(1.0f, va, p.op_a, vb, p.op_b, 0.0f, vc);
    const foundry::device_properties& device = foundry::get_device_properties(foundry::stream_device(d.s.get()));
    opt.note = "plan: " + (call == foundry_call::unpacked
                               ? foundry::make_gemm_plan(problem, foundry::gemm_rung::register_blocked, device.sm_count)
                               : foundry::make_gemm_plan(problem, device))
                              .describe();
    bench::measure(state, d.s, work_of<In>(p), run, opt);
  } catch (const std::exception& e) {
    fail(state, e.what());  // the operands could not be built, or the comparison failed
  }
}

/// cuBLAS is the reference: its row is timed without a check against itself.
template <class In>
void bm_cublas(benchmark::State& state, sweep_problem p, foundry_call /*unused: cuBLAS is one call*/) {
  state.counters["sweep_class"] = static_cast<double>(p.kind);
  try {
    operands<In>& d = shared_operands<In>();
    bench::measure(
        state, d.s, work_of<In>(p),
        [&](cuda::stream_ref st) { cublas_gemm<In>(p, d.a.data(), d.b.data(), d.c.data(), st); }, options_of<In>());
  } catch (const std::exception& e) {
    fail(state, e.what());
  }
}

/// Registers the foundry and cuBLAS rows of every problem as gemm_sweep_<precision>/..., and
/// for the fp32 problems whose plan packs, a foundry_unpacked row (rung 3 without the copies)
/// next to them. Touches no GPU.
template <class In>
bool register_sweep(const std::string& precision) {
  using row_fn = void (*)(benchmark::State&, sweep_problem, foundry_call);
  const auto add = [&precision](const char* variant, row_fn row, const sweep_problem& p, foundry_call call) {
    const std::string name = "gemm_sweep_" + precision + "/" + variant + "/" + p.name();
    benchmark::RegisterBenchmark(name.c_str(), row, p, call)->Apply(bench::configure)->Iterations(samples_per_row);
  };
  for (const sweep_problem& p : sweep_problems()) {
    add("foundry", &bm_foundry<In>, p, foundry_call::planned);
    add("cublas", &bm_cublas<In>, p, foundry_call::planned);
    if constexpr (std::is_same_v<In, float>) {
      if (fp32_plan_packs(p)) add("foundry_unpacked", &bm_foundry<In>, p, foundry_call::unpacked);
    }
  }
  return true;
}

}  // namespace gemm_sweep
