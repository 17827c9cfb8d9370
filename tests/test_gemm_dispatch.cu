// The public foundry::gemm with 16-bit inputs: the dispatch reaches the fastest 16-bit rung of
// the device (wgmma on compute capability 9.0 when this binary has sm_90a code, which
// tests/CMakeLists.txt asks for; else the mma.sync tensor-core rung, sm_80+) and gives the right
// result in every layout. The rungs themselves are tested in test_gemm_wgmma.cu and
// test_gemm_tensor_core.cu; the fp32 rungs and the argument checks in test_gemm_fp32.cu.
#include <catch2/catch.hpp>

#include <foundry/gemm/gemm.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

using foundry::matrix_layout;
using foundry::matrix_op;
using foundry::matrix_view;

namespace {

using foundry::test::from_float;
using foundry::test::to_float;

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
  foundry::stream s;
  auto c = foundry::test::to_device(std::vector<float>(6, 2.0f), s);
  foundry::gemm(1.0f, matrix_view<const __nv_bfloat16>{nullptr, 2, 0, 0}, matrix_op::none,
                matrix_view<const __nv_bfloat16>{nullptr, 0, 3, 3}, matrix_op::none, 0.25f,
                matrix_view<float>{c.data(), 2, 3, 3}, s);
  CHECK(foundry::test::to_host(c, s) == std::vector<float>(6, 0.5f));
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
  CHECK((rb.block_m == 128 && rb.block_n == 128 && rb.block_k == 8 && rb.stages == 2 && rb.blocks_per_sm == 2));
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
  CHECK((tc.block_m == 128 && tc.block_n == 256 && tc.block_k == 64 && tc.stages == 3 && tc.blocks_per_sm == 1));
  CHECK((tc.split_k == 4 && tc.k_per_split == 2048));  // 32 tiles for 132 SMs
  CHECK(tc.split_k == gk::tensor_core_split_k(1024, 1024, 8192, 0, 132).splits);

  const foundry::gemm_plan shallow =
      foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(8192, 8192, 1024), gemm_rung::tensor_core, 132);
  CHECK((shallow.block_n == 128 && shallow.blocks_per_sm == 2 && shallow.split_k == 1));

  const foundry::gemm_plan wg = foundry::make_gemm_plan(deep, gemm_rung::wgmma, 132);
  CHECK(wg.rung == gemm_rung::wgmma);
  CHECK((wg.block_m == 128 && wg.block_n == 256 && wg.block_k == 64 && wg.stages == 4 && wg.blocks_per_sm == 1));
  CHECK((wg.split_k == gk::wgmma_split_k(1024, 1024, 8192, 0, 132).splits && wg.split_k == 4));
  const foundry::gemm_plan wg8 = foundry::make_gemm_plan(deep, gemm_rung::wgmma, 132, 8);
  CHECK((wg8.split_k == 8 && wg8.k_per_split == 1024 && wg8.workspace_bytes == 8u * 1024u * 1024u * sizeof(float)));
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
