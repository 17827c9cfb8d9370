// The public foundry::gemm with 16-bit inputs: the dispatch reaches the fastest 16-bit rung of
// the device (wgmma on compute capability 9.0 when this binary has sm_90a code, which
// tests/CMakeLists.txt asks for; else the mma.sync tensor-core rung, sm_80+) and gives the right
// result in every layout; the plan (host only) and the packing of misaligned 16-bit operands
// (gemm_pack.cuh: plan on the host, copies and results on the GPU). The rungs themselves are tested in test_gemm_wgmma.cu and
// test_gemm_tensor_core.cu; the fp32 rungs and the argument checks in test_gemm_fp32.cu.
#include <catch2/catch.hpp>

#include <foundry/gemm/gemm.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/gemm_plan_support.cuh>
#include <support/gemm_test_case.cuh>
#include <support/test_support.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

using foundry::matrix_layout;
using foundry::matrix_op;
using foundry::matrix_view;

namespace {

using foundry::test::from_float;
using foundry::test::to_float;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A dense m × n matrix in `layout` (no padding) of random 16-bit values.
template <class T>
std::vector<T> random_matrix(std::int64_t elements, std::uint64_t seed_id) {
  const auto values = foundry::test::random_vector<float>(static_cast<std::size_t>(elements), -1.0f, 1.0f, seed_id);
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = from_float<T>(values[i]);
  return out;
}

// The rung the dispatch should pick for 16-bit inputs on this device.
foundry::gemm_rung expected_16bit_rung() {
  const int cc = foundry::get_device_properties().compute_capability();
  return foundry::gemm_kernels::gemm_wgmma_available(cc) ? foundry::gemm_rung::wgmma : foundry::gemm_rung::tensor_core;
}

// 77 × 45 × 70: packed leading dimensions of 70, 45 or 77 elements are not multiples of 8, so
// on Hopper the wgmma rung hands most layouts to its mma.sync fallback; 96 × 80 × 64 keeps every
// leading dimension a multiple of 8 and runs the wgmma kernel in every layout.
struct dims {
  std::int64_t m, n, k;
};
constexpr dims ragged{77, 45, 70};
constexpr dims aligned{96, 80, 64};

template <class T>
void check_dispatch(matrix_layout la, matrix_op oa, matrix_layout lb, matrix_op ob, matrix_layout lc, dims d = ragged) {
  const std::int64_t m = d.m, n = d.n, k = d.k;
  foundry::stream s;
  const std::int64_t a_rows = oa == matrix_op::none ? m : k, a_cols = oa == matrix_op::none ? k : m;
  const std::int64_t b_rows = ob == matrix_op::none ? k : n, b_cols = ob == matrix_op::none ? n : k;
  const std::int64_t lda = la == matrix_layout::row_major ? a_cols : a_rows;
  const std::int64_t ldb = lb == matrix_layout::row_major ? b_cols : b_rows;
  const std::int64_t ldc = lc == matrix_layout::row_major ? n : m;
  const auto a = random_matrix<T>(m * k, 21);
  const auto b = random_matrix<T>(k * n, 22);
  const auto c0 = foundry::test::random_vector<float>(static_cast<std::size_t>(m * n), -1.0f, 1.0f, 23);
  auto da = foundry::test::to_device(a, s);
  auto db = foundry::test::to_device(b, s);
  auto dc = foundry::test::to_device(c0, s);
  const float alpha = 1.25f, beta = -0.5f;
  foundry::gemm(alpha, matrix_view<const T>{da.data(), a_rows, a_cols, lda, la}, oa,
                matrix_view<const T>{db.data(), b_rows, b_cols, ldb, lb}, ob, beta,
                matrix_view<float>{dc.data(), m, n, ldc, lc}, s);
  const auto got = foundry::test::to_host(dc, s);

  auto stored = [](std::int64_t r, std::int64_t c, std::int64_t ld, matrix_layout l) {
    return static_cast<std::size_t>(l == matrix_layout::row_major ? r * ld + c : c * ld + r);
  };
  auto op_a = [&](std::int64_t i, std::int64_t p) {
    return to_float(oa == matrix_op::none ? a[stored(i, p, lda, la)] : a[stored(p, i, lda, la)]);
  };
  auto op_b = [&](std::int64_t p, std::int64_t j) {
    return to_float(ob == matrix_op::none ? b[stored(p, j, ldb, lb)] : b[stored(j, p, ldb, lb)]);
  };
  // The reference uses the same 16-bit inputs, so only the fp32 accumulation differs:
  // products of 16-bit values are exact in fp32 and K = 70 sums round at most ~70 u
  // relative to sum |a||b| (u = 2^-24); 1e-4 of it is far above that and far below a
  // single wrong term (~1/70 of the sum).
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0.0, scale = 0.0;
      for (std::int64_t p = 0; p < k; ++p) {
        sum += double{op_a(i, p)} * op_b(p, j);
        scale += std::abs(double{op_a(i, p)} * op_b(p, j));
      }
      const double c_in = c0[stored(i, j, ldc, lc)];
      const double expected = alpha * sum + beta * c_in;
      scale = std::abs(alpha) * scale + std::abs(beta * c_in);
      wrong += std::abs(got[stored(i, j, ldc, lc)] - expected) <= 1e-4 * scale ? 0 : 1;
    }
  }
  CHECK(wrong == 0);
}

constexpr matrix_layout layouts[] = {matrix_layout::row_major, matrix_layout::col_major};
constexpr matrix_op ops[] = {matrix_op::none, matrix_op::transpose};

}  // namespace

TEST_CASE("gemm with bf16 inputs is dispatched to the fastest 16-bit rung and is correct in every layout", "[gpu]") {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  REQUIRE(foundry::best_gemm_rung<__nv_bfloat16, float>() == expected_16bit_rung());
  for (const dims d : {ragged, aligned})
    for (auto la : layouts)
      for (auto oa : ops)
        for (auto lb : layouts)
          for (auto ob : ops)
            for (auto lc : layouts) {
              INFO(d.m << "x" << d.n << "x" << d.k << " A " << int(la) << "/" << int(oa) << " B " << int(lb) << "/"
                       << int(ob) << " C " << int(lc));
              check_dispatch<__nv_bfloat16>(la, oa, lb, ob, lc, d);
            }
}

TEST_CASE("gemm with fp16 inputs is dispatched to the fastest 16-bit rung and is correct", "[gpu]") {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  REQUIRE(foundry::best_gemm_rung<__half, float>() == expected_16bit_rung());
  check_dispatch<__half>(matrix_layout::row_major, matrix_op::none, matrix_layout::row_major, matrix_op::none,
                         matrix_layout::row_major, aligned);
  check_dispatch<__half>(matrix_layout::col_major, matrix_op::transpose, matrix_layout::row_major, matrix_op::transpose,
                         matrix_layout::col_major, aligned);
  check_dispatch<__half>(matrix_layout::row_major, matrix_op::none, matrix_layout::row_major, matrix_op::none,
                         matrix_layout::row_major);
  check_dispatch<__half>(matrix_layout::col_major, matrix_op::transpose, matrix_layout::row_major, matrix_op::transpose,
                         matrix_layout::col_major);
}

TEST_CASE("gemm with 16-bit inputs and K = 0 sets C to beta * C", "[gpu]") {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  foundry::stream s;
  auto c = foundry::test::to_device(std::vector<float>(6, 2.0f), s);
  foundry::gemm(1.0f, matrix_view<const __nv_bfloat16>{nullptr, 2, 0, 0}, matrix_op::none,
                matrix_view<const __nv_bfloat16>{nullptr, 0, 3, 3}, matrix_op::none, 0.25f,
                matrix_view<float>{c.data(), 2, 3, 3}, s);
  CHECK(foundry::test::to_host(c, s) == std::vector<float>(6, 0.5f));
}

TEMPLATE_TEST_CASE("gemm with K = 0 sets C to beta * C whatever alpha, and leaves C untouched when beta = 1", "[gpu]",
                   float, __nv_bfloat16) {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  foundry::stream s;
  const matrix_view<const TestType> a{nullptr, 2, 0, 0};
  const matrix_view<const TestType> b{nullptr, 0, 3, 3};
  for (const float alpha : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), 1.0f}) {
    INFO("alpha " << alpha);
    auto c = foundry::test::to_device(std::vector<float>(6, 2.0f), s);
    foundry::gemm(alpha, a, matrix_op::none, b, matrix_op::none, 0.25f, matrix_view<float>{c.data(), 2, 3, 3}, s);
    CHECK(foundry::test::to_host(c, s) == std::vector<float>(6, 0.5f));
    for (const auto rung : {foundry::gemm_rung::naive, foundry::gemm_rung::skinny}) {
      foundry::gemm_with(rung, alpha, a, matrix_op::none, b, matrix_op::none, 2.0f,
                         matrix_view<float>{c.data(), 2, 3, 3}, s);
    }
    CHECK(foundry::test::to_host(c, s) == std::vector<float>(6, 2.0f));
  }
  // beta = 1: C = C, bit for bit (-0 stays -0, NaN stays NaN); nothing is enqueued.
  const std::vector<float> special{-0.0f, std::numeric_limits<float>::quiet_NaN(), 1.0f, -0.0f, 3.0f, -2.0f};
  auto c = foundry::test::to_device(special, s);
  foundry::gemm(std::numeric_limits<float>::infinity(), a, matrix_op::none, b, matrix_op::none, 1.0f,
                matrix_view<float>{c.data(), 2, 3, 3}, s);
  const auto after = foundry::test::to_host(c, s);
  CHECK(std::memcmp(after.data(), special.data(), special.size() * sizeof(float)) == 0);
}

TEMPLATE_TEST_CASE("gemm with alpha = 0 sets C to beta * C and reads neither A nor B", "[gpu]", float, __nv_bfloat16,
                   __half) {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  // A and B hold NaN: a product computed and then scaled by 0 would put NaN in C. 300 x 200 x 64
  // would take the fastest rung; 1 x 200 x 64 the skinny one.
  for (const std::int64_t m : {300, 1}) {
    const std::int64_t n = 200, k = 64;
    INFO(m << "x" << n << "x" << k);
    foundry::stream s;
    const TestType nan = from_float<TestType>(std::numeric_limits<float>::quiet_NaN());
    const auto a = foundry::test::to_device(std::vector<TestType>(static_cast<std::size_t>(m * k), nan), s);
    const auto b = foundry::test::to_device(std::vector<TestType>(static_cast<std::size_t>(k * n), nan), s);
    auto c = foundry::test::to_device(std::vector<float>(static_cast<std::size_t>(m * n), 2.0f), s);
    foundry::gemm(0.0f, matrix_view<const TestType>{a.data(), m, k, k}, matrix_op::none,
                  matrix_view<const TestType>{b.data(), k, n, n}, matrix_op::none, 0.25f,
                  matrix_view<float>{c.data(), m, n, n}, s);
    CHECK(foundry::test::to_host(c, s) == std::vector<float>(static_cast<std::size_t>(m * n), 0.5f));
    foundry::gemm_with(foundry::gemm_rung::naive, 0.0f, matrix_view<const TestType>{a.data(), m, k, k}, matrix_op::none,
                       matrix_view<const TestType>{b.data(), k, n, n}, matrix_op::none, 0.0f,
                       matrix_view<float>{c.data(), m, n, n}, s);
    CHECK(foundry::test::to_host(c, s) == std::vector<float>(static_cast<std::size_t>(m * n), 0.0f));
  }
}

// The plan: every host choice of foundry::gemm as a value, built without a GPU for a
// given SM count (132: the H200). The split counts are those the rungs' own split-K
// tests expect (test_gemm_fp32.cu, test_gemm_tensor_core.cu, test_gemm_wgmma.cu).
namespace {

template <class In>
foundry::gemm_problem<In, float> plan_problem(std::int64_t m, std::int64_t n, std::int64_t k) {
  foundry::gemm_problem<In, float> p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = reinterpret_cast<const In*>(std::uintptr_t{4096});
  p.lda = k;
  p.b = reinterpret_cast<const In*>(std::uintptr_t{8192});
  p.ldb = n;
  p.c = reinterpret_cast<float*>(std::uintptr_t{16384});
  p.ldc = n;
  return p;
}

}  // namespace

TEST_CASE("make_gemm_plan names the rung, tile, stages, residency and split of each rung", "[gemm][plan]") {
  namespace gk = foundry::gemm_kernels;
  using foundry::gemm_rung;
  const auto fp32 = plan_problem<float>(1024, 1024, 8192);
  const foundry::gemm_plan rb = foundry::make_gemm_plan(fp32, gemm_rung::register_blocked, 132);
  CHECK(rb.rung == gemm_rung::register_blocked);
  CHECK_FALSE(rb.fallback);
  CHECK((rb.block_m == 128 && rb.block_n == 128 && rb.block_k == 8 && rb.stages == 2 && rb.min_blocks_per_sm == 2));
  CHECK((rb.split_k == 4 && rb.k_per_split == 2048));  // 64 tiles for 264 slots
  CHECK(rb.workspace_bytes == 4u * 1024u * 1024u * sizeof(float));
  CHECK(rb.split_k == gk::register_blocked_split_k(fp32, 0, 132).splits);
  CHECK(std::string(rb.why).size() > 0);

  const foundry::gemm_plan one = foundry::make_gemm_plan(fp32, gemm_rung::register_blocked, 132, 1);
  CHECK((one.split_k == 1 && one.workspace_bytes == 0));
  CHECK(foundry::make_gemm_plan(fp32, gemm_rung::shared_tiled, 132).block_m == 32);
  CHECK(foundry::make_gemm_plan(fp32, gemm_rung::naive, 132).rung == gemm_rung::naive);

  const auto deep = plan_problem<__nv_bfloat16>(1024, 1024, 8192);
  const foundry::gemm_plan tc = foundry::make_gemm_plan(deep, gemm_rung::tensor_core, 132);
  CHECK((tc.rung == gemm_rung::tensor_core && !tc.fallback));
  CHECK((tc.block_m == 128 && tc.block_n == 256 && tc.block_k == 64 && tc.stages == 3 && tc.min_blocks_per_sm == 1));
  CHECK((tc.split_k == 4 && tc.k_per_split == 2048));  // 32 tiles for 132 SMs
  CHECK(tc.split_k == gk::tensor_core_split_k(1024, 1024, 8192, 0, 132).splits);

  const foundry::gemm_plan shallow =
      foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(8192, 8192, 1024), gemm_rung::tensor_core, 132);
  CHECK((shallow.block_n == 128 && shallow.min_blocks_per_sm == 2 && shallow.split_k == 1));

  const foundry::gemm_plan wg = foundry::make_gemm_plan(deep, gemm_rung::wgmma, 132);
  CHECK(wg.rung == gemm_rung::wgmma);
  CHECK((wg.block_m == 128 && wg.block_n == 256 && wg.block_k == 64 && wg.stages == 4 && wg.min_blocks_per_sm == 1));
  CHECK((wg.split_k == gk::wgmma_split_k(1024, 1024, 8192, 0, 132).splits && wg.split_k == 4));
  const foundry::gemm_plan wg8 = foundry::make_gemm_plan(deep, gemm_rung::wgmma, 132, 8);
  CHECK((wg8.split_k == 8 && wg8.k_per_split == 1024 && wg8.workspace_bytes == 8u * 1024u * 1024u * sizeof(float)));
}

namespace {
// A tuning written before issue 20, when GEMM policies named their residency blocks_per_sm.
struct old_residency_name : foundry::gemm_kernels::tensor_core_policy {
  static constexpr int blocks_per_sm = 2;
};
}  // namespace

TEST_CASE("GEMM policies name their residency min_blocks_per_sm, and an old blocks_per_sm is caught", "[gemm][plan]") {
  namespace gk = foundry::gemm_kernels;
  STATIC_REQUIRE(gk::register_blocked_default_policy::min_blocks_per_sm == 2);
  STATIC_REQUIRE(gk::tensor_core_policy::min_blocks_per_sm == 1);
  STATIC_REQUIRE(gk::tensor_core_shallow_k_policy::min_blocks_per_sm == 2);
  STATIC_REQUIRE(gk::wgmma_policy::min_blocks_per_sm == 1);
  STATIC_REQUIRE(!foundry::detail::has_blocks_per_sm<gk::register_blocked_default_policy>);
  STATIC_REQUIRE(!foundry::detail::has_blocks_per_sm<gk::tensor_core_shallow_k_policy>);
  STATIC_REQUIRE(!foundry::detail::has_blocks_per_sm<gk::tensor_core_fallback_policy>);
  STATIC_REQUIRE(!foundry::detail::has_blocks_per_sm<gk::wgmma_policy>);
  // plan_with_policy<old_residency_name> would not compile (static_assert).
  STATIC_REQUIRE(foundry::detail::has_blocks_per_sm<old_residency_name>);
}

TEST_CASE(
    "make_gemm_plan gives rung 3 its 32- or 64-row or column tile for C of 17 to 64 rows or columns, and 64-deep slices",
    "[gemm][plan]") {
  namespace gk = foundry::gemm_kernels;
  using foundry::gemm_rung;
  const foundry::device_properties h200 = foundry::test::h200_like(90);
  // 17 rows: past the skinny kernel (16), so rung 3, in 32-row tiles at 6 blocks a SM up to 32
  // rows, in 64-row tiles at 4 blocks a SM up to 64.
  for (const std::int64_t m : {17, 32, 33, 64}) {
    CAPTURE(m);
    const foundry::gemm_plan plan = foundry::make_gemm_plan(plan_problem<float>(m, 16384, 16384), h200);
    const bool short32 = m <= 32;
    CHECK((plan.rung == gemm_rung::register_blocked && plan.block_m == (short32 ? 32 : 64) && plan.block_n == 128));
    CHECK(plan.min_blocks_per_sm == (short32 ? 6 : 4));
    CHECK((short32 ? gk::plan_has_policy_tile<gk::register_blocked_short_m32_policy>(plan)
                   : gk::plan_has_policy_tile<gk::register_blocked_short_m_policy>(plan)));
    // The tile's reason (the plan itself may then copy a misaligned operand, and say so).
    CHECK(contains(gk::register_blocked_plan_for_shape(plan_problem<float>(m, 16384, 16384), 0, 132).why,
                   short32 ? "32-row tiles" : "64-row tiles"));
  }
  const foundry::gemm_plan tall = foundry::make_gemm_plan(plan_problem<float>(65, 16384, 16384), h200);
  CHECK((tall.rung == gemm_rung::register_blocked && tall.block_m == 128 && tall.min_blocks_per_sm == 2));
  // Its 32- and 64-column tiles for C of 17 to 64 columns and more than 64 rows.
  for (const std::int64_t n : {17, 32, 33, 64}) {
    CAPTURE(n);
    const foundry::gemm_plan plan = foundry::make_gemm_plan(plan_problem<float>(16384, n, 16384), h200);
    const bool short32 = n <= 32;
    CHECK((plan.rung == gemm_rung::register_blocked && plan.block_m == 128 && plan.block_n == (short32 ? 32 : 64)));
    CHECK((short32 ? gk::plan_has_policy_tile<gk::register_blocked_short_n32_policy>(plan)
                   : gk::plan_has_policy_tile<gk::register_blocked_short_n_policy>(plan)));
    // The tile's reason (the plan itself may then copy a misaligned operand, and say so).
    CHECK(contains(gk::register_blocked_plan_for_shape(plan_problem<float>(16384, n, 16384), 0, 132).why,
                   short32 ? "32-column tiles" : "64-column tiles"));
  }
  CHECK(foundry::make_gemm_plan(plan_problem<float>(16384, 65, 16384), h200).block_n == 128);
  // Where a row tile and a column tile both fit, the row tile (on one SM, so that one block
  // fills it).
  CHECK(gk::plan_has_policy_tile<gk::register_blocked_short_m_policy>(
      gk::register_blocked_plan_for_shape(plan_problem<float>(64, 40, 512), 0, 1)));
  CHECK(gk::plan_has_policy_tile<gk::register_blocked_short_m32_policy>(
      gk::register_blocked_plan_for_shape(plan_problem<float>(20, 20, 512), 0, 1)));
  CHECK(gk::plan_has_policy_tile<gk::register_blocked_short_n_policy>(
      gk::register_blocked_plan_for_shape(plan_problem<float>(100, 40, 512), 0, 1)));
  CHECK(gk::plan_has_policy_tile<gk::register_blocked_short_n32_policy>(
      gk::register_blocked_plan_for_shape(plan_problem<float>(100, 20, 512), 0, 1)));
  // Fewer blocks than SMs in those tiles: 32 x 32 tiles. 608 x 118 x 51: 5 tiles of 128 x 128,
  // K too short to split; 76 of 32 x 32. 1492 x 37 x 139: 12 tiles of 128 x 64 in 2 slices; 94
  // of 32 x 32 in 2 slices. 183 x 1381 x 19: 22 tiles; 264.
  for (const auto& [m, n, k, splits] : std::vector<std::array<std::int64_t, 4>>{
           {608, 118, 51, 1}, {1492, 37, 139, 2}, {183, 1381, 19, 1}, {64, 40, 512, 32}, {1110, 610, 2, 1}}) {
    CAPTURE(m, n, k);
    const foundry::gemm_plan plan = foundry::make_gemm_plan(plan_problem<float>(m, n, k), h200);
    CHECK(gk::plan_has_policy_tile<gk::register_blocked_small_policy>(plan));
    CHECK((plan.block_m == 32 && plan.block_n == 32 && plan.min_blocks_per_sm == 8 && plan.split_k == splits));
    CHECK(std::string(plan.why).find("32 x 32 tiles") != std::string::npos);
  }
  // K too short to split and 83 blocks of 128 x 128: 32 x 32 (1324 of them).
  CHECK(gk::plan_has_policy_tile<gk::register_blocked_small_policy>(
      foundry::make_gemm_plan(plan_problem<float>(117, 10579, 22), h200)));
  // Enough blocks in the larger tiles: 5789 x 645 x 1 has 276 of 128 x 128; 128 x 1024 x 16384
  // 8 in 33 slices (264 blocks), 102 x 1461 x 554 12 in 18 (216 blocks): over half the SMs, and
  // K long enough to split.
  CHECK(gk::plan_has_policy_tile<gk::register_blocked_default_policy>(
      foundry::make_gemm_plan(plan_problem<float>(128, 1024, 16384), h200)));
  CHECK(gk::plan_has_policy_tile<gk::register_blocked_default_policy>(
      foundry::make_gemm_plan(plan_problem<float>(102, 1461, 554), h200)));
  CHECK(gk::plan_has_policy_tile<gk::register_blocked_default_policy>(
      foundry::make_gemm_plan(plan_problem<float>(5789, 645, 1), h200)));
  // 1950 x 23 x 670: 16 tiles of 128 x 32 on 792 slots, K (at least deep_k_from) in 28 slices
  // of 24 (at least 16 deep); 608 x 118 x 51, K under deep_k_from, keeps slices of at least 64.
  const foundry::gemm_plan few_tiles = foundry::make_gemm_plan(plan_problem<float>(1950, 23, 670), h200);
  CHECK((few_tiles.block_n == 32 && few_tiles.split_k == 28 && few_tiles.k_per_split == 24));
  CHECK(foundry::make_gemm_plan(plan_problem<float>(608, 118, 51), h200).split_k == 1);
  // Few 32 x 32 tiles (at most a quarter of the SMs) and K of at least 64: slices as shallow as
  // one step of 8. 25 x 176 x 187: 6 tiles in 12 slices of 16; 301 x 1 x 87 (rung 3, as a
  // product under 2 MiB): 10 tiles in 6 of 16; 9 x 570 x 26 (18 tiles), K under 64: one slice.
  for (const auto& [m, n, k, splits, depth] :
       std::vector<std::array<std::int64_t, 5>>{{25, 176, 187, 12, 16}, {301, 1, 87, 6, 16}, {9, 570, 26, 1, 32}}) {
    CAPTURE(m, n, k);
    const foundry::gemm_plan plan = foundry::make_gemm_plan(plan_problem<float>(m, n, k), h200);
    CHECK(gk::plan_has_policy_tile<gk::register_blocked_small_policy>(plan));
    CHECK((plan.split_k == splits && plan.k_per_split == depth));
  }
  STATIC_REQUIRE(gk::register_blocked_small_policy::few_tiles_min_k_per_split == 8);
  STATIC_REQUIRE(gk::register_blocked_default_policy::few_tiles_min_k_per_split == 64);
  // 128 x 1024 x 16384: C of 2^17 elements is within max_splits_max_c_elements, so the split
  // fills the 264 slots (33 slices of 504) instead of stopping at 16.
  const foundry::gemm_plan short_c = foundry::make_gemm_plan(plan_problem<float>(128, 1024, 16384), h200);
  CHECK((short_c.split_k == 33 && short_c.k_per_split == 504));
  // The committed shapes plan as before: 1024 x 1024 x 8192 in 4 slices of 2048, 4096^3 unsplit.
  const foundry::gemm_plan deep = foundry::make_gemm_plan(plan_problem<float>(1024, 1024, 8192), h200);
  CHECK((deep.split_k == 4 && deep.k_per_split == 2048));
  CHECK(foundry::make_gemm_plan(plan_problem<float>(4096, 4096, 4096), h200).split_k == 1);
  // A policy without min_k_per_split keeps the tensor-core rungs' 512.
  STATIC_REQUIRE(gk::min_k_per_split_of<gk::tensor_core_policy> == gk::default_min_k_per_split);
  STATIC_REQUIRE(gk::min_k_per_split_of<gk::register_blocked_default_policy> == 64);
}

TEST_CASE("make_gemm_plan gives rung 3 a half tile where the throughput model puts it clearly faster", "[gemm][plan]") {
  namespace gk = foundry::gemm_kernels;
  const foundry::device_properties h200 = foundry::test::h200_like(90);
  // 4228 x 263 x 2646: 34 x 3 tiles of 128 x 128 (263 columns padded to 384) in 2 slices, 204
  // blocks on 132 SMs; 34 x 5 of 128 x 64 in 3 slices (510 blocks of 528 slots) is modelled at
  // 0.77 of that. 563 x 2426 x 2931: 5 x 19 in 2 slices, or 9 x 19 of 64 x 128 in 3.
  const foundry::gemm_plan narrow = foundry::make_gemm_plan(plan_problem<float>(4228, 263, 2646), h200);
  CHECK(gk::plan_has_policy_tile<gk::register_blocked_short_n_policy>(narrow));
  CHECK((narrow.split_k == 3 && narrow.k_per_split == 888));
  // The tile's reason (the plan itself may then copy a misaligned operand, and say so).
  CHECK(contains(gk::register_blocked_plan_for_shape(plan_problem<float>(4228, 263, 2646), 0, 132).why,
                 "64-column tiles: modelled"));
  const foundry::gemm_plan short_m = foundry::make_gemm_plan(plan_problem<float>(563, 2426, 2931), h200);
  CHECK(gk::plan_has_policy_tile<gk::register_blocked_short_m_policy>(short_m));
  CHECK((short_m.split_k == 3 && short_m.k_per_split == 984));
  CHECK(contains(gk::register_blocked_plan_for_shape(plan_problem<float>(563, 2426, 2931), 0, 132).why,
                 "64-row tiles: modelled"));
  const auto p = plan_problem<float>(4228, 263, 2646);
  CHECK(gk::register_blocked_modelled_us(narrow, p, 132) <=
        gk::register_blocked_wave_policy::clear_gain *
            gk::register_blocked_modelled_us(gk::register_blocked_plan(p, 0, 132), p, 132));
  // More slices must be modelled clearly faster too (each is a copy of C): 415 x 21352 x 39579
  // once took 8 slices of 64 x 128 (283 MB of workspace) for 0.03% of modelled time.
  const foundry::gemm_plan wide_c = foundry::make_gemm_plan(plan_problem<float>(415, 21352, 39579), h200);
  CHECK((gk::plan_has_policy_tile<gk::register_blocked_short_m_policy>(wide_c) && wide_c.split_k == 1));
  // A split asked for keeps the shape's tile.
  CHECK(gk::plan_has_policy_tile<gk::register_blocked_default_policy>(gk::register_blocked_plan_for_shape(p, 2, 132)));
  // The committed shapes, products the model puts within 0.92 of 128 x 128, and products under
  // 2^31 FLOPs (654 x 3234 x 130: latency-bound steps the model does not see) keep 128 x 128.
  for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{{4096, 4096, 4096},
                                                                        {1024, 1024, 8192},
                                                                        {8192, 8192, 1024},
                                                                        {1000, 1000, 12000},
                                                                        {9204, 3883, 237},
                                                                        {16384, 16384, 8},
                                                                        {654, 3234, 130},
                                                                        {102, 1461, 554}}) {
    CAPTURE(m, n, k);
    CHECK(gk::plan_has_policy_tile<gk::register_blocked_default_policy>(
        foundry::make_gemm_plan(plan_problem<float>(m, n, k), h200)));
  }
}

TEST_CASE("make_gemm_plan takes rung 4 where the wgmma rung cannot describe the operands", "[gemm][plan]") {
  using foundry::gemm_rung;
  auto p = plan_problem<__nv_bfloat16>(96, 80, 64);
  p.lda = 68;  // not a multiple of 8 elements: no TMA, no cp.async
  const foundry::gemm_plan odd = foundry::make_gemm_plan(p, gemm_rung::wgmma, 132);
  CHECK((odd.rung == gemm_rung::tensor_core && odd.fallback && odd.split_k == 1));
  CHECK(foundry::make_gemm_plan(p, gemm_rung::tensor_core, 132).fallback);

  // A deep K on the fallback splits as the fast kernel would: 2 tiles of 64 x 64 for 132
  // SMs want 66 slices, capped at 16 of 736 (a multiple of block_k 32).
  auto deep = plan_problem<__nv_bfloat16>(82, 14, 11373);
  deep.lda = 11373;
  const foundry::gemm_plan split = foundry::make_gemm_plan(deep, gemm_rung::wgmma, 132);
  CHECK((split.fallback && split.split_k == 16 && split.k_per_split == 736));
  CHECK(split.workspace_bytes == 16u * 82u * 14u * sizeof(float));
  CHECK(foundry::make_gemm_plan(deep, gemm_rung::tensor_core, 132, 3).split_k == 3);

  p.lda = 64;
  p.k = 0;  // TMA needs K >= 1; rung 4's fast kernel takes it
  const foundry::gemm_plan empty_k = foundry::make_gemm_plan(p, gemm_rung::wgmma, 132);
  CHECK((empty_k.rung == gemm_rung::tensor_core && !empty_k.fallback && empty_k.split_k == 1));
}

TEST_CASE("make_gemm_plan refuses a rung that does not handle the types", "[gemm][plan]") {
  CHECK_THROWS_AS(
      foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(64, 64, 64), foundry::gemm_rung::register_blocked, 132),
      std::invalid_argument);
  CHECK_THROWS_AS(foundry::make_gemm_plan(plan_problem<float>(64, 64, 64), foundry::gemm_rung::wgmma, 132),
                  std::invalid_argument);
}

TEST_CASE("gemm_plan::describe prints every choice on one line", "[gemm][plan]") {
  const foundry::gemm_plan plan =
      foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(1024, 1024, 8192), foundry::gemm_rung::wgmma, 132);
  const std::string line = plan.describe();
  INFO(line);
  CHECK(line.rfind("wgmma 128x256x64, 4 stages, 1 block/SM, split-K 4 x 2048 (", 0) == 0);
  CHECK(line.find(std::to_string(plan.workspace_bytes) + " bytes") != std::string::npos);
  CHECK(line.find(plan.why) != std::string::npos);
  const foundry::gemm_plan naive =
      foundry::make_gemm_plan(plan_problem<float>(3, 3, 0), foundry::gemm_rung::naive, 132);
  CHECK(naive.describe().rfind("naive, split-K 1: ", 0) == 0);
}

// ---------------------------------------------------------------------------------------------
// Packing (gemm_pack.cuh): 16-bit operands whose rows are off 16-byte boundaries are copied into
// the workspace, aligned, where the copy is cheap next to the product. Plans on the host first.
namespace {

namespace gk = foundry::gemm_kernels;

using foundry::test::fake_address;
using foundry::test::pack_any_size;
constexpr auto device_of = foundry::test::h200_like;

// The ladder's 16-bit rung at this compute capability (wgmma on 9.0 when this binary has sm_90a code).
foundry::gemm_rung fast_16bit_rung(int compute_capability) {
  return gk::gemm_wgmma_available(compute_capability) ? foundry::gemm_rung::wgmma : foundry::gemm_rung::tensor_core;
}

}  // namespace

TEST_CASE("make_gemm_plan fits rung 4's tiling to the device's shared memory", "[gemm][plan]") {
  // An sm_89 device (an L40S, a GeForce RTX 4090) lets a block opt into 99 KiB of shared memory: the
  // 144 KiB ring of the 128 x 256 tiling would make the launch throw, at any K past 1536.
  foundry::device_properties ada = device_of(89);
  ada.sm_count = 142;
  ada.shared_memory_per_block_optin = 101376;
  for (const std::int64_t k : {1024, 4096}) {
    const foundry::gemm_plan plan = foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(4096, 4096, k), ada);
    INFO(plan.describe());
    CHECK((plan.rung == foundry::gemm_rung::tensor_core && !plan.fallback));
    CHECK((plan.block_m == 128 && plan.block_n == 128 && plan.min_blocks_per_sm == 2));
  }
  // The same problem on an sm_80 device (163 KiB) keeps the deep tiling.
  foundry::device_properties ampere = device_of(80);
  ampere.shared_memory_per_block_optin = 166912;
  const foundry::gemm_plan deep = foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(4096, 4096, 4096), ampere);
  INFO(deep.describe());
  CHECK((deep.rung == foundry::gemm_rung::tensor_core && deep.block_n == 256));
}

TEST_CASE("make_gemm_plan packs a 16-bit operand whose rows are off 16-byte boundaries", "[gemm][plan][pack]") {
  using foundry::gemm_rung;
  for (const int cc : {80, 90}) {
    INFO("sm_" << cc);
    const foundry::device_properties device = device_of(cc);
    const gemm_rung fast = fast_16bit_rung(cc);

    // A's leading dimension 4100 (8k + 4): A alone is copied, to 4096. 512 tiles: no split.
    auto a_only = plan_problem<__nv_bfloat16>(4096, 4096, 4096);
    a_only.lda = 4100;
    const foundry::gemm_plan a = foundry::make_gemm_plan(a_only, device);
    CHECK((a.rung == fast && !a.fallback && a.split_k == 1));
    CHECK((a.pack_a && !a.pack_b && a.packed_lda == 4096 && a.packed_ldb == 0));
    CHECK((a.pack_bytes == 4096u * 4096u * 2u && a.workspace_bytes == a.pack_bytes));
    INFO(a.describe());
    CHECK(contains(a.describe(), ", A packed (ld 4096), split-K 1 (33554432 bytes of workspace): "));
    CHECK(contains(a.why, "packed for"));

    // B stored N x K (op(B) from a transposed row-major matrix) with ld 4099, and A one element past
    // a 16-byte boundary: both are copied, each keeping its orientation.
    auto both = plan_problem<__half>(4096, 4096, 4096);
    both.a = fake_address<__half>(4096 + 2);
    both.b_n_contiguous = false;
    both.ldb = 4099;
    const foundry::gemm_plan ab = foundry::make_gemm_plan(both, device);
    CHECK((ab.rung == fast && !ab.fallback));
    CHECK((ab.pack_a && ab.pack_b && ab.packed_lda == 4096 && ab.packed_ldb == 4096));
    CHECK(ab.pack_bytes == 2u * 4096u * 4096u * 2u);
    CHECK(contains(ab.describe(), ", A and B packed (ld 4096, 4096), split-K 1 ("));

    // B alone, N-contiguous with ld 4101; an M-contiguous A of 1001 rows with ld 1001 would be
    // copied to ld 1008.
    auto b_only = plan_problem<__nv_bfloat16>(4096, 4096, 4096);
    b_only.ldb = 4101;
    const foundry::gemm_plan b = foundry::make_gemm_plan(b_only, device);
    CHECK((b.rung == fast && !b.pack_a && b.pack_b && b.packed_ldb == 4096 && b.packed_lda == 0));
    CHECK(contains(b.describe(), ", B packed (ld 4096), "));
    auto m_major = plan_problem<__nv_bfloat16>(1001, 4096, 4096);
    m_major.a_k_contiguous = false;
    m_major.lda = 1001;
    const foundry::gemm_plan m = foundry::make_gemm_plan(m_major, device);
    CHECK((m.rung == fast && m.pack_a && m.packed_lda == 1008));
    CHECK(m.pack_bytes == 4096u * 1008u * 2u);  // K stored rows of 1008, already a multiple of 256 bytes

    // Packed and split: 1024 x 1024 x 8192 with lda 8195 keeps its 4 slices of 2048; the
    // slices follow the copy in the workspace.
    auto deep = plan_problem<__nv_bfloat16>(1024, 1024, 8192);
    deep.lda = 8195;
    const foundry::gemm_plan split = foundry::make_gemm_plan(deep, device);
    CHECK((split.rung == fast && split.pack_a && split.packed_lda == 8192));
    CHECK((split.split_k == 4 && split.k_per_split == 2048));
    CHECK(split.pack_bytes == 1024u * 8192u * 2u);
    CHECK(split.workspace_bytes == split.pack_bytes + 4u * 1024u * 1024u * sizeof(float));
  }
}

TEST_CASE("make_gemm_plan does not pack where the copy would cost more than it saves", "[gemm][plan][pack]") {
  using foundry::gemm_rung;
  const foundry::device_properties device = device_of(90);
  // Too small: 64^3 is far below gemm_pack_policy::min_flops; rung 4's fallback, no workspace.
  auto tiny = plan_problem<__nv_bfloat16>(64, 64, 64);
  tiny.lda = 65;
  const foundry::gemm_plan small = foundry::make_gemm_plan(tiny, device);
  CHECK((small.rung == gemm_rung::tensor_core && small.fallback));
  CHECK((!small.pack_a && !small.pack_b && small.pack_bytes == 0 && small.workspace_bytes == 0));
  CHECK_FALSE(contains(small.describe(), "packed"));

  // At 2^28 FLOPs (512^3) the copy of A pays at the ceilings. One K less, the time model judges
  // instead: a copy and 8 pipelined steps of 64 (modelled 10.9 us) against the fallback's 16
  // latency-bound steps of 32 (17.4 us) or 4 slices of 4 steps (12.1 us): not clearly faster,
  // so the fallback runs split (H100, 512x512x1024: 13.9 us packed, 14-17 split 2 to 8 ways).
  auto edge = plan_problem<__nv_bfloat16>(512, 512, 512);
  edge.lda = 513;
  const foundry::gemm_plan at_ceilings = foundry::make_gemm_plan(edge, device);
  CHECK((at_ceilings.pack_a && contains(at_ceilings.why, "at the device's ceilings")));
  edge.k = 511;
  const foundry::gemm_plan modelled = foundry::make_gemm_plan(edge, device);
  CHECK((!modelled.pack_a && modelled.fallback && modelled.split_k == 4));
  CHECK(contains(modelled.why, "packing modelled no faster"));

  // 4096 x 16 x 4096: A's copy would move twice the bytes that the (memory-bound) product reads,
  // B's (4096 x 16) a hundredth of them. B alone is copied by the ceiling rule. With A
  // misaligned too, the copies fail it, and the alternative is rung 4's fallback, which the time
  // model judges: its 128 latency-bound steps of 32, 32 a block split 8 ways (the split's model,
  // fallback_split_policy: 25.2 us with the reduce; the packing rule's: 44.4), against 67 MB of
  // copies and a pipelined kernel (44.9 us): the fallback, split (H100, 2048x64x4096 with A
  // misaligned: 22.2 us packed, 23.0 split 8 ways).
  auto narrow = plan_problem<__nv_bfloat16>(4096, 16, 4096);
  narrow.ldb = 17;
  const foundry::gemm_plan b = foundry::make_gemm_plan(narrow, device);
  CHECK((b.pack_b && !b.pack_a && b.packed_ldb == 16 && !b.fallback));
  CHECK(contains(b.why, "at the device's ceilings"));
  narrow.lda = 4097;
  const foundry::gemm_plan both = foundry::make_gemm_plan(narrow, device);
  CHECK((!both.pack_a && !both.pack_b && both.fallback && both.split_k == 8));

  // Aligned operands, K = 0, a skinny shape, fp32 inputs, and a rung named by the caller: no packing.
  CHECK_FALSE(foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(4096, 4096, 4096), device).pack_a);
  auto empty_k = plan_problem<__nv_bfloat16>(4096, 4096, 0);
  empty_k.lda = 3;
  CHECK(foundry::make_gemm_plan(empty_k, device).rung == gemm_rung::naive);
  auto skinny = plan_problem<__nv_bfloat16>(8, 16384, 16384);
  skinny.lda = 16385;
  CHECK((foundry::make_gemm_plan(skinny, device).rung == gemm_rung::skinny &&
         !foundry::make_gemm_plan(skinny, device).pack_a));
  auto fp32 = plan_problem<float>(64, 4096, 64);  // fp32 below the ceiling rule's 2^28 FLOPs
  fp32.lda = 65;
  CHECK_FALSE(foundry::make_gemm_plan(fp32, device).pack_a);
  auto named = plan_problem<__nv_bfloat16>(4096, 4096, 4096);
  named.lda = 4100;
  const foundry::gemm_plan as_named = foundry::make_gemm_plan(named, gemm_rung::tensor_core, 132);
  CHECK((as_named.fallback && !as_named.pack_a));
}

TEST_CASE("make_gemm_plan packs misaligned fp32 operands for rung 3's float4 loads where the product is large",
          "[gemm][plan][pack]") {
  using foundry::gemm_rung;
  const foundry::device_properties device = device_of(90);

  // lda 4097: A alone is copied, to ld 4096, keeping its orientation; 1024 tiles, no split.
  auto a_only = plan_problem<float>(4096, 4096, 4096);
  a_only.lda = 4097;
  const foundry::gemm_plan a = foundry::make_gemm_plan(a_only, device);
  INFO(a.describe());
  CHECK((a.rung == gemm_rung::register_blocked && a.split_k == 1 && a.block_m == 128 && a.block_n == 128));
  CHECK((a.pack_a && !a.pack_b && a.packed_lda == 4096 && a.packed_ldb == 0 && !a.pack_a_transposed));
  CHECK((a.pack_bytes == 4096u * 4096u * 4u && a.workspace_bytes == a.pack_bytes));
  CHECK(contains(a.describe(), ", A packed (ld 4096), split-K 1 ("));
  CHECK(contains(a.why, "float4"));
  // The copies' rows are 16-byte aligned wherever the workspace starts (256-byte aligned).
  const auto q = gk::packed_problem(a_only, a, gk::pack_alignment * 3);
  CHECK((gk::operand_rows_aligned(q.a, q.lda) && gk::operand_rows_aligned(q.b, q.ldb)));

  // B's base one float off, and an M-contiguous A of 1001 rows (ld 1001): both copied; A to ld 1004.
  auto both = plan_problem<float>(1001, 4096, 4096);
  both.a_k_contiguous = false;
  both.lda = 1001;
  both.b = fake_address<float>(8192 + 4);
  const foundry::gemm_plan ab = foundry::make_gemm_plan(both, device);
  CHECK((ab.pack_a && ab.pack_b && ab.packed_lda == 1004 && ab.packed_ldb == 4096));
  CHECK(ab.pack_bytes == 4096u * 1004u * 4u + 4096u * 4096u * 4u);  // each a multiple of 256 bytes

  // Packed and split: 1024 x 1024 x 8192 keeps rung 3's 4 slices of 2048 behind the copy.
  auto deep = plan_problem<float>(1024, 1024, 8192);
  deep.ldb = 1026;
  const foundry::gemm_plan split = foundry::make_gemm_plan(deep, device);
  CHECK((split.pack_b && !split.pack_a && split.packed_ldb == 1024 && split.split_k == 4));
  CHECK(split.workspace_bytes == split.pack_bytes + 4u * 1024u * 1024u * sizeof(float));

  // Aligned operands, a product under 2^28 FLOPs, K under 64 (C's tiles dominate), and rung 3
  // named by the caller (gemm_with): no copy.
  CHECK_FALSE(foundry::make_gemm_plan(plan_problem<float>(4096, 4096, 4096), device).pack_a);
  auto shallow = plan_problem<float>(16384, 16384, 63);  // lda 63: rows off 16 bytes
  REQUIRE(gk::plan_packing<float, gk::register_blocked_pack_policy>(shallow).a);
  CHECK_FALSE(foundry::make_gemm_plan(shallow, device).pack_a);
  shallow.k = shallow.lda = 64 + 1;
  CHECK(foundry::make_gemm_plan(shallow, device).pack_a);
  auto small = plan_problem<float>(1000, 1000, 1000);  // 2.0e9 FLOPs, under 2^31
  small.lda = 501;
  CHECK_FALSE(foundry::make_gemm_plan(small, device).pack_a);
  const foundry::gemm_plan named = foundry::make_gemm_plan(a_only, gemm_rung::register_blocked, 132);
  CHECK((!named.pack_a && named.workspace_bytes == 0));

  // TF32 asked for where its K-major copies do not pay (an M-contiguous A of a product under the
  // tensor cores' ceiling rule) but rung 3's copy does: rung 3, A packed in its own orientation.
  auto tf32 = plan_problem<float>(1301, 1303, 1300);  // 4.4e9 FLOPs
  tf32.math = foundry::gemm_math::tf32;
  tf32.lda = 1301;
  tf32.a_k_contiguous = false;
  tf32.ldb = 1303;
  const foundry::gemm_plan t = foundry::make_gemm_plan(tf32, device);
  INFO(t.describe());
  if (t.rung == gemm_rung::register_blocked) {
    CHECK((t.pack_a && t.pack_b && !t.pack_a_transposed && t.packed_lda == 1304 && t.packed_ldb == 1304));
  } else {
    CHECK(t.rung == gemm_rung::wgmma);  // TF32's own copies paid: packed K-major for the wgmma kernel
    CHECK((t.pack_a && t.pack_a_transposed));
  }
}

// The sweep's problems (bench/gemm_sweep.cuh) as foundry::gemm receives them: "<M>x<N>x<K>_<layouts>_<pads>",
// each operand stored in its layout with its leading dimension the contiguous extent plus its
// pad, at addresses cudaMalloc could return (256-byte aligned; never dereferenced).
namespace {

template <class In>
foundry::gemm_problem<In, float> sweep_problem(std::int64_t m, std::int64_t n, std::int64_t k, const char* layouts,
                                               int pad_a, int pad_b, int pad_c) {
  const auto layout = [](char c) { return c == 'r' ? matrix_layout::row_major : matrix_layout::col_major; };
  const auto op = [](char c) { return c == 'n' ? matrix_op::none : matrix_op::transpose; };
  const auto view = [&](std::uintptr_t address, std::int64_t rows, std::int64_t cols, const char* code, int pad) {
    const matrix_layout l = layout(code[0]);
    const bool as_stored = op(code[1]) == matrix_op::none;
    const std::int64_t r = as_stored ? rows : cols, c = as_stored ? cols : rows;
    return matrix_view<const In>{fake_address<In>(address), r, c, (l == matrix_layout::row_major ? c : r) + pad, l};
  };
  // layouts: "rt_rt" = A then B, each storage (r/c) and op (n/t).
  return foundry::make_gemm_problem<In, float>(
      1.0f, view(std::uintptr_t{1} << 30, m, k, layouts, pad_a), op(layouts[1]),
      view(std::uintptr_t{1} << 32, k, n, layouts + 3, pad_b), op(layouts[4]), 0.0f,
      matrix_view<float>{reinterpret_cast<float*>(std::uintptr_t{1} << 34), m, n, n + pad_c, matrix_layout::row_major});
}

// The plan of the device's 16-bit rung for p on 132 SMs as the rung makes it: what
// make_gemm_plan chose before the time model.
template <class In>
foundry::gemm_plan rung_plan(const foundry::gemm_problem<In, float>& p, int compute_capability) {
  return foundry::make_gemm_plan(p, fast_16bit_rung(compute_capability), 132);
}

}  // namespace

TEST_CASE("make_gemm_plan splits the fallback of small misaligned 16-bit products where the model says it pays",
          "[gemm][plan][pack]") {
  for (const int cc : {80, 90}) {
    INFO("sm_" << cc);
    const foundry::device_properties device = device_of(cc);

    // 1950x23x670_rt_rt_p3_2_2 (H100: 21.3 us unsplit, cuBLAS 10.5): A M-contiguous with ld 1953,
    // B (ld 672) aligned. The rung runs 31 fallback blocks of 21 steps (K 670 is below the 512 per
    // slice the rungs' own split wants twice); the split's model (fallback_split_policy) puts 11
    // slices of 2 steps at 7.8 us against 21.9 (H100 plan-space, session 25: 10.7 us against 7
    // slices' 12.6), packing A no less.
    const auto tall = sweep_problem<__nv_bfloat16>(1950, 23, 670, "rt_rt", 3, 2, 2);
    REQUIRE((!tall.a_k_contiguous && tall.lda == 1953 && !tall.b_n_contiguous && tall.ldb == 672));
    const foundry::gemm_plan before = rung_plan(tall, cc);
    CHECK((before.fallback && before.split_k == 1));
    const foundry::gemm_plan split = foundry::make_gemm_plan(tall, device);
    INFO(split.describe());
    CHECK((split.rung == foundry::gemm_rung::tensor_core && split.fallback && !split.pack_a && !split.pack_b));
    CHECK((split.split_k == 11 && split.k_per_split == 64));
    CHECK(split.workspace_bytes == 11u * 1950u * 23u * sizeof(float));
    CHECK(split.describe().rfind("tensor_core (fallback) 64x64x32, 1 stage, 1 block/SM, split-K 11 x 64 (1973400 "
                                 "bytes of workspace): ",
                                 0) == 0);
    CHECK(contains(split.why, "K split to shorten each block's chain of latency-bound steps"));
    using split_model = gk::fallback_split_policy;
    CHECK(gk::modelled_us<__nv_bfloat16, split_model>(split, tall, 132) == Approx(7.8).epsilon(0.01));
    CHECK(gk::modelled_us<__nv_bfloat16, split_model>(before, tall, 132) == Approx(21.9));
    // The packing decision keeps gemm_pack_policy's figures: the split still clearly beats the copies.
    CHECK(gk::modelled_us(split, tall, 132) <= gk::gemm_pack_policy::clear_gain * gk::modelled_us(before, tall, 132));

    // 16x17x396_rn_cn_p0_7_4 (H100: 11.8 us unsplit, cuBLAS 5.3): one block of 13 steps; 13 slices
    // of 1 (5.6 us against 14.7; copying A and B no less).
    const auto tiny = sweep_problem<__nv_bfloat16>(16, 17, 396, "rn_cn", 0, 7, 4);
    const foundry::gemm_plan one_block = foundry::make_gemm_plan(tiny, device);
    INFO(one_block.describe());
    CHECK((rung_plan(tiny, cc).split_k == 1 && one_block.fallback && !one_block.pack_a && !one_block.pack_b));
    CHECK((one_block.split_k == 13 && one_block.k_per_split == 32));

    // 102x1461x554_rn_ct_p1_4_3 (H100: 17.4 us unsplit, cuBLAS 11.8): 46 blocks of 18 steps; 6
    // slices of 3 (copying A and B not clearly less; H100 plan-space, session 25: 13.4 us, 5
    // slices 15.3, 9 slices 11.6). fp16 plans as bf16.
    const auto wide = sweep_problem<__half>(102, 1461, 554, "rn_ct", 1, 4, 3);
    const foundry::gemm_plan six = foundry::make_gemm_plan(wide, device);
    INFO(six.describe());
    CHECK((rung_plan(wide, cc).split_k == 1 && six.fallback && !six.pack_a && !six.pack_b));
    CHECK((six.split_k == 6 && six.k_per_split == 96));

    // 12x470x7800_rt_rn_p6_1_5 (H100, session 27: 21.3 us at the rung's own 15 slices, 15.7 at
    // 31, cuBLAS 16.4): 8 blocks of 244 steps. C has 5640 elements, so the split's model may go
    // past 16 slices (fallback_split_policy::small_c_max_fallback_splits): 31 of 8 steps; the
    // packing rule still judges at its own cap of 16 and keeps the fallback.
    const auto deep = sweep_problem<__nv_bfloat16>(12, 470, 7800, "rt_rn", 6, 1, 5);
    const foundry::gemm_plan own = rung_plan(deep, cc);
    CHECK((own.fallback && own.split_k == 15));
    const foundry::gemm_plan deep_split = foundry::make_gemm_plan(deep, device);
    INFO(deep_split.describe());
    CHECK((deep_split.fallback && !deep_split.pack_a && !deep_split.pack_b));
    CHECK((deep_split.split_k == 31 && deep_split.k_per_split == 256));
    CHECK(deep_split.workspace_bytes == 31u * 12u * 470u * sizeof(float));
    // 29x13x2378_rt_rt_p6_6_5 (the same call: 9.2 us in 15 slices, 7.2 in 25, cuBLAS 7.6 fp16):
    // one block of 75 steps, 25 slices of 3.
    const foundry::gemm_plan one_tile =
        foundry::make_gemm_plan(sweep_problem<__half>(29, 13, 2378, "rt_rt", 6, 6, 5), device);
    INFO(one_tile.describe());
    CHECK((one_tile.fallback && one_tile.split_k == 25 && one_tile.k_per_split == 96));
    STATIC_REQUIRE(gk::max_fallback_splits_for<gk::fallback_split_policy>(12, 470) == 32);
    STATIC_REQUIRE(gk::max_fallback_splits_for<gk::fallback_split_policy>(256, 257) == 16);
    STATIC_REQUIRE(gk::max_fallback_splits_for<gk::gemm_pack_policy>(12, 470) == 16);
  }
}

TEST_CASE("make_gemm_plan packs a small misaligned 16-bit product where the model says the fallback is slow",
          "[gemm][plan][pack]") {
  using foundry::gemm_rung;
  for (const int cc : {80, 90}) {
    INFO("sm_" << cc);
    const foundry::device_properties device = device_of(cc);
    // 82x14x11373_rt_ct_p6_3_5 (H100: 26.5 us at 16 slices, packed 11.3, cuBLAS 13.5; 2.6e7
    // FLOPs): B N-contiguous with ld 17. Two fallback blocks, 16 slices of 23 steps at best
    // (modelled 25.6 us); copying B (682 KB) and 15 slices of 12 pipelined steps, 14.6 us (rung
    // 4); rung 5 splits up to 64 ways, here 20 slices of 9 steps (13.3 us).
    const auto deep = sweep_problem<__nv_bfloat16>(82, 14, 11373, "rt_ct", 6, 3, 5);
    const foundry::gemm_plan before = rung_plan(deep, cc);
    CHECK((before.fallback && before.split_k == 16));
    const foundry::gemm_plan packed = foundry::make_gemm_plan(deep, device);
    INFO(packed.describe());
    CHECK((packed.rung == fast_16bit_rung(cc) && !packed.fallback));
    CHECK((!packed.pack_a && packed.pack_b && packed.packed_ldb == 16));
    if (cc == 90) {
      CHECK((packed.split_k == 20 && packed.k_per_split == 576));
    } else {
      CHECK((packed.split_k == 15 && packed.k_per_split == 768));
    }
    CHECK(contains(packed.why, "modelled faster than the fallback's latency-bound steps"));
    CHECK(gk::modelled_us(packed, deep, 132) <= gk::gemm_pack_policy::clear_gain * gk::modelled_us(before, deep, 132));
  }
}

TEST_CASE("the time model leaves aligned and tiny 16-bit problems as they were, and judges large ones too",
          "[gemm][plan][pack]") {
  using foundry::gemm_rung;
  for (const int cc : {80, 90}) {
    INFO("sm_" << cc);
    const foundry::device_properties device = device_of(cc);
    const auto same = [&](const auto& p) {
      const std::string planned = foundry::make_gemm_plan(p, device).describe(), rung = rung_plan(p, cc).describe();
      INFO(planned << "\n" << rung);
      return planned == rung;
    };
    // Aligned: the sweep's 1950x23x670 with every leading dimension a multiple of 8 runs the fast kernel.
    const auto aligned = sweep_problem<__nv_bfloat16>(1952, 24, 672, "rt_rt", 0, 0, 0);
    CHECK(same(aligned));
    CHECK_FALSE(foundry::make_gemm_plan(aligned, device).fallback);
    // One fallback step, or two: nothing to shorten, and a copy or a reduce costs a launch.
    CHECK(same(sweep_problem<__nv_bfloat16>(39, 13, 32, "cn_cn", 4, 7, 0)));
    CHECK(same(sweep_problem<__half>(1110, 610, 2, "rn_ct", 1, 4, 7)));
    auto two_steps = plan_problem<__nv_bfloat16>(64, 64, 64);
    two_steps.lda = 65;
    CHECK(same(two_steps));
    // A large product whose copies fail the ceiling rule: 127x5368x617_rn_cn_p3_2_3 (8.4e8
    // FLOPs; copies of 13.6 MB against the product's 9.5). The model puts the copies and the
    // fast kernel under its fallback's 20 latency-bound steps: both operands are copied.
    const auto large = sweep_problem<__nv_bfloat16>(127, 5368, 617, "rn_cn", 3, 2, 3);
    const foundry::gemm_plan large_plan = foundry::make_gemm_plan(large, device);
    CHECK((large_plan.pack_a && large_plan.pack_b && !large_plan.fallback));
    CHECK(contains(large_plan.why, "modelled faster than the fallback"));
  }
}

TEST_CASE("make_gemm_plan keeps rung 4's fallback where cheap copies would not make the call faster: C's writes bind",
          "[gemm][plan][pack]") {
  for (const int cc : {80, 90}) {
    INFO("sm_" << cc);
    const foundry::device_properties device = device_of(cc);
    // 2502x11840x18_rt_cn_p4_7_6: copies of 1 MB pass the ceiling rule (the product moves 118 MB
    // of C), but one K step leaves C's writes to bind, and C's rows are off sectors (ldc 11846).
    // H100: 96.6 us packed (wgmma), 69.7 on the fallback; cuBLAS 54-65.
    const auto flat_off = sweep_problem<__nv_bfloat16>(2502, 11840, 18, "rt_cn", 4, 7, 6);
    REQUIRE(gk::packing_pays(flat_off, gk::operands_to_copy(flat_off).copy_bytes));
    const foundry::gemm_plan kept = foundry::make_gemm_plan(flat_off, device);
    INFO(kept.describe());
    CHECK((kept.fallback && kept.split_k == 1 && !kept.pack_a && !kept.pack_b));
    CHECK(contains(kept.why, "modelled faster than the copies and the pipelined kernel"));
    // The same shape with C's rows on sectors (ldc 11840): the fast kernels write C faster than
    // the fallback, so the copies stand (16384x16384x1 on the H100: 385 us packed, 546 fallback).
    const auto flat_on = sweep_problem<__nv_bfloat16>(2502, 11840, 18, "rt_cn", 4, 7, 0);
    const foundry::gemm_plan packed = foundry::make_gemm_plan(flat_on, device);
    INFO(packed.describe());
    CHECK((!packed.fallback && packed.pack_a && packed.pack_b));
    CHECK(contains(packed.why, "the copy costs less than the product at the device's ceilings"));
    // Deeper K: the fallback's steps bind, and the copies stand whatever C's alignment
    // (3324x10802x134_rt_cn_p6_3_2 on the H100: 99.7 us packed, 205.6 on the fallback).
    const foundry::gemm_plan deeper =
        foundry::make_gemm_plan(sweep_problem<__nv_bfloat16>(3324, 10802, 134, "rt_cn", 6, 3, 2), device);
    INFO(deeper.describe());
    CHECK((!deeper.fallback && deeper.pack_a && deeper.pack_b));
  }
}

TEST_CASE(
    "modelled_us: the fallback's steps latency-bound or issue-bound, the fast kernel's pipelined, C, the copies "
    "and the reduce",
    "[gemm][plan][pack]") {
  using policy = gk::gemm_pack_policy;
  const auto p = sweep_problem<__nv_bfloat16>(1950, 23, 670, "rt_rt", 3, 2, 2);
  const double slice_bytes = 1950.0 * 23.0 * sizeof(float);
  // The fallback unsplit: 31 blocks (one wave on 132 SMs), 21 latency-bound steps; C (179 KB)
  // does not bind.
  const foundry::gemm_plan whole = foundry::make_gemm_plan(p, foundry::gemm_rung::tensor_core, 132, 1);
  CHECK(gk::modelled_us(whole, p, 132) == Approx(policy::fallback_call_us + 21 * policy::fallback_step_us));
  // 7 slices of 3 steps: 217 blocks, two waves, each step bound by two blocks' issue; and the reduce.
  const foundry::gemm_plan split = foundry::make_gemm_plan(p, foundry::gemm_rung::tensor_core, 132, 7);
  REQUIRE((split.split_k == 7 && split.k_per_split == 96));
  const double reduce =
      policy::reduce_launch_us + 7 * policy::reduce_slice_us + 2.0 * 7 * slice_bytes / policy::bytes_per_us;
  CHECK(gk::modelled_reduce_us(1950, 23, 7) == Approx(reduce));
  CHECK(gk::modelled_reduce_us(1950, 23, 1) == 0.0);
  REQUIRE(2 * policy::fallback_block_step_us > policy::fallback_step_us);
  CHECK(gk::modelled_us(split, p, 132) ==
        Approx(policy::fallback_call_us + 3 * 2 * policy::fallback_block_step_us + reduce));
  // On 8 SMs the 31 blocks are 4 waves: each step is bound by their issue.
  CHECK(gk::modelled_us(whole, p, 8) == Approx(policy::fallback_call_us + 21 * 4 * policy::fallback_block_step_us));
  // Packing A (670 stored rows of 1950, copied to rows of 1952): one launch and its bytes, then
  // 16 tiles of 128 x 256 (one wave) stepping 11 times through K = 670.
  const gk::gemm_pack_plan packing = gk::operands_to_copy(p);
  REQUIRE((packing.a && !packing.b));
  CHECK(packing.copy_bytes == 2.0 * 670 * (1950 + 1952));
  foundry::gemm_plan copies;
  gk::detail::record_packing(copies, packing);
  foundry::gemm_plan packed =
      foundry::make_gemm_plan(gk::packed_problem(p, copies, gk::pack_alignment), foundry::gemm_rung::tensor_core, 132);
  gk::detail::record_packing(packed, packing);
  REQUIRE((!packed.fallback && packed.split_k == 1 && packed.block_k == 64));
  const double tiles = std::ceil(1950.0 / packed.block_m) * std::ceil(23.0 / packed.block_n);
  const double waves = std::ceil(tiles / (132.0 * packed.min_blocks_per_sm));
  CHECK(gk::modelled_us(packed, p, 132) ==
        Approx(policy::fast_call_us + policy::launch_us + packing.copy_bytes / policy::bytes_per_us +
               11 * waves * policy::fast_step_us));

  // Where C's writes bind: 16384 x 16384 x 2 (1 GiB of C) one step of 65536 fallback blocks, or
  // of the fast kernel's 8192 tiles; C's rows on sectors (ldc 16384) or off them (ldc 16385).
  for (const int pad_c : {0, 1}) {
    INFO("pad_c " << pad_c);
    const auto flat = sweep_problem<__nv_bfloat16>(16384, 16384, 2, "rn_rn", 1, 0, pad_c);
    const double c_bytes = 4.0 * 16384 * 16384;
    const foundry::gemm_plan fallback = foundry::make_gemm_plan(flat, foundry::gemm_rung::tensor_core, 132, 1);
    REQUIRE(fallback.fallback);
    CHECK(gk::modelled_us(fallback, flat, 132) ==
          Approx(policy::fallback_call_us + c_bytes / policy::fallback_c_bytes_per_us));
    const gk::gemm_pack_plan a_only = gk::operands_to_copy(flat);
    REQUIRE((a_only.a && !a_only.b));
    foundry::gemm_plan copy_a;
    gk::detail::record_packing(copy_a, a_only);
    foundry::gemm_plan fast = foundry::make_gemm_plan(gk::packed_problem(flat, copy_a, gk::pack_alignment),
                                                      foundry::gemm_rung::tensor_core, 132);
    gk::detail::record_packing(fast, a_only);
    REQUIRE(!fast.fallback);
    const double rate = pad_c == 0 ? policy::fast_c_bytes_per_us : policy::fast_c_off_sector_bytes_per_us;
    CHECK(gk::modelled_us(fast, flat, 132) ==
          Approx(policy::fast_call_us + policy::launch_us + a_only.copy_bytes / policy::bytes_per_us + c_bytes / rate));
  }
}

TEST_CASE("packing_pays compares the copy with the product at the ceilings", "[gemm][plan][pack]") {
  using policy = gk::gemm_pack_policy;
  const auto p = plan_problem<__nv_bfloat16>(1024, 1024, 1024);
  const double flops = 2.0 * 1024 * 1024 * 1024;
  CHECK(gk::packing_pays(p, flops / policy::flops_per_byte));
  CHECK_FALSE(gk::packing_pays(p, flops / policy::flops_per_byte * 1.01));
  // Memory-bound: the product's own bytes (A and B read, C written) bound the copy instead.
  const auto flat = plan_problem<__nv_bfloat16>(16384, 16384, 2);
  const double product_bytes = 2.0 * (16384.0 * 2 * 2) + 4.0 * 16384 * 16384;
  CHECK(gk::packing_pays(flat, product_bytes));
  CHECK_FALSE(gk::packing_pays(flat, product_bytes * 1.01));
}

TEST_CASE("packed_problem points the rung at the copies, A first, each 256-byte aligned", "[gemm][plan][pack]") {
  auto p = plan_problem<__nv_bfloat16>(100, 200, 300);
  p.lda = 301;
  p.a_k_contiguous = true;
  p.b_n_contiguous = false;  // B stored 200 rows of 300
  p.ldb = 303;
  const gk::gemm_pack_plan packing = gk::plan_packing<__nv_bfloat16, pack_any_size>(p);
  REQUIRE((packing.a && packing.b));
  foundry::gemm_plan plan;
  gk::detail::record_packing(plan, packing);
  CHECK((plan.packed_lda == 304 && plan.packed_ldb == 304));
  const std::size_t a_bytes = foundry::round_up<std::size_t>(100u * 304u * 2u, 256u);  // 60800 -> 60928
  CHECK(a_bytes == 60928u);
  CHECK(plan.pack_bytes == a_bytes + foundry::round_up<std::size_t>(200u * 304u * 2u, 256u));
  const auto q = gk::packed_problem(p, plan, 1u << 20);
  CHECK((reinterpret_cast<std::uintptr_t>(q.a) == (1u << 20) && q.lda == 304 && q.a_k_contiguous));
  CHECK((reinterpret_cast<std::uintptr_t>(q.b) == (1u << 20) + a_bytes && q.ldb == 304 && !q.b_n_contiguous));
  CHECK((q.m == p.m && q.n == p.n && q.k == p.k && q.c == p.c && q.ldc == p.ldc));
}

TEST_CASE("a packed launch refuses a caller's workspace that is small, misaligned or overlapping",
          "[gemm][plan][pack]") {
  // Every check runs before anything is allocated or enqueued: fake addresses, no GPU.
  auto p = plan_problem<__nv_bfloat16>(4096, 4096, 4096);
  p.lda = 4100;
  const foundry::gemm_plan plan = foundry::make_gemm_plan(p, device_of(90));
  REQUIRE((plan.pack_a && plan.workspace_bytes == 4096u * 4096u * 2u));
  const std::size_t floats = plan.workspace_bytes / sizeof(float);
  const cuda::stream_ref s{cudaStreamLegacy};
  const auto workspace_at = [&](std::uintptr_t address, std::size_t size) {
    return cuda::std::span<float>(reinterpret_cast<float*>(address), size);
  };
  using packed = gk::detail::packed_operands<__nv_bfloat16>;
  const std::uintptr_t far = std::uintptr_t{1} << 40;
  CHECK_THROWS_WITH(packed(plan, p, workspace_at(far, floats - 1), s),
                    Catch::Contains("smaller than the " + std::to_string(floats)));
  CHECK_THROWS_WITH(packed(plan, p, workspace_at(far + 16, floats), s), Catch::Contains("256-byte aligned"));
  CHECK_THROWS_WITH(packed(plan, p, workspace_at(4096, floats), s), Catch::Contains("packing workspace and A"));
}

// GPU: results of packed plans against the double-accumulated reference (support/gemm_test_case.cuh:
// element-wise bound 1e-3 of sum |a b|, relative Frobenius 1e-2, C poisoned outside its window).
namespace {

// The plan foundry::gemm follows on this device, packing as `Policy` says.
template <class Policy, class In>
foundry::gemm_plan device_plan(const foundry::gemm_problem<In, float>& p) {
  return foundry::test::plan_on_this_device<Policy>(
      p, foundry::best_gemm_rung<In, float>(foundry::get_device_properties().compute_capability()));
}

// Whether case c stores this operand off 16-byte boundaries (its pad or offset not a multiple of 8).
bool misaligned(const foundry::test::gemm_case& c, bool padded) {
  return padded && (c.ld_extra % 8 != 0 || c.operand_offset % 8 != 0);
}

// Runs case c through the packed plan (as foundry::gemm: the plan, then launch_plan) and checks
// the result; the outcome's path says whether the plan packed exactly the misaligned operands
// and runs the fast kernel of the device's 16-bit rung.
template <class In, class Policy = pack_any_size>
foundry::test::gemm_outcome require_packed(const foundry::test::gemm_case& c, cuda::std::span<float> workspace = {}) {
  INFO(foundry::test::describe(c));
  const auto path = [&c](const foundry::gemm_problem<In, float>& p) {
    const foundry::gemm_plan plan = device_plan<Policy>(p);
    UNSCOPED_INFO(plan.describe());
    return plan.pack_a == misaligned(c, c.pad_a) && plan.pack_b == misaligned(c, c.pad_b) && !plan.fallback &&
           plan.rung == foundry::best_gemm_rung<In, float>();
  };
  const auto enqueue = [workspace](const foundry::gemm_problem<In, float>& p, cuda::stream_ref s) {
    foundry::detail::launch_plan(device_plan<Policy>(p), p, workspace, s);
  };
  return foundry::test::check_gemm_outcome(foundry::test::run_gemm_case<In>(c, path, enqueue), "packed plan");
}

// Case `sh` with pad `pad` on the leading dimensions (stored row length rounded up to 8, plus
// pad) of the operands `pad_a`/`pad_b` select, `offset` elements before them, beta != 0 and a C
// padded (ld n + 3) and one float off its allocation's start.
foundry::test::gemm_case pack_case(foundry::test::gemm_shape sh, int pad, int offset, bool pad_a, bool pad_b) {
  foundry::test::gemm_case c = foundry::test::make_gemm_case(sh, 1.25f, -0.5f);
  c.ld_extra = pad;
  c.operand_offset = offset;
  c.pad_a = pad_a;
  c.pad_b = pad_b;
  c.c_ld_extra = 3;
  c.c_offset = 1;
  return c;
}

}  // namespace

TEMPLATE_TEST_CASE("gemm packs A alone: every pad 0..7 of its leading dimension, a base one element off",
                   "[gpu][gemm][pack]", __nv_bfloat16, __half) {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  for (const bool a_k : {true, false}) {
    for (int pad = 0; pad < 8; ++pad) {
      // Pad 0 alone would be aligned: there the base is one element (2 bytes) off instead.
      foundry::test::gemm_case c = pack_case({127, 259, 200}, pad, pad == 0 ? 1 : 0, true, false);
      c.a_k_contiguous = a_k;
      c.b_n_contiguous = pad % 2 == 0;
      CHECK(require_packed<TestType>(c).path);
    }
  }
}

TEMPLATE_TEST_CASE("gemm packs B alone: every pad 0..7 of its leading dimension, a base one element off",
                   "[gpu][gemm][pack]", __nv_bfloat16, __half) {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  for (const bool b_n : {true, false}) {
    for (int pad = 0; pad < 8; ++pad) {
      foundry::test::gemm_case c = pack_case({259, 127, 200}, pad, pad == 0 ? 1 : 0, false, true);
      c.a_k_contiguous = pad % 2 == 0;
      c.b_n_contiguous = b_n;
      CHECK(require_packed<TestType>(c).path);
    }
  }
}

TEMPLATE_TEST_CASE("gemm packs A and B: every pad 0..7 in every layout, with and without a base off",
                   "[gpu][gemm][pack]", __nv_bfloat16, __half) {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  for (const bool a_k : {true, false}) {
    for (const bool b_n : {true, false}) {
      for (int pad = 0; pad < 8; ++pad) {
        // Pad 0 without an offset is the aligned control: nothing packed, the fast kernel as always.
        for (const int offset : {0, 1}) {
          foundry::test::gemm_case c = pack_case({130, 197, 161}, pad, offset, true, true);
          c.a_k_contiguous = a_k;
          c.b_n_contiguous = b_n;
          CHECK(require_packed<TestType>(c).path);
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("gemm packs and splits K, into its own workspace or a caller's poisoned one", "[gpu][gemm][pack]",
                   __nv_bfloat16, __half) {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  // 130 x 260 x 2048: 4 block tiles or fewer for 132 SMs, so K is split; the slices follow the
  // copies in the workspace. A caller's workspace holding NaN must be written before it is read.
  foundry::test::gemm_case c = pack_case({130, 260, 2048}, 3, 1, true, true);
  c.a_k_contiguous = false;
  const foundry::gemm_plan plan = device_plan<pack_any_size>(foundry::test::gemm_case_shape<TestType>(c));
  INFO(plan.describe());
  REQUIRE((plan.pack_a && plan.pack_b && plan.split_k > 1));
  foundry::test::check_own_then_poisoned_workspace(
      plan.workspace_bytes, [&c](cuda::std::span<float> workspace) { return require_packed<TestType>(c, workspace); });
}

TEMPLATE_TEST_CASE("gemm packs misaligned operands of a large product with the default rule", "[gpu][gemm][pack]",
                   __nv_bfloat16, __half) {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  // 1000 x 1030 x 270: 5.6e8 FLOPs against copies of about 2.2 MB (at most 2.8 MB by the rule).
  foundry::test::gemm_case c = pack_case({1000, 1030, 270}, 3, 1, true, true);
  c.b_n_contiguous = false;
  CHECK(require_packed<TestType, gk::gemm_pack_policy>(c).path);
}

// fp32 (rung 3): operands off 16-byte rows copied for the float4 loads. The element-wise bound
// is 2e-5 (K = 161), 1e-4 (K = 1000) or 2e-4 (K = 2048) of sum |a b|: fp32 accumulation of K products, each
// sum rounded at most K u (u = 6e-8) of sum |a b| (K u = 1e-5, 6e-5 and 1.2e-4), plus the split-K reduce's
// few additions.
namespace {

// Whether case c stores this fp32 operand off 16-byte boundaries (pad or offset not a multiple of 4).
bool misaligned_fp32(const foundry::test::gemm_case& c, bool padded) {
  return padded && (c.ld_extra % 4 != 0 || c.operand_offset % 4 != 0);
}

// Rung 3's plan for `p` on this device, packed by `Policy` (the default policy: make_gemm_plan's
// own plan).
template <class Policy>
foundry::gemm_plan fp32_plan(const foundry::gemm_problem<float, float>& p) {
  const foundry::device_properties& d = foundry::get_device_properties();
  if constexpr (std::is_same_v<Policy, gk::register_blocked_pack_policy>) return foundry::make_gemm_plan(p, d);
  return foundry::detail::pack_for_vector_loads<Policy>(
      foundry::make_gemm_plan(p, foundry::gemm_rung::register_blocked, d.sm_count), p);
}

// Runs case c through `fp32_plan<Policy>` with launch_plan, and checks the result; the outcome's
// path says whether the plan copied exactly the misaligned operands.
template <class Policy = pack_any_size>
foundry::test::gemm_outcome require_packed_fp32(const foundry::test::gemm_case& c,
                                                cuda::std::span<float> workspace = {}) {
  INFO(foundry::test::describe(c));
  const auto plan_of = [](const foundry::gemm_problem<float, float>& p) { return fp32_plan<Policy>(p); };
  const auto path = [&c, &plan_of](const foundry::gemm_problem<float, float>& p) {
    const foundry::gemm_plan plan = plan_of(p);
    UNSCOPED_INFO(plan.describe());
    return plan.rung == foundry::gemm_rung::register_blocked && plan.pack_a == misaligned_fp32(c, c.pad_a) &&
           plan.pack_b == misaligned_fp32(c, c.pad_b);
  };
  const auto enqueue = [workspace, &plan_of](const foundry::gemm_problem<float, float>& p, cuda::stream_ref s) {
    foundry::detail::launch_plan(plan_of(p), p, workspace, s);
  };
  return foundry::test::check_gemm_outcome(foundry::test::run_gemm_case<float>(c, path, enqueue), "fp32 packed plan");
}

}  // namespace

TEST_CASE("gemm packs misaligned fp32 operands for rung 3: every pad 0..7 in every layout, a base off or not",
          "[gpu][gemm][pack]") {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  for (const bool a_k : {true, false}) {
    for (const bool b_n : {true, false}) {
      for (int pad = 0; pad < 8; ++pad) {
        // Pads 0 and 4 without an offset are the aligned controls: nothing copied.
        for (const int offset : {0, 1}) {
          foundry::test::gemm_case c = pack_case({130, 197, 161}, pad, offset, true, pad % 2 == 0);
          c.a_k_contiguous = a_k;
          c.b_n_contiguous = b_n;
          c.bound_scale = 2e-5;
          CHECK(require_packed_fp32(c).path);
        }
      }
    }
  }
}

TEST_CASE("gemm packs fp32 operands and splits K, into its own workspace or a caller's poisoned one",
          "[gpu][gemm][pack]") {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  // 130 x 260 x 2048: 6 block tiles for 132 SMs, so K is split; the slices follow the copies.
  foundry::test::gemm_case c = pack_case({130, 260, 2048}, 3, 1, true, true);
  c.a_k_contiguous = false;
  c.bound_scale = 2e-4;
  const foundry::gemm_plan plan = fp32_plan<pack_any_size>(foundry::test::gemm_case_shape<float>(c));
  INFO(plan.describe());
  REQUIRE((plan.pack_a && plan.pack_b && plan.split_k > 1));
  foundry::test::check_own_then_poisoned_workspace(
      plan.workspace_bytes, [&c](cuda::std::span<float> workspace) { return require_packed_fp32(c, workspace); });
}

TEST_CASE("gemm packs misaligned fp32 operands of a large product with the default rule", "[gpu][gemm][pack]") {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  // 1100 x 1030 x 1000: 2.3e9 FLOPs (over 2^31) against copies of about 17 MB. K u = 6e-5.
  foundry::test::gemm_case c = pack_case({1100, 1030, 1000}, 3, 1, true, true);
  c.b_n_contiguous = false;
  c.bound_scale = 1e-4;
  CHECK(require_packed_fp32<gk::register_blocked_pack_policy>(c).path);
}

namespace {

// Runs case c through the plan foundry::gemm follows on this device (the default rule, as
// launch_plan enqueues it) and checks the result; the outcome's path says whether `expected`
// holds for that plan.
template <class In, class Expected>
foundry::test::gemm_outcome require_default_plan(const foundry::test::gemm_case& c, Expected&& expected) {
  INFO(foundry::test::describe(c));
  const auto path = [&expected](const foundry::gemm_problem<In, float>& p) {
    const foundry::gemm_plan plan = device_plan<gk::gemm_pack_policy>(p);
    UNSCOPED_INFO(plan.describe());
    return expected(plan);
  };
  const auto enqueue = [](const foundry::gemm_problem<In, float>& p, cuda::stream_ref s) {
    foundry::detail::launch_plan(device_plan<gk::gemm_pack_policy>(p), p, {}, s);
  };
  return foundry::test::check_gemm_outcome(foundry::test::run_gemm_case<In>(c, path, enqueue), "default plan");
}

// A case of the sweep's kind (alpha 1, beta 0, C padded by `c_pad`), leading dimensions the
// stored row length rounded up to `ld_multiple`, plus `pad`, on the operands `pad_a`/`pad_b` select.
foundry::test::gemm_case sweep_case(foundry::test::gemm_shape sh, bool a_k, bool b_n, std::int64_t ld_multiple, int pad,
                                    bool pad_a, bool pad_b, int c_pad) {
  foundry::test::gemm_case c = foundry::test::make_gemm_case(sh, 1.0f, 0.0f);
  c.a_k_contiguous = a_k;
  c.b_n_contiguous = b_n;
  c.ld_multiple = ld_multiple;
  c.ld_extra = pad;
  c.pad_a = pad_a;
  c.pad_b = pad_b;
  c.c_ld_extra = c_pad;
  return c;
}

}  // namespace

TEMPLATE_TEST_CASE("gemm runs the sweep's small misaligned problems on the plans the time model picks",
                   "[gpu][gemm][pack]", __nv_bfloat16, __half) {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  const auto split_fallback = [](const foundry::gemm_plan& plan) { return plan.fallback && plan.split_k > 1; };
  // 1950x23x670_rt_rt_p3_2_2 exactly: A M-contiguous, ld 1953; B K-contiguous, ld 672; ldc 25.
  // On the H200: rung 4's fallback in 7 slices of 96.
  CHECK(require_default_plan<TestType>(sweep_case({1950, 23, 670}, false, false, 8, 1, true, false, 2), split_fallback)
            .path);
  // 16x17x396_rn_cn_p0_7_4 with both leading dimensions 396 (the sweep's B has 403; the same
  // plan): one block, 7 slices of 64.
  CHECK(
      require_default_plan<TestType>(sweep_case({16, 17, 396}, true, false, 1, 0, true, true, 4), split_fallback).path);
  // 102x1461x554_rn_ct_p1_4_3 with lda 555, ldb 1462 (the sweep's 1465; the same plan): 5 slices of 128.
  CHECK(require_default_plan<TestType>(sweep_case({102, 1461, 554}, true, true, 1, 1, true, true, 3), split_fallback)
            .path);
  // 12x470x7800_rt_rn_p6_1_5 with lda 13, ldb 471 (the sweep's 18 and 471; the same plan): 8
  // blocks; on 132 SMs 31 slices of 256, past the 16 of a larger C (reduced several warps to an
  // element).
  CHECK(require_default_plan<TestType>(sweep_case({12, 470, 7800}, false, true, 1, 1, true, true, 5), split_fallback)
            .path);
  // 82x14x11373_rt_ct_p6_3_5 exactly: A (ld 88) aligned, B N-contiguous with ld 17, packed to 16;
  // the fast kernel in 15 slices of 768.
  CHECK(require_default_plan<TestType>(sweep_case({82, 14, 11373}, false, true, 1, 3, false, true, 5),
                                       [](const foundry::gemm_plan& plan) {
                                         return !plan.fallback && plan.pack_b && !plan.pack_a &&
                                                plan.rung == foundry::best_gemm_rung<TestType, float>();
                                       })
            .path);
}

namespace {

// One problem of the back-to-back test: row-major A (m × k) and B (k × n) with leading
// dimensions k + pad_a and n + pad_b, C (m × n) with n + pad_c.
struct chained_shape {
  std::int64_t m, n, k;
  int pad_a, pad_b, pad_c;
};

}  // namespace

TEMPLATE_TEST_CASE("gemm calls back to back on one stream each see the C that the call before wrote", "[gpu][gemm]",
                   float, __nv_bfloat16) {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  // Every kernel of a GEMM (the copies of misaligned operands, the product, the split-K
  // reduce) is a programmatic dependent launch on sm_90: it may start while the kernel
  // before it runs and must wait before its first access. Three calls into one C, with
  // no synchronisation: C = AB, C = AB + C, C = -AB/2 + C, so each reads the C the one
  // before wrote (through its reduce where K is split). The shapes take, on an H100 or
  // H200: rung 4's fallback split 5 ways (fp32: rung 3 split twice), split wgmma or rung
  // 3, the skinny kernels split along K (both orientations), a packed operand.
  const chained_shape shapes[] = {{1492, 37, 139, 6, 2, 0}, {256, 256, 4096, 0, 0, 0}, {3, 2000, 3000, 0, 0, 0},
                                  {2000, 5, 3000, 1, 0, 3}, {300, 200, 700, 1, 3, 0},  {33, 31, 1, 0, 0, 0}};
  foundry::stream s;
  struct operands {
    std::vector<TestType> a, b;
    foundry::device_buffer<TestType> da, db;
    foundry::device_buffer<float> dc;
  };
  std::vector<operands> ops;
  std::uint64_t seed = 70;
  for (const chained_shape& sh : shapes) {
    operands o;
    o.a = random_matrix<TestType>(sh.m * (sh.k + sh.pad_a), seed++);
    o.b = random_matrix<TestType>(sh.k * (sh.n + sh.pad_b), seed++);
    o.da = foundry::test::to_device(o.a, s);
    o.db = foundry::test::to_device(o.b, s);
    o.dc = foundry::test::poisoned_device_buffer<float>(static_cast<std::size_t>(sh.m * (sh.n + sh.pad_c)), s);
    ops.push_back(std::move(o));
  }
  foundry::synchronize(s);  // the operands are in place; from here on, nothing waits
  for (const auto& [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{1.0f, 1.0f}, std::pair{-0.5f, 1.0f}}) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const chained_shape& sh = shapes[i];
      foundry::gemm(alpha, matrix_view<const TestType>{ops[i].da.data(), sh.m, sh.k, sh.k + sh.pad_a}, matrix_op::none,
                    matrix_view<const TestType>{ops[i].db.data(), sh.k, sh.n, sh.n + sh.pad_b}, matrix_op::none, beta,
                    matrix_view<float>{ops[i].dc.data(), sh.m, sh.n, sh.n + sh.pad_c}, s);
    }
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const chained_shape& sh = shapes[i];
    const auto got = foundry::test::to_host(ops[i].dc, s);
    // Each call rounds its K-term sums in fp32: at most gamma_k sum|a||b| (k u, u = 2^-24)
    // apart from the double reference, whatever the order or split; the three calls and
    // their blends stay within 3 k u sum|a||b| + 4 u |C|. A missed call is off by half
    // the product or more, and a read of the poison gives NaN.
    const double u = 0x1.0p-24;
    std::int64_t wrong = 0;
    for (std::int64_t r = 0; r < sh.m; ++r) {
      for (std::int64_t c = 0; c < sh.n; ++c) {
        double sum = 0.0, scale = 0.0;
        for (std::int64_t p = 0; p < sh.k; ++p) {
          const double term = double{to_float(ops[i].a[static_cast<std::size_t>(r * (sh.k + sh.pad_a) + p)])} *
                              to_float(ops[i].b[static_cast<std::size_t>(p * (sh.n + sh.pad_b) + c)]);
          sum += term;
          scale += std::abs(term);
        }
        const double expected = 1.5 * sum;
        const double bound = 3.0 * static_cast<double>(sh.k) * u * scale + 4.0 * u * std::abs(expected);
        const float value = got[static_cast<std::size_t>(r * (sh.n + sh.pad_c) + c)];
        wrong += std::abs(value - expected) <= bound ? 0 : 1;  // NaN fails
      }
    }
    CAPTURE(sh.m, sh.n, sh.k, sh.pad_a, sh.pad_b, sh.pad_c);
    CHECK(wrong == 0);
  }
}
