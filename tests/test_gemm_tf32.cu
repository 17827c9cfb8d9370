// TF32: foundry::gemm with fp32 inputs under gemm_math::tf32 runs the wgmma kernel with TF32
// operands (gemm_wgmma.cuh), after packing any operand that is not K-major with 16-byte rows
// (gemm_pack.cuh, transposed where needed).
//
// - host-only, on every machine: the plan's choices for named shapes and layouts (rung, TF32,
//   tile, which copy is transposed, leading dimensions, workspace, split), the TMA path's
//   conditions for fp32, the stage geometry of the TF32 policy, and the fp32 path wherever
//   TF32 is not asked for or cannot run.
// - [gpu] against a CPU reference accumulated in double from the fp32 inputs as stored. They
//   need compute capability 9.0 and sm_90a code in this binary; elsewhere each case prints
//   "SKIPPED: <why>" and returns, which ctest reports as skipped.
//
// Tolerance. The tensor cores read each input as TF32, dropping the low 13 of its 23
// mantissa bits (or rounding them: either way the input's relative error is below 2^-10), so
// each product a·b carries a relative error below 2^-10 + 2^-10 + 2^-20 < 2^-9 + 2^-20; the
// product of two 11-bit significands is exact in fp32, and fp32 accumulation inside and
// across the wgmma adds at most about (K + 1)·2^-23 of Σ|a·b|; one rounding of alpha·acc +
// beta·c adds 2^-24 of the result. So every element must satisfy
//     |c - ref| <= (2^-9 + (K + 2)·2^-23 + 2^-20) · 1.25 · (|alpha|·Σ_p |a_ip·b_pj| + |beta|·|c0_ij|)
// (a quarter of margin over the worst case): 2.5e-3 of the magnitude at small K, 2.5e-3 +
// 3.7e-5 at K = 200. That is below one wrong product wherever the terms are comparable and
// K < ~400 (every case below but the split-K one, where the relative Frobenius error and the
// bit-level split-K tests of the 16-bit rungs carry the check); a wrong 16-byte chunk (4
// products), fragment row or tile edge is far outside it. The relative Frobenius error must
// stay below 1e-2 as for 16-bit inputs. And to show that TF32 really ran (the plan could say
// tf32 and the fp32 path run), a case with K = 512 must differ from the exact product by more
// than fp32 arithmetic can (relative Frobenius above 1e-5: fp32 gives ~1e-7 there, TF32 ~1e-4).
#include <catch2/catch.hpp>

#include <foundry/gemm/gemm.cuh>
#include <foundry/gemm/gemm_wgmma.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/gemm_plan_support.cuh>
#include <support/gemm_test_case.cuh>
#include <support/test_support.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

using foundry::gemm_math;
using foundry::gemm_rung;
using foundry::matrix_layout;
using foundry::matrix_op;
using foundry::matrix_view;

namespace {

namespace gk = foundry::gemm_kernels;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Why this process cannot run the TF32 kernel, or "" if it can.
std::string tf32_unavailable_reason() {
  if (!gk::gemm_wgmma_built) return "no sm_90a code in this binary (FOUNDRY_HAS_SM90A is 0)";
  const int cc = foundry::get_device_properties().compute_capability();
  if (!gk::gemm_wgmma_available(cc)) return "the device is sm_" + std::to_string(cc) + "; the TF32 kernel is sm_90a";
  return {};
}

#define SKIP_UNLESS_TF32_RUNS() FOUNDRY_SKIP_FOR_REASON(tf32_unavailable_reason())

// The element bound of the file comment, as a fraction of the magnitude, for inner extent k.
double tf32_bound_scale(std::int64_t k) {
  return 1.25 * (std::ldexp(1.0, -9) + static_cast<double>(k + 2) * std::ldexp(1.0, -23) + std::ldexp(1.0, -20));
}

using foundry::test::pack_any_size;
constexpr auto device_of = foundry::test::h200_like;

// A fake address, `offset` bytes into a 4 KiB-aligned region: the plan reads only alignment.
template <class T>
const T* fake_address(std::uintptr_t offset) {
  return foundry::test::fake_address<T>(std::uintptr_t{1} << 20 | offset);
}

// An m × n × k fp32 problem under gemm_math::tf32, A and B row-major and dense (B N-contiguous,
// so not K-major), at fake 16-byte aligned addresses.
foundry::gemm_problem<float, float> tf32_problem(std::int64_t m, std::int64_t n, std::int64_t k) {
  foundry::gemm_problem<float, float> p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = fake_address<float>(0);
  p.lda = k;
  p.b = fake_address<float>(std::uintptr_t{1} << 16);
  p.ldb = n;
  p.c = const_cast<float*>(fake_address<float>(std::uintptr_t{1} << 18));
  p.ldc = n;
  p.math = gemm_math::tf32;
  return p;
}

// The same problem with B stored K-contiguous (column-major B, or op(B) of a row-major B^T).
foundry::gemm_problem<float, float> k_major(foundry::gemm_problem<float, float> p) {
  p.b_n_contiguous = false;
  p.ldb = p.k;
  return p;
}

// The plan foundry::gemm follows on this device under gemm_math::tf32, packing as `Policy` says.
template <class Policy>
foundry::gemm_plan device_plan(const foundry::gemm_problem<float, float>& p) {
  return foundry::test::plan_on_this_device<Policy>(p, gemm_rung::wgmma);
}

// Runs case c under gemm_math::tf32 (as foundry::gemm: the plan, then launch_plan) and checks
// the result with the TF32 bound; the outcome's path says whether the plan is the TF32 wgmma
// kernel with exactly the copies that the layout and alignment need.
template <class Policy = pack_any_size>
foundry::test::gemm_outcome require_tf32(foundry::test::gemm_case c, cuda::std::span<float> workspace = {}) {
  c.bound_scale = tf32_bound_scale(c.k);
  INFO(foundry::test::describe(c));
  const auto with_tf32 = [](foundry::gemm_problem<float, float> p) {
    p.math = gemm_math::tf32;
    return p;
  };
  const auto path = [&](const foundry::gemm_problem<float, float>& p) {
    const foundry::gemm_plan plan = device_plan<Policy>(with_tf32(p));
    UNSCOPED_INFO(plan.describe());
    const bool a_rows_aligned = p.lda % 4 == 0 && foundry::is_aligned(p.a, 16);
    const bool b_rows_aligned = p.ldb % 4 == 0 && foundry::is_aligned(p.b, 16);
    const bool a_copied = !p.a_k_contiguous || !a_rows_aligned;
    const bool b_copied = p.b_n_contiguous || !b_rows_aligned;
    return plan.rung == gemm_rung::wgmma && plan.tf32 && plan.pack_a == a_copied && plan.pack_b == b_copied &&
           plan.pack_a_transposed == !p.a_k_contiguous && plan.pack_b_transposed == p.b_n_contiguous;
  };
  const auto enqueue = [&](const foundry::gemm_problem<float, float>& p, cuda::stream_ref s) {
    foundry::detail::launch_plan(device_plan<Policy>(with_tf32(p)), with_tf32(p), workspace, s);
  };
  return foundry::test::check_gemm_outcome(foundry::test::run_gemm_case<float>(c, path, enqueue), "TF32 plan");
}

// Case `sh` with pad `pad` floats on the leading dimensions (stored row length rounded up to 8,
// plus pad), `offset` floats before the operands, alpha 1.25, beta -0.5, and C padded (ld n + 3)
// and one float off its allocation's start.
foundry::test::gemm_case tf32_case(foundry::test::gemm_shape sh, int pad, int offset) {
  foundry::test::gemm_case c = foundry::test::make_gemm_case(sh, 1.25f, -0.5f);
  c.ld_extra = pad;
  c.operand_offset = offset;
  c.c_ld_extra = 3;
  c.c_offset = 1;
  return c;
}

}  // namespace

TEST_CASE("make_gemm_plan runs fp32 inputs as TF32 on the wgmma kernel only when asked", "[gemm][plan][tf32]") {
  const foundry::device_properties h200 = device_of(90);
  if (!gk::gemm_wgmma_built) {
    WARN("no sm_90a code in this binary: the TF32 plan is the fp32 one");
    CHECK(foundry::make_gemm_plan(k_major(tf32_problem(4096, 4096, 4096)), h200).rung == gemm_rung::register_blocked);
    return;
  }
  // K-major, aligned: the TF32 kernel as it is, 32 floats of K per stage, nothing copied.
  const foundry::gemm_plan direct = foundry::make_gemm_plan(k_major(tf32_problem(4096, 4096, 4096)), h200);
  INFO(direct.describe());
  CHECK((direct.rung == gemm_rung::wgmma && direct.tf32 && !direct.pack_a && !direct.pack_b));
  CHECK((direct.block_m == 128 && direct.block_n == 256 && direct.block_k == 32 && direct.stages == 4));
  CHECK((direct.split_k == 1 && direct.workspace_bytes == 0));
  CHECK(contains(direct.describe(), "wgmma (tf32) 128x256x32, 4 stages, 1 block/SM, split-K 1: TF32"));

  // The default, gemm_math::fp32: rung 3, whatever the layout.
  auto exact = k_major(tf32_problem(4096, 4096, 4096));
  exact.math = gemm_math::fp32;
  const foundry::gemm_plan fp32 = foundry::make_gemm_plan(exact, h200);
  CHECK((fp32.rung == gemm_rung::register_blocked && !fp32.tf32 && !fp32.pack_b));

  // No TF32 kernel on sm_80 (nor without sm_90a code): the fp32 path.
  const foundry::gemm_plan ampere = foundry::make_gemm_plan(tf32_problem(4096, 4096, 4096), device_of(80));
  CHECK((ampere.rung == gemm_rung::register_blocked && !ampere.tf32 && !ampere.pack_b));
}

TEST_CASE("a TF32 plan copies each operand that is not K-major, transposed, and realigns the others",
          "[gemm][plan][tf32][pack]") {
  if (!gk::gemm_wgmma_built) {
    WARN("SKIPPED: no sm_90a code in this binary");
    return;
  }
  const foundry::device_properties h200 = device_of(90);
  // Row-major A and B (the benchmark's layout): B is N-contiguous, copied transposed to N rows of K.
  const foundry::gemm_plan nn = foundry::make_gemm_plan(tf32_problem(4096, 4096, 4096), h200);
  INFO(nn.describe());
  CHECK((nn.rung == gemm_rung::wgmma && nn.tf32 && !nn.pack_a && nn.pack_b && nn.pack_b_transposed));
  CHECK((nn.packed_ldb == 4096 && nn.pack_bytes == 4096u * 4096u * 4u && nn.workspace_bytes == nn.pack_bytes));
  CHECK(contains(nn.describe(), ", B packed (transposed, ld 4096), split-K 1 (67108864 bytes of workspace): TF32"));

  // A M-contiguous (column-major) with 1001 rows of K = 3000 and a K-major B: A's copy is
  // 1001 rows of 3000 floats (3000 is a multiple of 4).
  auto m_major = k_major(tf32_problem(1001, 4096, 3000));
  m_major.a_k_contiguous = false;
  m_major.lda = 1001;
  const foundry::gemm_plan tn = foundry::make_gemm_plan(m_major, h200);
  INFO(tn.describe());
  CHECK((tn.rung == gemm_rung::wgmma && tn.pack_a && tn.pack_a_transposed && !tn.pack_b));
  CHECK((tn.packed_lda == 3000 && tn.pack_bytes == foundry::round_up<std::size_t>(1001u * 3000u * 4u, 256)));

  // K-major both, A's leading dimension 4097: A copied as it is (not transposed) to ld 4100;
  // both transposed and B realigned when A is M-contiguous and B N-contiguous with ld 4099.
  auto ragged = k_major(tf32_problem(4096, 4096, 4097));
  ragged.lda = 4097;
  ragged.ldb = 4100;
  const foundry::gemm_plan realigned = foundry::make_gemm_plan(ragged, h200);
  CHECK((realigned.pack_a && !realigned.pack_a_transposed && realigned.packed_lda == 4100 && !realigned.pack_b));
  CHECK(contains(realigned.describe(), ", A packed (ld 4100), "));
  auto both = tf32_problem(4096, 4096, 4096);
  both.a_k_contiguous = false;
  both.ldb = 4099;
  const foundry::gemm_plan ab = foundry::make_gemm_plan(both, h200);
  CHECK((ab.pack_a && ab.pack_a_transposed && ab.pack_b && ab.pack_b_transposed));
  CHECK(contains(ab.describe(), ", A and B packed (transposed, ld 4096, 4096), "));

  // The copies come first in the workspace, each 256-byte aligned, and packed_problem points the
  // kernel at K-major copies.
  const foundry::gemm_problem<float, float> q = gk::packed_problem(both, ab, 1u << 20);
  CHECK((q.a_k_contiguous && !q.b_n_contiguous && q.lda == 4096 && q.ldb == 4096));
  CHECK(reinterpret_cast<std::uintptr_t>(q.b) - reinterpret_cast<std::uintptr_t>(q.a) == 4096u * 4096u * 4u);
  CHECK(gk::gemm_wgmma_tma_path(q));

  // 1024 x 1024 x 8192: 32 block tiles, so 4 slices of 2048 (a multiple of the 32-deep stage)
  // after B's copy.
  const foundry::gemm_plan deep = foundry::make_gemm_plan(tf32_problem(1024, 1024, 8192), h200);
  CHECK((deep.pack_b && deep.pack_b_transposed && deep.split_k == 4 && deep.k_per_split == 2048));
  CHECK(deep.workspace_bytes == deep.pack_bytes + 4u * 1024u * 1024u * sizeof(float));
}

TEST_CASE("a TF32 plan keeps to the fp32 path where copying would cost more than the product",
          "[gemm][plan][tf32][pack]") {
  const foundry::device_properties h200 = device_of(90);
  // 64^3 with a row-major B: the copy's launch costs more than the product (gemm_pack_policy).
  const foundry::gemm_plan tiny = foundry::make_gemm_plan(tf32_problem(64, 64, 64), h200);
  CHECK((tiny.rung == gemm_rung::register_blocked && !tiny.tf32 && !tiny.pack_b && tiny.pack_bytes == 0));
  if (gk::gemm_wgmma_built) CHECK(contains(tiny.why, "TF32 asked for, but"));
  // The same product K-major and aligned needs no copy: TF32 on one block tile.
  if (gk::gemm_wgmma_built) CHECK(foundry::make_gemm_plan(k_major(tf32_problem(64, 64, 64)), h200).tf32);
  // 64 x 4096 x 4096: B's copy would move 128 MiB for a 2 GFLOP product.
  CHECK_FALSE(foundry::make_gemm_plan(tf32_problem(64, 4096, 4096), h200).tf32);
  // Skinny (M <= 8, 2 MiB of large operand or more) and K = 0 keep their own rungs.
  CHECK(foundry::make_gemm_plan(k_major(tf32_problem(8, 16384, 16384)), h200).rung == gemm_rung::skinny);
  CHECK(foundry::make_gemm_plan(k_major(tf32_problem(4096, 4096, 0)), h200).rung == gemm_rung::naive);
}

TEST_CASE("the TF32 stage is one 128-byte row of 32 floats, four k8 wgmma deep", "[gemm][wgmma][tf32]") {
  using shape = gk::detail::wgmma_shape<gk::wgmma_tf32_policy>;
  STATIC_REQUIRE(shape::element_bytes == 4);
  STATIC_REQUIRE(shape::k_per_wgmma == 8);
  STATIC_REQUIRE(shape::k_steps == 4);
  STATIC_REQUIRE(shape::stage_bytes == 48 * 1024);
  STATIC_REQUIRE(shape::shared_bytes == gk::detail::wgmma_shape<gk::wgmma_policy>::shared_bytes);
  STATIC_REQUIRE(gk::detail::wgmma_operand<true, 256, 4>::box_inner == 32);
  STATIC_REQUIRE(gk::detail::wgmma_operand<true, 256, 4>::k_offset(3) == 96);
  STATIC_REQUIRE(std::is_same_v<gk::wgmma_default_policy<float>, gk::wgmma_tf32_policy>);
}

TEST_CASE("the TMA path for fp32 needs both operands K-major", "[gemm][wgmma][tf32]") {
  auto p = k_major(tf32_problem(256, 256, 256));
  CHECK(gk::gemm_wgmma_tma_path(p));
  p.b_n_contiguous = true;
  p.ldb = 256;
  CHECK_FALSE(gk::gemm_wgmma_tma_path(p));
  p = k_major(tf32_problem(256, 256, 256));
  p.a_k_contiguous = false;
  CHECK_FALSE(gk::gemm_wgmma_tma_path(p));
  p = k_major(tf32_problem(256, 256, 256));
  p.lda = 258;  // rows 8 bytes off 16
  CHECK_FALSE(gk::gemm_wgmma_tma_path(p));
  p.lda = 260;
  CHECK(gk::gemm_wgmma_tma_path(p));
  p.a = fake_address<float>(4);
  CHECK_FALSE(gk::gemm_wgmma_tma_path(p));
}

TEST_CASE("gemm with gemm_math::tf32 is right in every layout and transpose", "[gpu][gemm][tf32]") {
  SKIP_UNLESS_TF32_RUNS();
  // 800 x 700 x 250: 2.8e8 FLOPs, above gemm_pack_policy::min_flops, and copies of A and B
  // (1.5 MB) below the product's own bytes (4.6 MB), so the public call copies whatever operand
  // is not K-major (transposed) or has rows off 16 bytes (K = 250: realigned). Every layout of
  // A and B, and C row- or column-major by turns.
  const std::int64_t m = 800, n = 700, k = 250;
  foundry::stream s;
  const auto a = foundry::test::random_vector<float>(static_cast<std::size_t>(m * k), -1.0f, 1.0f, 41);
  const auto b = foundry::test::random_vector<float>(static_cast<std::size_t>(k * n), -1.0f, 1.0f, 42);
  const auto c0 = foundry::test::random_vector<float>(static_cast<std::size_t>(m * n), -1.0f, 1.0f, 43);
  auto da = foundry::test::to_device(a, s);
  auto db = foundry::test::to_device(b, s);
  const float alpha = 0.75f, beta = -1.5f;
  const double bound_scale = tf32_bound_scale(k);
  for (const matrix_layout la : {matrix_layout::row_major, matrix_layout::col_major}) {
    for (const matrix_op oa : {matrix_op::none, matrix_op::transpose}) {
      for (const matrix_layout lb : {matrix_layout::row_major, matrix_layout::col_major}) {
        for (const matrix_op ob : {matrix_op::none, matrix_op::transpose}) {
          {
            const matrix_layout lc = (la == lb) == (oa == ob) ? matrix_layout::row_major : matrix_layout::col_major;
            // The stored arrays are the same; only their reading changes.
            const std::int64_t a_rows = oa == matrix_op::none ? m : k, a_cols = oa == matrix_op::none ? k : m;
            const std::int64_t b_rows = ob == matrix_op::none ? k : n, b_cols = ob == matrix_op::none ? n : k;
            const std::int64_t lda = la == matrix_layout::row_major ? a_cols : a_rows;
            const std::int64_t ldb = lb == matrix_layout::row_major ? b_cols : b_rows;
            const std::int64_t ldc = lc == matrix_layout::row_major ? n : m;
            auto dc = foundry::test::to_device(c0, s);
            const matrix_view<const float> va{da.data(), a_rows, a_cols, lda, la};
            const matrix_view<const float> vb{db.data(), b_rows, b_cols, ldb, lb};
            const matrix_view<float> vc{dc.data(), m, n, ldc, lc};
            auto problem = foundry::make_gemm_problem<float, float>(alpha, va, oa, vb, ob, beta, vc);
            problem.math = gemm_math::tf32;
            const foundry::gemm_plan plan = foundry::make_gemm_plan(problem);
            INFO(plan.describe());
            CHECK(plan.tf32);
            foundry::gemm(alpha, va, oa, vb, ob, beta, vc, s, gemm_math::tf32);
            const auto got = foundry::test::to_host(dc, s);
            const auto at = [](std::int64_t r, std::int64_t c, std::int64_t ld, matrix_layout l) {
              return static_cast<std::size_t>(l == matrix_layout::row_major ? r * ld + c : c * ld + r);
            };
            std::int64_t wrong = 0;
            for (std::int64_t i = 0; i < m; ++i) {
              for (std::int64_t j = 0; j < n; ++j) {
                double sum = 0.0, magnitude = 0.0;
                for (std::int64_t p = 0; p < k; ++p) {
                  const double x = oa == matrix_op::none ? a[at(i, p, lda, la)] : a[at(p, i, lda, la)];
                  const double y = ob == matrix_op::none ? b[at(p, j, ldb, lb)] : b[at(j, p, ldb, lb)];
                  sum += x * y;
                  magnitude += std::fabs(x * y);
                }
                const double old = c0[at(i, j, ldc, lc)];
                const double expected = double{alpha} * sum + double{beta} * old;
                const double bound = bound_scale * (std::fabs(double{alpha}) * magnitude + std::fabs(beta * old));
                wrong += std::fabs(got[at(i, j, ldc, lc)] - expected) <= bound ? 0 : 1;
              }
            }
            INFO("A " << (la == matrix_layout::row_major ? "row" : "col") << (oa == matrix_op::none ? "" : "^T")
                      << ", B " << (lb == matrix_layout::row_major ? "row" : "col")
                      << (ob == matrix_op::none ? "" : "^T") << ", C "
                      << (lc == matrix_layout::row_major ? "row" : "col"));
            CHECK(wrong == 0);
          }
        }
      }
    }
  }
}

TEST_CASE("gemm with gemm_math::tf32 packs every pad 0..7 of A and B, and bases one float off",
          "[gpu][gemm][tf32][pack]") {
  SKIP_UNLESS_TF32_RUNS();
  for (const bool a_k : {true, false}) {
    for (const bool b_n : {true, false}) {
      for (int pad = 0; pad < 8; ++pad) {
        for (const int offset : {0, 1}) {
          foundry::test::gemm_case c = tf32_case({130, 197, 161}, pad, offset);
          c.a_k_contiguous = a_k;
          c.b_n_contiguous = b_n;
          CHECK(require_tf32(c).path);
        }
      }
    }
  }
}

TEST_CASE("gemm with gemm_math::tf32 handles K = 1, K = 3, one block tile and ragged edges", "[gpu][gemm][tf32]") {
  SKIP_UNLESS_TF32_RUNS();
  for (const foundry::test::gemm_shape sh : {foundry::test::gemm_shape{257, 255, 1},
                                             {129, 300, 3},
                                             {64, 64, 32},
                                             {17, 33, 31},
                                             {255, 257, 65},
                                             {1000, 260, 33}}) {
    for (const bool a_k : {true, false}) {
      foundry::test::gemm_case c = tf32_case(sh, 0, 0);
      c.a_k_contiguous = a_k;
      c.b_n_contiguous = !a_k;
      CHECK(require_tf32(c).path);
    }
  }
}

TEST_CASE("gemm with gemm_math::tf32 never reads C when beta is 0 and writes only C's window", "[gpu][gemm][tf32]") {
  SKIP_UNLESS_TF32_RUNS();
  // run_gemm_case leaves C NaN when beta == 0 and everywhere outside the window.
  foundry::test::gemm_case c = tf32_case({300, 520, 200}, 5, 1);
  c.beta = 0.0f;
  c.alpha = -2.0f;
  CHECK(require_tf32(c).path);
}

TEST_CASE("gemm with gemm_math::tf32 packs and splits K, into its own workspace or a caller's poisoned one",
          "[gpu][gemm][tf32][pack]") {
  SKIP_UNLESS_TF32_RUNS();
  // 130 x 260 x 2048: 2 block tiles for 132 SMs, so K is split; the slices follow the copies.
  foundry::test::gemm_case c = tf32_case({130, 260, 2048}, 3, 1);
  c.a_k_contiguous = false;
  auto shape = foundry::test::gemm_case_shape<float>(c);
  shape.math = gemm_math::tf32;
  const foundry::gemm_plan plan = device_plan<pack_any_size>(shape);
  INFO(plan.describe());
  REQUIRE((plan.pack_a && plan.pack_b && plan.split_k > 1));
  foundry::test::check_own_then_poisoned_workspace(
      plan.workspace_bytes, [&c](cuda::std::span<float> workspace) { return require_tf32(c, workspace); });
}

TEST_CASE("gemm with gemm_math::tf32 really multiplies TF32: its error is above fp32's", "[gpu][gemm][tf32]") {
  SKIP_UNLESS_TF32_RUNS();
  foundry::test::gemm_case c = tf32_case({256, 256, 512}, 0, 0);
  c.beta = 0.0f;
  c.b_n_contiguous = false;
  const foundry::test::gemm_outcome tf32 = require_tf32(c);
  INFO("relative Frobenius error of TF32 " << tf32.relative_frobenius);
  CHECK(tf32.path);
  CHECK(tf32.relative_frobenius > 1e-5);
  CHECK(tf32.relative_frobenius < 2e-3);
}
