// Vector and skinny products (gemm/gemm_skinny.cuh) beside cuBLAS: C = A * B, row-major,
// alpha = 1, beta = 0, at M x N x K (the names) of 1 x 16384 x 16384 and 8 x 16384 x 16384
// (B streamed along N), and 16384 x 1 x 16384 and 16384 x 8 x 16384 (small N: A, row-major,
// streamed along K as C^T = B^T A^T).
//
//   gemm_skinny_<precision>/foundry/<M>x<N>x<K>   the plan foundry::gemm makes for the shape
//       (make_gemm_plan on the current device; the row fails unless it is the skinny rung),
//       enqueued by launch_skinny: foundry::gemm without its host-side argument checks, so
//       that this binary does not instantiate the tiled rungs (no sm_90a code needed)
//   gemm_skinny_<precision>/cublas/<M>x<N>x<K>    cublasSgemm / cublasGemmEx (CUBLAS_COMPUTE_32F)
//   precision: fp32, bf16, fp16 (A and B; C is fp32)
//
// bytes = the large operand only (K x max(M, N) elements), read once: GB/s and pct_of_ceiling
// read against the measured device copy ceiling (the goal: >= 90%). The small operand and C
// (at most 8 x 16384 elements each, under 1% of the bytes) are left out. flops = 2 M N K;
// the fp32 CUDA-core ceiling places every row below the ridge point (memory-bound).
// Each row checks its C against cuBLAS's before timing: relative Frobenius error at most
// 1e-4 (fp32) or 1e-3 (16-bit inputs), as bench_gemm.cu and the sweep (both sides accumulate
// the same rounded inputs in fp32 over K = 16384: two round-to-nearest summation orders differ
// by ~ u sqrt(K) ~ 8e-6 on random signs; cuBLAS's tensor cores may truncate their additions,
// up to ~ 0.04 u K ~ 4e-5, gemm_sweep.cuh; while one missing or wrong term of the K is
// ~ 1/sqrt(K) ~ 8e-3). A row whose launch throws fails with the reason; the others still run.

#include <foundry/bench/cublas.cuh>
#include <foundry/bench/harness.cuh>
#include <foundry/bench/random.cuh>
#include <foundry/gemm/gemm.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace bench = foundry::bench;
using foundry::matrix_op;
using foundry::matrix_view;

using shape = bench::gemm_shape;
// cuBLAS, the peer row: bench::cublas_gemm_row_major (include/foundry/bench/cublas.cuh).

template <class In>
struct skinny_data {
  explicit skinny_data(const shape& shape_)
      : sh(shape_),
        a(static_cast<std::size_t>(sh.m * sh.k), s),
        b(static_cast<std::size_t>(sh.k * sh.n), s),
        c(static_cast<std::size_t>(sh.m * sh.n), s, std::numeric_limits<float>::quiet_NaN()),
        reference(static_cast<std::size_t>(sh.m * sh.n), s) {
    bench::fill_uniform(a.span(), -1.0, 1.0, bench::default_seed, s);
    bench::fill_uniform(b.span(), -1.0, 1.0, bench::default_seed + 1, s);
    bench::cublas_gemm_row_major(a.data(), b.data(), reference.data(), sh, s);
  }

  [[nodiscard]] foundry::gemm_problem<In, float> problem() {
    return foundry::make_gemm_problem<In, float>(1.0f, matrix_view<const In>{a.data(), sh.m, sh.k, sh.k},
                                                 matrix_op::none, matrix_view<const In>{b.data(), sh.k, sh.n, sh.n},
                                                 matrix_op::none, 0.0f, matrix_view<float>{c.data(), sh.m, sh.n, sh.n});
  }

  // The large operand, read once; flops for the label only.
  [[nodiscard]] bench::work work() const {
    const double large = static_cast<double>(sh.k) * static_cast<double>(sh.m > sh.n ? sh.m : sh.n);
    return {large * sizeof(In), 0.0,
            2.0 * static_cast<double>(sh.m) * static_cast<double>(sh.n) * static_cast<double>(sh.k)};
  }

  foundry::stream s;
  shape sh;
  foundry::device_buffer<In> a;
  foundry::device_buffer<In> b;
  foundry::device_buffer<float> c;
  foundry::device_buffer<float> reference;
};

// ||c - reference||_F / ||reference||_F on the host (C is at most 8 x 16384 floats).
template <class In>
double relative_error(skinny_data<In>& d) {
  std::vector<float> got(d.c.size()), ref(d.reference.size());
  d.c.copy_to_host(cuda::std::span<float>(got.data(), got.size()), d.s);
  d.reference.copy_to_host(cuda::std::span<float>(ref.data(), ref.size()), d.s);
  foundry::synchronize(d.s);
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = static_cast<double>(got[i]) - static_cast<double>(ref[i]);  // NaN stays NaN: fails
    diff += e * e;
    norm += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
  }
  return std::sqrt(diff) / std::sqrt(norm);
}

template <class In>
void bm_foundry(benchmark::State& state, shape sh) {
  skinny_data<In> d(sh);
  const foundry::gemm_problem<In, float> p = d.problem();
  const foundry::gemm_plan plan = foundry::make_gemm_plan(p);
  if (!bench::expect(state, plan.rung == foundry::gemm_rung::skinny,
                     "foundry::gemm does not take the skinny rung here: " + plan.describe()))
    return;
  // A workspace for the split-K partial sums, kept across samples (as a warm pool would).
  foundry::device_buffer<float> workspace(plan.workspace_bytes / sizeof(float), d.s);
  auto enqueue = [&](cuda::stream_ref st) { foundry::gemm_kernels::launch_skinny<In>(plan, p, workspace.span(), st); };
  try {
    enqueue(d.s);
  } catch (const std::exception& e) {
    bench::expect(state, false, std::string("launch_skinny threw: ") + e.what());
    return;
  }
  const double error = relative_error(d);
  const double tolerance = std::is_same_v<In, float> ? 1e-4 : 1e-3;
  state.counters["rel_error"] = error;
  if (!bench::expect(
          state, error <= tolerance,
          "relative Frobenius error against cuBLAS " + std::to_string(error) + " exceeds " + std::to_string(tolerance)))
    return;
  bench::measure(state, d.s, d.work(), enqueue, bench::options{});
}

template <class In>
void bm_cublas(benchmark::State& state, shape sh) {
  skinny_data<In> d(sh);
  bench::measure(
      state, d.s, d.work(),
      [&](cuda::stream_ref st) { bench::cublas_gemm_row_major(d.a.data(), d.b.data(), d.c.data(), d.sh, st); },
      bench::options{});
}

template <class In>
void add(const std::string& precision) {
  constexpr std::int64_t large = 16384;
  for (const shape& sh :
       {shape{1, large, large}, shape{8, large, large}, shape{large, 1, large}, shape{large, 8, large}}) {
    benchmark::RegisterBenchmark(("gemm_skinny_" + precision + "/foundry/" + sh.name()).c_str(), bm_foundry<In>, sh)
        ->Apply(bench::configure)
        ->Iterations(20);
    benchmark::RegisterBenchmark(("gemm_skinny_" + precision + "/cublas/" + sh.name()).c_str(), bm_cublas<In>, sh)
        ->Apply(bench::configure)
        ->Iterations(20);
  }
}

const bool registered = [] {
  add<float>("fp32");
  add<__nv_bfloat16>("bf16");
  add<__half>("fp16");
  return true;
}();

}  // namespace

FOUNDRY_BENCH_MAIN()
