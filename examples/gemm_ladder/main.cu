// gemm_ladder: one matrix product, every rung of foundry's GEMM ladder that this GPU has,
// each checked and timed. The pattern to copy:
//
//   1. describe the matrices with matrix_view (pointer, rows, cols, leading dimension, layout)
//   2. call foundry::gemm (it picks the fastest rung) or foundry::gemm_with (a named rung),
//      both asynchronous on an explicit stream
//   3. time GPU work with gpu_timer (CUDA events on the same stream), not with a host clock
//   4. check against a CPU reference with a tolerance derived from the arithmetic
//
// C = A B with A and B 2048 × 2048 (row-major, random in [-1, 1), fixed seed), fp32 and then
// bf16 inputs (fp32 accumulation and C). C is filled with NaN before each rung, so an entry a
// rung fails to write cannot pass with the previous rung's value. Each result is checked at 512
// random entries against a double-precision dot product of the same (rounded) inputs. The
// products are exact in fp32 for bf16 inputs and each fp32 addition rounds to within 2^-24 of
// its result, so the sum is off by at most about K · 2^-24 · sum_p |a_ip b_pj| (the standard
// worst-case bound); the tolerance is twice that, for tensor cores, which align and truncate
// their addends. Typical errors are far smaller (about sqrt(K) · 2^-24 of the sum). This catches
// a missing K slice, stage or tile; it cannot see one missing product (about 1/K of the sum,
// twice the tolerance on average) reliably, nor a bug confined to a few unsampled entries:
// tests/ compares every entry against a reference.
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include <foundry/foundry.cuh>
#include <foundry/gemm/gemm.cuh>

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

namespace {

constexpr std::int64_t n = 2048;  // M = N = K
constexpr int samples = 512;

// Largest |C(i, j) - reference| / bound over `samples` random entries (above 1: wrong).
// `a` and `b` hold the inputs exactly as the GPU read them (bf16 already rounded).
double worst_error_ratio(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
  double worst = 0.0;
  for (int s = 0; s < samples; ++s) {
    const std::int64_t i = pick(rng), j = pick(rng);
    double exact = 0.0, magnitude = 0.0;
    for (std::int64_t p = 0; p < n; ++p) {
      const double term = double(a[i * n + p]) * double(b[p * n + j]);
      exact += term;
      magnitude += std::fabs(term);
    }
    const double bound = double(n) * std::ldexp(1.0, -23) * magnitude + 1e-30;
    const double ratio = std::fabs(double(c[i * n + j]) - exact) / bound;
    if (std::isnan(ratio)) return std::numeric_limits<double>::infinity();  // NaN is a failure
    worst = std::max(worst, ratio);
  }
  return worst;
}

// Runs `rung` once to warm up and once timed; copies C back; prints one line. Returns false
// when the sampled entries exceed the bound.
template <class In>
bool run_rung(foundry::gemm_rung rung, const foundry::device_buffer<In>& a, const foundry::device_buffer<In>& b,
              foundry::device_buffer<float>& c, const std::vector<float>& a_host, const std::vector<float>& b_host,
              const char* precision, foundry::stream& s) {
  using foundry::matrix_op;
  const foundry::matrix_view<const In> va{a.data(), n, n, n, foundry::matrix_layout::row_major};
  const foundry::matrix_view<const In> vb{b.data(), n, n, n, foundry::matrix_layout::row_major};
  const foundry::matrix_view<float> vc{c.data(), n, n, n, foundry::matrix_layout::row_major};
  foundry::fill(c.span(), std::numeric_limits<float>::quiet_NaN(), s);                    // beta = 0: C is not read
  foundry::gemm_with(rung, 1.0f, va, matrix_op::none, vb, matrix_op::none, 0.0f, vc, s);  // warm-up
  foundry::gpu_timer timer(s);
  timer.start();
  foundry::gemm_with(rung, 1.0f, va, matrix_op::none, vb, matrix_op::none, 0.0f, vc, s);
  timer.stop();
  std::vector<float> c_host(static_cast<std::size_t>(n * n));
  c.copy_to_host(cuda::std::span<float>(c_host), s);
  s.synchronize();
  const double ms = timer.elapsed_ms();
  const double worst = worst_error_ratio(a_host, b_host, c_host);
  std::printf("  %-5s %-17s %9.3f ms %8.2f TFLOP/s   worst error / bound %.3f\n", precision,
              foundry::gemm_rung_name(rung), ms, 2.0 * n * n * n / (ms * 1e-3) / 1e12, worst);
  return worst <= 1.0;
}

// Uploads A and B as `In`, runs each rung of `rungs` that the device supports for `In`, and
// says which one foundry::gemm would pick. `a_exact` and `b_exact`: the inputs as the GPU
// reads them, in float, for the reference.
template <class In>
bool climb(std::initializer_list<foundry::gemm_rung> rungs, const std::vector<In>& a_in, const std::vector<In>& b_in,
           const std::vector<float>& a_exact, const std::vector<float>& b_exact, const char* precision, int cc,
           foundry::device_buffer<float>& c, foundry::stream& s) {
  foundry::device_buffer<In> a(a_in.size(), s), b(b_in.size(), s);
  a.copy_from_host(cuda::std::span<const In>(a_in), s);
  b.copy_from_host(cuda::std::span<const In>(b_in), s);
  bool ok = true;
  for (const foundry::gemm_rung rung : rungs) {
    if (foundry::gemm_rung_supports<In, float>(rung, cc)) ok &= run_rung(rung, a, b, c, a_exact, b_exact, precision, s);
  }
  std::printf("  foundry::gemm picks %s for %s\n", foundry::gemm_rung_name(foundry::best_gemm_rung<In, float>()),
              precision);
  return ok;
}

}  // namespace

int main() {
  if (!foundry::has_device()) {
    std::fprintf(stderr, "gemm_ladder: no usable CUDA device: this example needs a GPU\n");
    return 2;
  }
  try {
    using foundry::gemm_rung;
    const int cc = foundry::get_device_properties().compute_capability();
    foundry::stream s;

    std::vector<float> a_host(static_cast<std::size_t>(n * n)), b_host(a_host.size());
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (auto& x : a_host) x = dist(rng);
    for (auto& x : b_host) x = dist(rng);

    foundry::device_buffer<float> c(a_host.size(), s);
    bool ok = true;
    std::printf("gemm_ladder: C = A B, %lld x %lld x %lld, sm_%d\n", static_cast<long long>(n),
                static_cast<long long>(n), static_cast<long long>(n), cc);

    // fp32 inputs: the CUDA-core rungs.
    ok &= climb({gemm_rung::naive, gemm_rung::shared_tiled, gemm_rung::register_blocked}, a_host, b_host, a_host,
                b_host, "fp32", cc, c, s);

    // bf16 inputs: round once on the host, so that the reference sees exactly what the GPU reads.
    std::vector<__nv_bfloat16> a16(a_host.size()), b16(b_host.size());
    std::vector<float> a_rounded(a_host.size()), b_rounded(b_host.size());
    for (std::size_t i = 0; i < a_host.size(); ++i) {
      a16[i] = __float2bfloat16(a_host[i]);
      b16[i] = __float2bfloat16(b_host[i]);
      a_rounded[i] = __bfloat162float(a16[i]);
      b_rounded[i] = __bfloat162float(b16[i]);
    }
    ok &= climb({gemm_rung::naive, gemm_rung::tensor_core, gemm_rung::wgmma}, a16, b16, a_rounded, b_rounded, "bf16",
                cc, c, s);

    if (!ok) {
      std::fprintf(stderr, "gemm_ladder: a rung exceeded the error bound\n");
      return 1;
    }
    std::printf("gemm_ladder: every rung matched the reference\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "gemm_ladder: %s\n", e.what());
    return 3;
  }
}
