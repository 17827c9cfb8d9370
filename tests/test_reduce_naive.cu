// The naive reduction ladder (foundry::naive, rungs 1-4): each rung sums like
// the CPU reference at odd sizes and rejects bad arguments.
//
// Float tolerance: gamma(n-1) * sum|x_i| with gamma(k) = k*u / (1 - k*u), u = 2^-24,
// the worst-case error of any summation order (Higham, 4.2); the atomic rung's
// order changes from run to run but stays inside that bound. Integer sums are exact.
#include <catch2/catch.hpp>

#include <foundry/naive/reduce.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

using namespace foundry::test;

namespace {

enum class rung { atomic, interleaved, sequential, warp_shuffle };

template <class T>
void run_rung(rung r, const foundry::device_buffer<T>& in, foundry::device_buffer<T>& out, cuda::stream_ref s) {
  switch (r) {
    case rung::atomic: foundry::naive::reduce_sum_atomic(in.span(), out.span(), s); break;
    case rung::interleaved: foundry::naive::reduce_sum_interleaved(in.span(), out.span(), s); break;
    case rung::sequential: foundry::naive::reduce_sum_sequential(in.span(), out.span(), s); break;
    case rung::warp_shuffle: foundry::naive::reduce_sum_warp_shuffle(in.span(), out.span(), s); break;
  }
}

const rung all_rungs[] = {rung::atomic, rung::interleaved, rung::sequential, rung::warp_shuffle};

}  // namespace

TEST_CASE("every naive rung sums floats within the summation error bound", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    const auto x = random_vector<float>(n, -1.0f, 1.0f, 31);
    const auto d_x = to_device(x, s);
    const auto ref = reference_sum(x);
    for (const rung r : all_rungs) {
      CAPTURE(n, static_cast<int>(r));
      auto d_out = poisoned_device_buffer<float>(1, s);
      run_rung(r, d_x, d_out, s);
      CHECK(std::fabs(to_host(d_out, s)[0] - ref.sum) <= float_sum_tolerance(n, ref.sum_abs));
    }
  }
}

TEST_CASE("every naive rung sums integers exactly", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    const auto x = random_vector<std::int32_t>(n, -1000, 1000, 32);
    const auto d_x = to_device(x, s);
    const auto expected = std::accumulate(x.begin(), x.end(), std::int64_t{0});
    for (const rung r : all_rungs) {
      CAPTURE(n, static_cast<int>(r));
      auto d_out = poisoned_device_buffer<std::int32_t>(1, s);
      run_rung(r, d_x, d_out, s);
      CHECK(to_host(d_out, s)[0] == expected);
    }
  }
}

TEST_CASE("naive reductions reject a null input with elements and an empty output") {
  cuda::std::span<float> null_input(static_cast<float*>(nullptr), 10);
  cuda::std::span<float> input(fake_pointer<float>(), 10);
  cuda::std::span<float> output(fake_pointer<float>(), 1);
  cuda::std::span<float> no_output(fake_pointer<float>(), 0);
  REQUIRE_THROWS_AS(foundry::naive::reduce_sum_atomic(null_input, output, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::reduce_sum_interleaved(null_input, output, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::reduce_sum_sequential(input, no_output, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::reduce_sum_warp_shuffle(input, no_output, unused_stream()), std::invalid_argument);
}

TEST_CASE("the atomic rung refuses the null stream before it enqueues anything") {
  // Its memset of the output comes before the launch; on the null handle it would land on the
  // legacy default stream (a cuda_error on a machine without a GPU) before launch refused it.
  cuda::std::span<float> input(fake_pointer<float>(), 10);
  cuda::std::span<float> output(fake_pointer<float>(), 1);
  REQUIRE_THROWS_WITH(foundry::naive::reduce_sum_atomic(input, output, cuda::stream_ref{}),
                      Catch::Contains("null handle"));
}
