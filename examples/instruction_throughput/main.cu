// instruction_throughput: when the arithmetic is the bottleneck, count instructions.
//
// Part 1, a loop with a trip count known only at run time, unrolled or not:
//   1. #pragma unroll 1: each FMA comes with a counter increment, a compare and a branch
//   2. #pragma unroll 16: the same FMAs, one increment, compare and branch per 16 of them
//   The FMAs and their order are the same, so both match the CPU exactly.
//
// Part 2, expf(x) + sinf(x) + x / y against the hardware approximations __expf, __sinf
// and __fdividef (what --use_fast_math substitutes everywhere). The special function unit
// answers in a few instructions; the accurate versions take tens. The table shows what
// the speed costs: the largest error against a double-precision CPU result, relative to
// the size of the terms (|e^x| + |sin x| + |x/y|).
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include "../tour/tour.cuh"

#include <exception>
#include <random>

namespace {

constexpr int evaluations = 8;  // of the expression, per element

// [snippet:unroll]
__global__ void chain_rolled(const float* in, float* out, std::size_t n, int steps) {
  for (auto i : foundry::grid_stride_range(n)) {
    float x = in[i];
#pragma unroll 1
    for (int k = 0; k < steps; ++k) x = fmaf(x, 0.999f, 0.001f);
    out[i] = x;
  }
}
__global__ void chain_unrolled(const float* in, float* out, std::size_t n, int steps) {
  for (auto i : foundry::grid_stride_range(n)) {
    float x = in[i];
#pragma unroll 16
    for (int k = 0; k < steps; ++k) x = fmaf(x, 0.999f, 0.001f);
    out[i] = x;
  }
}
// [/snippet]

// [snippet:intrinsics]
// x in [-pi, pi], y in [1, 2]: the ranges where __sinf and __fdividef are documented.
__global__ void terms_accurate(const float* x, const float* y, float* out, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) {
    float sum = 0.0f;
    for (int k = 1; k <= evaluations; ++k) {
      const float xk = x[i] * (float(k) / evaluations);
      sum += expf(xk) + sinf(xk) + xk / y[i];
    }
    out[i] = sum;
  }
}
__global__ void terms_intrinsics(const float* x, const float* y, float* out, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) {
    float sum = 0.0f;
    for (int k = 1; k <= evaluations; ++k) {
      const float xk = x[i] * (float(k) / evaluations);
      sum += __expf(xk) + __sinf(xk) + __fdividef(xk, y[i]);
    }
    out[i] = sum;
  }
}
// [/snippet]

}  // namespace

int main(int argc, char** argv) {
  if (!tour::has_gpu("instruction_throughput")) return 2;
  try {
    const tour::options opt = tour::parse_options(argc, argv);
    const std::size_t n = opt.small ? (std::size_t{1} << 16) : (std::size_t{1} << 22);
    const int steps = 1000;  // a run-time value: the compiler cannot unroll it fully
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f), angle(-3.14159f, 3.14159f), divisor(1.0f, 2.0f);
    std::vector<float> in(n), x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
      in[i] = unit(rng);
      x[i] = angle(rng);
      y[i] = divisor(rng);
    }
    foundry::stream s;
    foundry::device_buffer<float> d_in = tour::to_device(in, s), d_x = tour::to_device(x, s),
                                  d_y = tour::to_device(y, s), d_out(n, s);
    const foundry::launch_config c = foundry::make_launch_config_1d(n, 256);

    std::vector<tour::row> loop_rows, math_rows;
    using chain_t = void (*)(const float*, float*, std::size_t, int);
    const std::pair<const char*, chain_t> chains[] = {{"#pragma unroll 1", chain_rolled},
                                                      {"#pragma unroll 16", chain_unrolled}};
    for (const auto& v : chains) {
      foundry::fill(d_out.span(), -1.0f, s);  // poison
      const double ms = tour::median_ms(
          s, [&](cuda::stream_ref t) { foundry::launch(t, c, v.second, d_in.data(), d_out.data(), n, steps); });
      // Every 61st element: all of them would take the CPU seconds.
      const auto want = [&](std::size_t i) {
        float v = in[i];
        for (int k = 0; k < steps; ++k) v = std::fma(v, 0.999f, 0.001f);
        return v;
      };
      if (!tour::matches_every("instruction_throughput", v.first, tour::to_host(d_out, s), 61, want)) return 1;
      loop_rows.push_back({v.first, ms, 2.0 * steps * n, "same FMAs; loop overhead per FMA 1 vs 1/16"});
    }

    // Tolerances, relative to the size of the terms S = sum of |e^x| + |sin x| + |x/y| (at
    // least 8 here: e^x alone is near 1 where the other two are near 0). The float sum of
    // the 24 terms rounds 23 times, each by at most 2^-24 of a partial sum <= S: 1.37e-6 S.
    // The accurate functions add at most 2 ulp (2.4e-7) each, the division none (CUDA
    // Programming Guide, "Mathematical Functions"): 1.6e-6 S in all, bound 2e-6. The
    // intrinsics (its "Intrinsic Functions" table): __expf 2 + floor(|1.173 x|) = 5 ulp for
    // |x| <= pi (6e-7 S), __sinf an absolute 2^-21.41 on [-pi, pi] (8 x 3.6e-7 <= 3.6e-7 S),
    // __fdividef 2 ulp for y in [1, 2] (2.4e-7 S): 2.6e-6 S in all, bound 1e-5.
    const std::pair<const char*, void (*)(const float*, const float*, float*, std::size_t)> maths[] = {
        {"expf, sinf, x / y", terms_accurate}, {"__expf, __sinf, __fdividef", terms_intrinsics}};
    const double tolerance[] = {2e-6, 1e-5};
    // The double-precision reference and the size of its terms, once for both variants.
    std::vector<double> want(n), size(n);
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0.0, magnitude = 0.0;
      for (int k = 1; k <= evaluations; ++k) {
        const double xk = double(x[i] * (float(k) / evaluations));  // the same float argument
        const double e = std::exp(xk), sine = std::sin(xk), quotient = xk / y[i];
        sum += e + sine + quotient;
        magnitude += e + std::fabs(sine) + std::fabs(quotient);
      }
      want[i] = sum;
      size[i] = magnitude;
    }
    for (int v = 0; v < 2; ++v) {
      foundry::fill(d_out.span(), -1.0f, s);  // poison
      const double ms = tour::median_ms(s, [&](cuda::stream_ref t) {
        foundry::launch(t, c, maths[v].second, d_x.data(), d_y.data(), d_out.data(), n);
      });
      const std::vector<float> got = tour::to_host(d_out, s);
      double worst = 0.0;
      for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(got[i] - want[i]) / size[i]);
      if (!(worst <= tolerance[v])) {
        std::fprintf(stderr, "instruction_throughput: %s: relative error %.3g above %.0e\n", maths[v].first, worst,
                     tolerance[v]);
        return 1;
      }
      char metric[64];
      std::snprintf(metric, sizeof metric, "max error %.2e (bound %.0e)", worst, tolerance[v]);
      math_rows.push_back({maths[v].first, ms, 3.0 * evaluations * n, metric});
    }

    std::printf("instruction_throughput: %zu elements\n", n);
    tour::print_table("a 1000-step FMA chain, trip count known at run time", "GFLOP/s", "why", loop_rows);
    tour::print_table("e^x + sin x + x/y, 8 times per element", "Gcall/s", "accuracy vs double", math_rows);
    std::printf("\nevery variant matches the CPU (the loops exactly, the maths within its bound)\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "instruction_throughput: %s\n", e.what());
    return 3;
  }
}
