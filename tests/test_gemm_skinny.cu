// The skinny rung (gemm/gemm_skinny.cuh): vector and skinny products, M or N small, for fp32,
// fp16 and bf16 inputs, against a double-accumulated CPU reference; and, on the host, the
// plan's choice of it for named shapes.
//
// Tolerance, the same for the three input types: the reference uses the very values the
// kernel reads (16-bit inputs rounded once, on the host), and each step of the kernel's
// accumulation rounds once (a product of 16-bit inputs is exact in fp32, 24 bits holding
// 11 x 11 or 8 x 8 significant bits; an fmaf of fp32 inputs rounds a * b + acc once), so the
// only error is the fp32 accumulation: at most gamma(K + 3) * (|alpha| *
// sum_p |A(i, p) B(p, j)| + |beta| |C(i, j)|) (foundry::test::float_sum_tolerance(K + 4)), K
// terms plus the split-K sum, alpha, beta and the final rounding. This worst-case bound grows
// as K^2 / 4 on these uniform [-1, 1] inputs (sum_p |a b| ~ K / 4): ~ 2e-5 at K = 33, ~ 0.016
// at K = 1030, ~ 0.25 at K = 4097, against |a b| ~ 1/4 on average for one term missing or
// wrong (and ~ 0.3 sqrt(K / 512) for a missing K chunk). At K = 4097 a single missing term
// therefore shows in only ~ 40% of the elements (P(|a b| > 1/4)), i.e. in hundreds of them.
// 16-bit inputs with 2 rows or more mostly run on the tensor cores (gemm_skinny_mma.cuh), which add
// a block of 16 exact products to the fp32 accumulator with truncation rather than rounding
// to nearest (Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor
// cores", 2021): up to about one unit of 2^-23 per term instead of half of one, so those
// plans take the same bound with twice the terms, float_sum_tolerance(2 (K + 4)).
//
// The kernels are reached through gemm_kernels::launch_skinny with the plan of
// make_gemm_plan(p, gemm_rung::skinny, ...), so this binary instantiates only the skinny
// kernels; foundry::gemm's dispatch to them is asserted on the host, and test_gemm_fp32.cu's
// small shapes run them through foundry::gemm.
#include <catch2/catch.hpp>

#include <foundry/gemm/gemm.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using foundry::gemm_rung;
using foundry::matrix_layout;
using foundry::matrix_op;
using foundry::matrix_view;
namespace gk = foundry::gemm_kernels;

namespace {

template <class T>
T from_float_any(float x) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else {
    return foundry::test::from_float<T>(x);
  }
}

// A stored matrix on the host, `offset` elements into its buffer (1: misaligned for any vector
// load), with the leading dimension its contiguous extent plus `pad`.
template <class T>
struct host_matrix {
  std::int64_t rows = 0, cols = 0, ld = 0, offset = 0;
  matrix_layout layout = matrix_layout::row_major;
  std::vector<T> data;

  [[nodiscard]] std::int64_t index(std::int64_t i, std::int64_t j) const {
    return offset + (layout == matrix_layout::row_major ? i * ld + j : j * ld + i);
  }
};

template <class T>
host_matrix<T> make_matrix(std::int64_t rows, std::int64_t cols, matrix_layout layout, int pad, int offset,
                           std::uint64_t seed_id) {
  host_matrix<T> x;
  x.rows = rows, x.cols = cols, x.layout = layout, x.offset = offset;
  const bool row_major = layout == matrix_layout::row_major;
  x.ld = (row_major ? cols : rows) + pad;
  const std::int64_t outer = row_major ? rows : cols;
  const auto values =
      foundry::test::random_vector<float>(static_cast<std::size_t>(offset + outer * x.ld + 1), -1.0f, 1.0f, seed_id);
  x.data.resize(values.size());
  for (std::size_t e = 0; e < values.size(); ++e) x.data[e] = from_float_any<T>(values[e]);
  return x;
}

// One problem: op(A) is m × k, op(B) k × n, C m × n inside a larger buffer.
struct skinny_case {
  std::int64_t m = 1, n = 1, k = 1;
  matrix_layout la = matrix_layout::row_major, lb = matrix_layout::row_major, lc = matrix_layout::row_major;
  matrix_op oa = matrix_op::none, ob = matrix_op::none;
  int pad_a = 0, pad_b = 0, pad_c = 0;
  int offset = 0;  // elements each base pointer is moved by (1: misaligned)
  float alpha = 1.0f, beta = 0.0f;
  int split_k = 0;  // 0: the plan's automatic choice
  // NaN in every element of A's and B's buffers outside their views (the pads, the offset,
  // the guard): a kernel that reads past a row, past K or past the slice multiplies it in.
  bool poison_pads = false;
  // The tensor-core kernel with 8 rows: run the plan with the warps on their own tiles even
  // where it would have them share K (small problems), so that both forms meet each shape.
  bool own_tiles = false;
};

// Sets every element of x's buffer outside its rows x cols view to NaN.
template <class T>
void poison_outside_view(host_matrix<T>& x) {
  std::vector<char> in_view(x.data.size(), 0);
  for (std::int64_t i = 0; i < x.rows; ++i) {
    for (std::int64_t j = 0; j < x.cols; ++j) in_view[static_cast<std::size_t>(x.index(i, j))] = 1;
  }
  const T nan = from_float_any<T>(std::numeric_limits<float>::quiet_NaN());
  for (std::size_t e = 0; e < x.data.size(); ++e) {
    if (!in_view[e]) x.data[e] = nan;
  }
}

std::string describe(const skinny_case& c) {
  auto l = [](matrix_layout x) { return x == matrix_layout::row_major ? "R" : "C"; };
  auto o = [](matrix_op x) { return x == matrix_op::none ? "N" : "T"; };
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " A" + l(c.la) + o(c.oa) + " B" +
         l(c.lb) + o(c.ob) + " C" + l(c.lc) + " pads " + std::to_string(c.pad_a) + std::to_string(c.pad_b) +
         std::to_string(c.pad_c) + " offset " + std::to_string(c.offset) + " alpha " + std::to_string(c.alpha) +
         " beta " + std::to_string(c.beta) + " split " + std::to_string(c.split_k) +
         (c.poison_pads ? " NaN pads" : "") + (c.own_tiles ? " own tiles" : "");
}

// Layouts and transposes number 32: bit 0 A's layout, 1 A's op, 2 B's layout, 3 B's op, 4 C's layout.
skinny_case with_layouts(skinny_case c, int combo) {
  c.la = combo & 1 ? matrix_layout::col_major : matrix_layout::row_major;
  c.oa = combo & 2 ? matrix_op::transpose : matrix_op::none;
  c.lb = combo & 4 ? matrix_layout::col_major : matrix_layout::row_major;
  c.ob = combo & 8 ? matrix_op::transpose : matrix_op::none;
  c.lc = combo & 16 ? matrix_layout::col_major : matrix_layout::row_major;
  return c;
}

// Runs `c` through launch_skinny and checks every element of C against the reference, and
// that every element of C's buffer outside its view kept its bits (NaN poison when beta == 0).
// Returns the plan it ran.
template <class T>
foundry::gemm_plan check_skinny(const skinny_case& c, cuda::std::span<float> workspace = {}) {
  INFO(describe(c));
  foundry::stream s;
  const bool a_none = c.oa == matrix_op::none, b_none = c.ob == matrix_op::none;
  auto a = make_matrix<T>(a_none ? c.m : c.k, a_none ? c.k : c.m, c.la, c.pad_a, c.offset, 1);
  auto b = make_matrix<T>(b_none ? c.k : c.n, b_none ? c.n : c.k, c.lb, c.pad_b, c.offset, 2);
  if (c.poison_pads) {
    poison_outside_view(a);
    poison_outside_view(b);
  }
  auto c_host = make_matrix<float>(c.m, c.n, c.lc, c.pad_c, c.offset, 3);
  c_host.data.resize(c_host.data.size() + 7);  // trailing guard
  if (c.beta == 0.0f) std::fill(c_host.data.begin(), c_host.data.end(), foundry::test::poison_value<float>());
  for (std::size_t e = c_host.data.size() - 7; e < c_host.data.size(); ++e) c_host.data[e] = 1234.5f;
  const std::vector<float> c_before = c_host.data;

  const auto d_a = foundry::test::to_device(a.data, s);
  const auto d_b = foundry::test::to_device(b.data, s);
  auto d_c = foundry::test::to_device(c_host.data, s);
  const matrix_view<const T> va{d_a.data() + a.offset, a.rows, a.cols, a.ld, a.layout};
  const matrix_view<const T> vb{d_b.data() + b.offset, b.rows, b.cols, b.ld, b.layout};
  const matrix_view<float> vc{d_c.data() + c_host.offset, c.m, c.n, c_host.ld, c.lc};
  const auto p = foundry::make_gemm_problem<T, float>(c.alpha, va, c.oa, vb, c.ob, c.beta, vc);
  foundry::gemm_plan plan =
      foundry::make_gemm_plan(p, gemm_rung::skinny, foundry::get_device_properties().sm_count, c.split_k);
  const auto oriented = gk::detail::skinny_orient(p);
  if (c.own_tiles && gk::skinny_uses_mma(oriented))
    plan.block_n = gk::skinny_mma_policy::block_large(oriented.b_n_contiguous);
  INFO(plan.describe());
  REQUIRE(plan.rung == gemm_rung::skinny);
  gk::launch_skinny<T>(plan, p, workspace, s);
  const std::vector<float> got = foundry::test::to_host(d_c, s);

  const bool mma = gk::skinny_uses_mma(oriented);
  const std::size_t terms = (mma ? 2 : 1) * (static_cast<std::size_t>(c.k) + 4);  // see the file comment
  std::vector<char> in_view(got.size(), 0);
  int bad = 0;
  for (std::int64_t i = 0; i < c.m; ++i) {
    for (std::int64_t j = 0; j < c.n; ++j) {
      double sum = 0.0, sum_abs = 0.0;
      for (std::int64_t q = 0; q < c.k; ++q) {
        const double x = foundry::test::as_double(a.data[a_none ? a.index(i, q) : a.index(q, i)]);
        const double y = foundry::test::as_double(b.data[b_none ? b.index(q, j) : b.index(j, q)]);
        sum += x * y;
        sum_abs += std::fabs(x * y);
      }
      const auto e = static_cast<std::size_t>(c_host.index(i, j));
      in_view[e] = 1;
      const double old = c.beta == 0.0f ? 0.0 : c_before[e];
      const double ref = c.alpha * sum + c.beta * old;
      const double bound = std::fabs(c.alpha) * sum_abs + std::fabs(c.beta) * std::fabs(old);
      const double tolerance = foundry::test::float_sum_tolerance(terms, bound);
      if (!(std::fabs(got[e] - ref) <= tolerance) && bad++ < 5) {
        FAIL_CHECK("C(" << i << ", " << j << ") = " << got[e] << ", reference " << ref << " +- " << tolerance);
      }
    }
  }
  for (std::size_t e = 0; e < got.size(); ++e) {
    if (!in_view[e] && std::memcmp(&got[e], &c_before[e], sizeof(float)) != 0 && bad++ < 5) {
      FAIL_CHECK("element " << e << " of C's buffer, outside its view, was written: " << got[e]);
    }
  }
  CHECK(bad == 0);
  return plan;
}

// The shapes of the issue: M in {1, 2, 3, 16} with N large, N in {1, 5} with M large, each K.
// The layouts, pads, misalignment, alpha and beta turn with the shape's index, so that every
// pad and both alignments meet each kernel.
template <class T>
void check_named_shapes(const std::vector<std::int64_t>& ks) {
  // 2^8 + 1: two full column tiles of 128 and a ragged one, or one of 256 (16-bit, up to 4 rows)
  constexpr std::int64_t large = 257;
  struct mn {
    std::int64_t m, n;
  };
  const mn shapes[] = {{1, large}, {2, large}, {3, large}, {16, large}, {large, 1}, {large, 5}};
  int index = 0;
  for (const std::int64_t k : ks) {
    for (const mn& shape : shapes) {
      skinny_case c;
      c.m = shape.m, c.n = shape.n, c.k = k;
      c = with_layouts(c, (index * 5) % 32);
      c.pad_a = index % 8, c.pad_b = (index + 3) % 8, c.pad_c = (index + 5) % 8;
      c.offset = (index / 2) % 2;
      c.alpha = index % 3 == 0 ? 1.0f : -0.75f;
      c.beta = index % 2 == 0 ? 0.0f : 0.5f;
      check_skinny<T>(c);
      ++index;
    }
  }
}

}  // namespace

TEMPLATE_TEST_CASE("skinny rung matches the reference for small M or N with K in {1, 31, 33}", "[gpu]", float, __half,
                   __nv_bfloat16) {
  check_named_shapes<TestType>({1, 31, 33});
}

TEMPLATE_TEST_CASE("skinny rung matches the reference for small M or N with K = 4097 (split K)", "[gpu][large]", float,
                   __half, __nv_bfloat16) {
  check_named_shapes<TestType>({4097});
}

TEMPLATE_TEST_CASE("skinny rung matches the reference in every layout and transpose, pads 0..7, misaligned bases",
                   "[gpu][racecheck_slow]", float, __half, __nv_bfloat16) {
  // Small M (B streamed along n or along k, by B's layout) and small N (solved as C^T = B^T A^T).
  for (int combo = 0; combo < 32; ++combo) {
    for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{3, 133}, {133, 5}}) {
      skinny_case c;
      c.m = m, c.n = n, c.k = 37;
      c = with_layouts(c, combo);
      c.pad_a = combo % 8, c.pad_b = (combo + 3) % 8, c.pad_c = (combo + 6) % 8;
      c.offset = (combo / 8) % 2;
      c.alpha = 1.25f;
      c.beta = combo % 2 == 0 ? 0.0f : -0.5f;
      check_skinny<TestType>(c);
    }
  }
}

TEMPLATE_TEST_CASE("skinny rung takes vector loads at aligned leading dimensions and matches the reference",
                   "[gpu][racecheck_slow]", float, __half, __nv_bfloat16) {
  // Leading dimensions multiples of one 16-byte vector (4 fp32, 8 16-bit elements) and
  // 256-byte aligned buffers: the vector path, with ragged ends in n (262) and in k (1030,
  // past two K chunks of 512).
  for (int combo = 0; combo < 32; ++combo) {
    for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{7, 262}, {262, 4}}) {
      skinny_case c;
      c.m = m, c.n = n, c.k = 1030;
      c = with_layouts(c, combo);
      auto aligning_pad = [](std::int64_t contiguous) {
        constexpr int vector = gk::skinny_elements_per_load<TestType>;
        return static_cast<int>((vector - contiguous % vector) % vector);
      };
      const bool a_k = (c.la == matrix_layout::row_major) == (c.oa == matrix_op::none);
      const bool b_n = (c.lb == matrix_layout::row_major) == (c.ob == matrix_op::none);
      c.pad_a = aligning_pad(a_k ? c.k : c.m);
      c.pad_b = aligning_pad(b_n ? c.n : c.k);
      c.beta = combo % 2 == 0 ? 0.0f : 2.0f;
      check_skinny<TestType>(c);
    }
  }
}

TEMPLATE_TEST_CASE("skinny rung's 16-byte loads of 16-bit B match the reference at ragged tiles and every pad", "[gpu]",
                   __half, __nv_bfloat16) {
  // Along n, 1 and 3 rows take lanes of 8 columns (tiles of 256) and 8 rows lanes of 4 (tiles
  // of 128); along k, steps of 256 k. n = 255, 257, 520 end inside or just past a tile; k = 519
  // ends 7 into the second chunk, inside a step. B's pads 0..7 make its leading dimension a
  // multiple of 8 at one pad only (vector loads) and not at the others (scalar loads); the
  // misaligned base forces scalar loads at any pad.
  for (const std::int64_t m : {1, 3, 8}) {
    for (const std::int64_t n : {255, 257, 520}) {
      for (const int combo : {0, 4}) {  // B row-major (along n), column-major (along k)
        for (int pad = 0; pad < 10; ++pad) {
          skinny_case c;
          c.m = m, c.n = n, c.k = 519;
          c = with_layouts(c, combo);
          c.pad_b = pad % 8;
          c.offset = pad / 8;  // pads 0 and 1 again with misaligned bases
          c.beta = pad % 2 == 0 ? 0.0f : 0.5f;
          c.poison_pads = pad % 3 == 0;
          check_skinny<TestType>(c);
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("skinny rung's tensor-core kernel matches the reference at every row bucket, ragged tiles and K",
                   "[gpu]", __half, __nv_bfloat16) {
  // Rows 2..33 of the small side (the rung named: foundry::gemm takes it up to 8): buckets of
  // 8, 16 and 32 and their edges (33: a second row group). The large side ends inside or just past a block (64 rows of B^T along k, 256
  // columns of B along n) and inside an mma tile of 16; K ends inside a block of 32 (the
  // permuted k order), the second round (128 along k) and the second chunk of 512. The four combos
  // give both kernels (B along n or along k) with both stagings of the small operand (A
  // k-contiguous: rows of k; m-contiguous: rows of m through ldmatrix.trans); aligned pads
  // (vector loads) alternate with odd pads and misaligned bases (scalar loads).
  struct extent {
    std::int64_t n, k;
  };
  int index = 0;
  for (const std::int64_t m : {2, 7, 8, 9, 16, 17, 31, 32, 33}) {
    for (const extent& e : {extent{129, 7}, extent{257, 33}, extent{300, 135}, extent{130, 1030}}) {
      for (const int combo : {0, 1, 4, 5}) {  // A row / column-major x B row / column-major
        skinny_case c;
        c.m = m, c.n = e.n, c.k = e.k;
        c = with_layouts(c, combo);
        if (index % 3 == 0) {  // aligned: leading dimensions multiples of 8
          const bool a_k = c.la == matrix_layout::row_major, b_n = c.lb == matrix_layout::row_major;
          c.pad_a = static_cast<int>((8 - (a_k ? c.k : c.m) % 8) % 8);
          c.pad_b = static_cast<int>((8 - (b_n ? c.n : c.k) % 8) % 8);
        } else {
          c.pad_a = index % 8, c.pad_b = (index + 3) % 8, c.offset = index % 2;
        }
        c.pad_c = index % 5;
        c.poison_pads = index % 2 == 1;
        c.alpha = index % 4 == 0 ? 1.0f : -1.5f;
        c.beta = index % 2 == 0 ? 0.0f : 0.5f;
        const foundry::gemm_plan plan = check_skinny<TestType>(c);
        // The tensor cores unless B^T is read along k with scalar loads (skinny_uses_mma);
        // these small products with up to 8 rows have the warps share K, then also not.
        const bool mma = c.lb == matrix_layout::row_major || (c.offset == 0 && (c.k + c.pad_b) % 8 == 0);
        CHECK((std::string(plan.why).find("mma.sync") != std::string::npos) == mma);
        CHECK((std::string(plan.why).find("sharing K") != std::string::npos) == (mma && m <= 8));
        if (mma && m <= 8) {
          c.own_tiles = true;
          check_skinny<TestType>(c);
        }
        ++index;
      }
    }
  }
  // Small N, solved as C^T = B^T A^T, on both kernels.
  for (const int combo : {0, 1, 4, 5, 16}) {
    skinny_case c;
    c.m = 300, c.n = 12, c.k = 600;
    check_skinny<TestType>(with_layouts(c, combo));
  }
}

TEST_CASE("skinny rung with explicit split-K counts and a caller workspace matches the reference", "[gpu]") {
  foundry::stream s;
  // 7 and 12: slices shorter than a chunk of 512 (along n in whole rounds of 32, or of 64
  // where B is read one element at a time; 256 along k).
  for (const int splits : {1, 2, 3, 7, 12}) {
    for (const int combo : {0, 4, 16, 21}) {
      // pad_b 0 or 2: B's leading dimension 70 or 72 (row-major B: scalar, then vector along
      // n), 1500 or 1502 (column-major B: vector, then scalar along k), so that each kernel
      // meets the split in both load paths.
      for (const int pad_b : {0, 2}) {
        skinny_case c;
        c.m = 5, c.n = 70, c.k = 1500;  // 3 chunks of 512: up to 3 slices
        c = with_layouts(c, combo);
        c.pad_b = pad_b;
        c.split_k = splits;
        c.beta = 0.25f;
        foundry::device_buffer<float> workspace(static_cast<std::size_t>(splits * c.m * c.n), s);
        s.synchronize();  // allocated on s, used on check_skinny's own stream
        check_skinny<float>(c, workspace.span());
        check_skinny<__nv_bfloat16>(c);
      }
    }
  }
}

TEST_CASE("skinny rung with deep automatic splits (few column tiles, long K) matches the reference", "[gpu]") {
  // Issue 21's shapes: one or two column tiles, so K is cut into slices of a few hundred
  // (on 132 SMs: 10 x 288 along n, 6 x 512 along k; the last slice ends inside a round).
  skinny_case c;
  c.m = 3, c.n = 58, c.k = 2835;
  // A "cn" (column-major, lda 5) and B "ct" (column-major n x k, transposed, ld 59): along n.
  c = with_layouts(c, 1 | 4 | 8);
  c.pad_a = 2, c.pad_b = 1;
  CHECK(check_skinny<__nv_bfloat16>(c).split_k > 1);
  CHECK(check_skinny<__half>(c).split_k > 1);
  c.pad_a = c.pad_b = 0;
  for (const int combo : {0, 4, 17}) {  // row-major (along n), B column-major (along k), C column-major
    skinny_case d = with_layouts(c, combo);
    d.beta = combo == 0 ? 0.0f : 0.5f;
    CHECK(check_skinny<__nv_bfloat16>(d).split_k > 1);
    CHECK(check_skinny<float>(d).split_k > 1);
  }
  // Small N, solved as C^T: 14 rows of 16 (the 16-row kernels; along n with lda 82, B is
  // read one element at a time in the wide layout: rounds of 16 k; along k rounds of 128).
  c.m = 82, c.n = 14, c.k = 11373;
  for (const int combo : {0, 1}) {  // A row-major (along k), column-major (along n)
    skinny_case d = with_layouts(c, combo);
    d.alpha = -0.75f, d.beta = combo == 0 ? 0.0f : 0.25f;
    CHECK(check_skinny<float>(d).split_k > 1);
  }
}

TEMPLATE_TEST_CASE("skinny rung reads B one element at a time in either along-n layout", "[gpu]", float, __half,
                   __nv_bfloat16) {
  // ldb off the vectors (pad 1, and the base off by one): a grid of many column tiles keeps
  // the wide layout (n = 20000: 79 to 157 tiles, split to fill the slots), a small one takes
  // the narrow layout (n = 301, K = 31: 5 tiles of 64 against 2 or 3 too shallow to split).
  // NaN in the pads catches a read past
  // a row. 16-bit types stay on the CUDA cores with one row only.
  const std::vector<std::int64_t> rows =
      std::is_same_v<TestType, float> ? std::vector<std::int64_t>{1, 16} : std::vector<std::int64_t>{1};
  for (const std::int64_t m : rows) {
    for (const std::int64_t n : {20000, 301}) {
      skinny_case c;
      c.m = m, c.n = n, c.k = n == 301 ? 31 : 300;
      c.pad_b = 1, c.offset = m == 1 ? 0 : 1, c.pad_c = 3;
      c.poison_pads = true;
      c.beta = m == 1 ? 0.0f : 0.5f;
      const foundry::gemm_plan plan = check_skinny<TestType>(c);
      const bool narrow =
          plan.block_n == gk::skinny_policy::along_n_columns(static_cast<int>(plan.block_m),
                                                             gk::skinny_elements_per_load<TestType>, true);
      CHECK(narrow == (n == 301));
    }
  }
}

TEST_CASE("skinny rung rejects a caller workspace that is too small", "[gpu]") {
  foundry::stream s;
  const auto d_a = foundry::device_buffer<float>(4 * 2048, s);
  const auto d_b = foundry::device_buffer<float>(2048 * 64, s);
  auto d_c = foundry::device_buffer<float>(4 * 64, s);
  const auto p =
      foundry::make_gemm_problem<float, float>(1.0f, matrix_view<const float>{d_a.data(), 4, 2048, 2048},
                                               matrix_op::none, matrix_view<const float>{d_b.data(), 2048, 64, 64},
                                               matrix_op::none, 0.0f, matrix_view<float>{d_c.data(), 4, 64, 64});
  const foundry::gemm_plan plan = foundry::make_gemm_plan(p, gemm_rung::skinny, 132, 2);
  REQUIRE(plan.split_k == 2);
  foundry::device_buffer<float> small(4 * 64, s);  // one slice's worth, two needed
  CHECK_THROWS_AS(gk::launch_skinny<float>(plan, p, small.span(), s), std::invalid_argument);
  CHECK_THROWS_AS(gk::launch_skinny<float>(foundry::make_gemm_plan(p, gemm_rung::naive, 132), p, {}, s),
                  std::invalid_argument);
  s.synchronize();
}

TEST_CASE("skinny rung named for more rows than it holds covers them in row groups", "[gpu]") {
  skinny_case c;
  c.m = 37, c.n = 70, c.k = 45;  // fp32: 3 groups of 16
  for (const int combo : {0, 5, 10, 31}) {
    check_skinny<float>(with_layouts(c, combo));
    check_skinny<__half>(with_layouts(c, combo));  // 2 groups of 32 (tensor cores) or 5 of 8
  }
  c.m = 70, c.n = 300, c.k = 200;  // bf16, tensor cores: 3 groups of 32, the last of 6 rows
  check_skinny<__nv_bfloat16>(c);
}

TEST_CASE("skinny rung with K = 0 sets C to beta * C and reads no C when beta = 0", "[gpu]") {
  for (const float beta : {0.0f, 0.5f}) {
    foundry::stream s;
    auto c_host = foundry::test::random_vector<float>(3 * 40, -1.0f, 1.0f, 4);
    if (beta == 0.0f) std::fill(c_host.begin(), c_host.end(), foundry::test::poison_value<float>());
    auto d_c = foundry::test::to_device(c_host, s);
    const auto p = foundry::make_gemm_problem<float, float>(
        2.0f, matrix_view<const float>{nullptr, 3, 0, 1}, matrix_op::none, matrix_view<const float>{nullptr, 0, 40, 40},
        matrix_op::none, beta, matrix_view<float>{d_c.data(), 3, 40, 40});
    gk::launch_skinny<float>(foundry::make_gemm_plan(p, gemm_rung::skinny, 132), p, {}, s);
    const auto got = foundry::test::to_host(d_c, s);
    for (std::size_t e = 0; e < got.size(); ++e) CHECK(got[e] == (beta == 0.0f ? 0.0f : beta * c_host[e]));
  }
}

namespace {

template <class In>
foundry::gemm_problem<In, float> plan_problem(std::int64_t m, std::int64_t n, std::int64_t k, bool a_k = true,
                                              bool b_n = true) {
  foundry::gemm_problem<In, float> p;
  p.m = m, p.n = n, p.k = k;
  p.a = reinterpret_cast<const In*>(std::uintptr_t{4096});
  p.lda = a_k ? k : m;
  p.a_k_contiguous = a_k;
  p.b = reinterpret_cast<const In*>(std::uintptr_t{8192});
  p.ldb = b_n ? n : k;
  p.b_n_contiguous = b_n;
  p.c = reinterpret_cast<float*>(std::uintptr_t{16384});
  p.ldc = n;
  return p;
}

// The skinny rung's own plan for `p` on 132 SMs, the rung named: foundry::gemm takes rung 3 for
// fp32 products from 9 rows or under 2 MiB of large operand, and the tiled rungs for 16-bit ones
// under 1 MiB on the tensor-core kernel, so the skinny plans of such shapes are asked for by name.
template <class In>
foundry::gemm_plan skinny_plan(const foundry::gemm_problem<In, float>& p) {
  return foundry::make_gemm_plan(p, gemm_rung::skinny, 132);
}

foundry::device_properties hopper() {
  foundry::device_properties d;
  d.compute_capability_major = 9;
  d.compute_capability_minor = 0;
  d.sm_count = 132;
  return d;
}

}  // namespace

TEST_CASE("make_gemm_plan takes the skinny rung for vector and skinny products only", "[gemm][plan]") {
  const foundry::device_properties h200 = hopper();
  for (const std::int64_t small : {1, 2, 8}) {
    CHECK(foundry::make_gemm_plan(plan_problem<float>(small, 16384, 16384), h200).rung == gemm_rung::skinny);
    CHECK(foundry::make_gemm_plan(plan_problem<float>(16384, small, 16384), h200).rung == gemm_rung::skinny);
  }
  // fp32 from 9 rows, or under 2 MiB of large operand (max(M, N) x K x 4 bytes), take rung 3.
  STATIC_REQUIRE(gk::skinny_fp32_gemm_max_rows == 8);
  STATIC_REQUIRE(gk::skinny_fp32_min_large_bytes == 2 * 1024 * 1024);
  for (const std::int64_t small : {9, 16}) {
    CHECK(foundry::make_gemm_plan(plan_problem<float>(small, 16384, 16384), h200).rung == gemm_rung::register_blocked);
    CHECK(foundry::make_gemm_plan(plan_problem<float>(16384, small, 16384), h200).rung == gemm_rung::register_blocked);
  }
  CHECK(foundry::make_gemm_plan(plan_problem<float>(4, 16384, 32), h200).rung == gemm_rung::skinny);  // 2 MiB
  CHECK(foundry::make_gemm_plan(plan_problem<float>(4, 16384, 31), h200).rung == gemm_rung::register_blocked);
  CHECK(foundry::make_gemm_plan(plan_problem<float>(32768, 1, 16), h200).rung == gemm_rung::skinny);
  CHECK(foundry::make_gemm_plan(plan_problem<float>(32767, 1, 16), h200).rung == gemm_rung::register_blocked);
  CHECK(foundry::make_gemm_plan(plan_problem<float>(1283, 3, 31), h200).rung == gemm_rung::register_blocked);
  // 16-bit inputs: from 1 MiB of large operand on the tensor-core kernel (4 rows along n here),
  // however small on the CUDA-core one: A^T streamed along k with scalar loads (lda 31), or one row.
  STATIC_REQUIRE(gk::skinny_mma_min_large_bytes == 1024 * 1024);
  CHECK(foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(4, 16384, 32), h200).rung == gemm_rung::skinny);
  CHECK(foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(4, 16384, 31), h200).rung != gemm_rung::skinny);
  CHECK(foundry::make_gemm_plan(plan_problem<__half>(1283, 3, 31, false, true), h200).rung != gemm_rung::skinny);
  CHECK(foundry::make_gemm_plan(plan_problem<__half>(1283, 3, 31), h200).rung == gemm_rung::skinny);
  CHECK(foundry::make_gemm_plan(plan_problem<__half>(1, 300, 31), h200).rung == gemm_rung::skinny);
  for (const std::int64_t small : {1, 5, 8}) {
    CHECK(foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(small, 16384, 16384), h200).rung == gemm_rung::skinny);
    CHECK(foundry::make_gemm_plan(plan_problem<__half>(16384, small, 4097, false, false), h200).rung ==
          gemm_rung::skinny);
  }
  // Past the threshold, square shapes, and K = 0 keep their rungs.
  CHECK(foundry::make_gemm_plan(plan_problem<float>(17, 16384, 16384), h200).rung == gemm_rung::register_blocked);
  CHECK(foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(16, 16384, 16384), h200).rung != gemm_rung::skinny);
  CHECK(foundry::make_gemm_plan(plan_problem<float>(4096, 4096, 4096), h200).rung == gemm_rung::register_blocked);
  CHECK(foundry::make_gemm_plan(plan_problem<__half>(1024, 1024, 8192), h200).rung != gemm_rung::skinny);
  CHECK(foundry::make_gemm_plan(plan_problem<float>(1, 16384, 0), h200).rung == gemm_rung::naive);
  STATIC_REQUIRE(gk::skinny_max_rows<float> == 16);
  STATIC_REQUIRE(gk::skinny_max_rows<__nv_bfloat16> == 8);
  // Before sm_80 (no bf16 mma.sync) 16-bit products leave the rung, as rung 4; fp32 keeps it.
  foundry::device_properties turing = h200;
  turing.compute_capability_major = 7, turing.compute_capability_minor = 5;
  STATIC_REQUIRE_FALSE(foundry::gemm_rung_supports<__half, float>(gemm_rung::skinny, 75));
  STATIC_REQUIRE(foundry::gemm_rung_supports<__half, float>(gemm_rung::skinny, 80));
  CHECK(foundry::make_gemm_plan(plan_problem<__half>(4, 16384, 16384), turing).rung == gemm_rung::naive);
  CHECK(foundry::make_gemm_plan(plan_problem<float>(4, 16384, 16384), turing).rung == gemm_rung::skinny);
}

TEST_CASE("the skinny plan names its tile, split and orientation", "[gemm][plan]") {
  const foundry::device_properties h200 = hopper();
  // A row vector times a row-major B: along n, 128 tiles of 128 columns for 132 SMs: K in 4.
  const foundry::gemm_plan row = foundry::make_gemm_plan(plan_problem<float>(1, 16384, 16384), h200);
  CHECK((row.block_m == 1 && row.block_n == 128 && row.block_k == 512 && row.min_blocks_per_sm == 4));
  CHECK((row.split_k == 4 && row.k_per_split == 4096 && row.workspace_bytes == 4u * 16384u * sizeof(float)));
  CHECK(row.describe().rfind("skinny 1x128x512, 1 stage, 4 block/SM, split-K 4 x 4096 (", 0) == 0);
  CHECK(std::string(row.why).find("small M") != std::string::npos);
  // 256 tiles: more than the SMs, fewer than the 528 resident slots: still split, in 2.
  CHECK(foundry::make_gemm_plan(plan_problem<float>(1, 32768, 16384), h200).split_k == 2);
  // A row-major matrix times a column vector: solved as C^T, along k, 512 tiles: no split.
  const foundry::gemm_plan column = foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(16384, 1, 16384), h200);
  CHECK((column.block_m == 1 && column.block_n == 32 && column.min_blocks_per_sm == 2 && column.split_k == 1));
  CHECK(std::string(column.why).find("small N") != std::string::npos);
  // Row buckets: 1, half, all of skinny_max_rows on the CUDA cores; 8 on the tensor cores
  // (16-bit, 2 to 8 rows), which say so, and 16 or 32 there when the rung is named.
  CHECK(foundry::make_gemm_plan(plan_problem<float>(3, 4096, 4096), h200).block_m == 8);
  CHECK(skinny_plan(plan_problem<float>(9, 4096, 4096)).block_m == 16);
  CHECK(foundry::make_gemm_plan(plan_problem<__half>(1, 4096, 4096), h200).block_m == 1);
  // 8 rows over 4096 x 4096: 16 tiles of 256 columns x 16 slices fill less than half the 528
  // slots, so the warps share K: 64 tiles of 64 columns x 8 slices of 512.
  for (const auto& [m, rows] : {std::pair<std::int64_t, int>{2, 8}, {8, 8}, {9, 16}, {16, 16}, {17, 32}, {32, 32}}) {
    const foundry::gemm_plan mma = foundry::make_gemm_plan(plan_problem<__half>(m, 4096, 4096), gemm_rung::skinny, 132);
    CHECK(
        (mma.block_m == rows && mma.block_n == (rows == 8 ? 64 : 256) && mma.min_blocks_per_sm == (rows == 8 ? 4 : 3)));
    CHECK(mma.split_k == (rows == 8 ? 8 : 16));
    CHECK((std::string(mma.why).find("sharing K") != std::string::npos) == (rows == 8));
    CHECK(std::string(mma.why).find("mma.sync") != std::string::npos);
    if (m <= 8) CHECK(foundry::make_gemm_plan(plan_problem<__half>(m, 4096, 4096), h200).describe() == mma.describe());
  }
  // Along k (A^T streamed, solved as C^T): the tensor cores with 16-byte loads of the large
  // operand, the CUDA cores with scalar ones (lda 4097).
  auto along_k = plan_problem<__half>(4096, 5, 4096);
  CHECK(foundry::make_gemm_plan(along_k, h200).block_n == 64);
  CHECK(std::string(foundry::make_gemm_plan(along_k, h200).why).find("mma.sync") != std::string::npos);
  along_k.lda = 4097;
  CHECK((foundry::make_gemm_plan(along_k, h200).block_n == 32 && foundry::make_gemm_plan(along_k, h200).block_m == 8));
  CHECK(std::string(foundry::make_gemm_plan(along_k, h200).why).find("mma.sync") == std::string::npos);
  // Named on a square shape: still a skinny plan, saying why it is slow.
  const foundry::gemm_plan named = foundry::make_gemm_plan(plan_problem<float>(512, 512, 512), gemm_rung::skinny, 132);
  CHECK((named.rung == gemm_rung::skinny && named.block_m == 16));
  CHECK(std::string(named.why).find("not skinny") != std::string::npos);
}

TEST_CASE("the skinny plan cuts a long K into slices of a few hundred when the column tiles are few", "[gemm][plan]") {
  const foundry::device_properties h200 = hopper();
  // 3 x 58 x 2835 bf16, A "cn" (column-major, lda 5), B "ct" (column-major n x k transposed,
  // ld 59): along n on the tensor cores. The warps' own tiles: one of 256 columns (4 warps x
  // 64) in 10 slices, 10 blocks of 528 slots; so the warps share K: one tile of 64 columns in
  // slices of one round of 32 k at least: 45 slices of 64 (H100 plan-space, session 25: 30
  // slices 8.4 us, the 18 of 160 that rounds for each warp gave 9.1).
  auto sweep = plan_problem<__nv_bfloat16>(3, 58, 2835, false, true);
  sweep.lda = 5, sweep.ldb = 59;
  const foundry::gemm_plan cn_ct = skinny_plan(sweep);
  CHECK(foundry::make_gemm_plan(sweep, h200).rung != gemm_rung::skinny);  // 0.3 MiB
  CHECK((cn_ct.rung == gemm_rung::skinny && cn_ct.block_m == 8 && cn_ct.block_n == 64));
  CHECK((cn_ct.split_k == 45 && cn_ct.k_per_split == 64 && cn_ct.workspace_bytes == 45u * 3u * 58u * sizeof(float)));
  CHECK(cn_ct.describe().rfind("skinny 8x64x512, 1 stage, 4 block/SM, split-K 45 x 64 (", 0) == 0);
  CHECK(std::string(cn_ct.why).find("sharing K") != std::string::npos);
  // The aligned row-major variant: the same plan.
  const foundry::gemm_plan rn = skinny_plan(plan_problem<__nv_bfloat16>(3, 58, 2835));
  CHECK((rn.block_n == 64 && rn.split_k == 45 && rn.k_per_split == 64));
  // B column-major with ld 2835 (scalar loads along k): the CUDA cores, two tiles of 32
  // columns for 264 slots; rounds of 512 k (two steps of 256, 8 k a lane): 6 x 512. With ld
  // 2840 (16-byte loads) the tensor cores: one tile of 64 rows of B^T in a few slices would
  // be a few blocks of 528 slots, so the warps share K: four tiles of 16 rows, 2835 / 512 = 5
  // slices wanted (128 k a round for each warp), 567 deep rounded up to 640: 5 x 640.
  auto column_b = plan_problem<__nv_bfloat16>(3, 58, 2835, true, false);
  const foundry::gemm_plan ck = foundry::make_gemm_plan(column_b, h200);
  CHECK((ck.block_m == 4 && ck.block_n == 32 && ck.split_k == 6 && ck.k_per_split == 512));
  column_b.ldb = 2840;
  const foundry::gemm_plan ck_mma = skinny_plan(column_b);
  CHECK((ck_mma.block_m == 8 && ck_mma.block_n == 16 && ck_mma.split_k == 5 && ck_mma.k_per_split == 640));
  // 82 x 14 x 11373 fp32, solved as C^T (14 rows of 16). A column-major: along n, one tile,
  // rounds of 16, slices of two rounds a warp at least (32): 355 slices wanted, the 256 of
  // max_splits, 45 deep rounded to 48: 237. With ld 82 (off the float4 alignment) B is read
  // one element at a time, still in the wide layout: the narrow one's two tiles of 64, in
  // rounds of 64 and slices of 128 at least (60 x 192), would make 120 blocks, not 237. A
  // row-major: along k, three tiles, rounds of 128: 44 slices wanted, 259 deep rounded to
  // 384: 30.
  auto column_a = plan_problem<float>(82, 14, 11373, false, true);
  const foundry::gemm_plan tall_n = skinny_plan(column_a);
  CHECK((tall_n.block_m == 16 && tall_n.block_n == 128 && tall_n.split_k == 237 && tall_n.k_per_split == 48));
  column_a.lda = 84;
  const foundry::gemm_plan tall_n_vector = skinny_plan(column_a);
  CHECK((tall_n_vector.block_n == 128 && tall_n_vector.split_k == 237 && tall_n_vector.k_per_split == 48));
  const foundry::gemm_plan tall_k = skinny_plan(plan_problem<float>(82, 14, 11373));
  CHECK((tall_k.block_n == 32 && tall_k.split_k == 30 && tall_k.k_per_split == 384));
  // At most 256 slices however long K (3907 deep rounded to 3936: 255).
  const foundry::gemm_plan deep = foundry::make_gemm_plan(plan_problem<float>(1, 16, 1000000), h200);
  CHECK((deep.split_k == 255 && deep.k_per_split == 3936));
  // Along n, slices of two rounds a warp at least: 8 rows of fp32 take rounds of 32 (4 warps x
  // 8 rows), so no split below K = 128, and 2 x 100 x 511 in 511 / 64 = 7 slices wanted, 73
  // deep rounded up to 96: 6. (301 x 1 x 87 with A row-major is solved as C^T along k, whose
  // slices are 256 deep at least: no split either.)
  CHECK(skinny_plan(plan_problem<float>(301, 1, 87)).split_k == 1);
  CHECK(skinny_plan(plan_problem<float>(2, 100, 127)).split_k == 1);
  CHECK(skinny_plan(plan_problem<float>(2, 100, 128)).split_k == 2);
  const foundry::gemm_plan short_k = skinny_plan(plan_problem<float>(2, 100, 511));
  CHECK((short_k.split_k == 6 && short_k.k_per_split == 96));
}

TEST_CASE("the skinny plan keeps the split of large skinny shapes", "[gemm][plan]") {
  const foundry::device_properties h200 = hopper();
  // 128 column tiles for 528 slots: 4 slices of 4096, as before the shallow slices.
  for (const std::int64_t m : {1, 8}) {
    const foundry::gemm_plan f32 = foundry::make_gemm_plan(plan_problem<float>(m, 16384, 16384), h200);
    CHECK((f32.split_k == 4 && f32.k_per_split == 4096));
  }
  // 16-bit: one row takes tiles of 256 columns (8 a lane), 64 tiles: 8 slices of 2048; eight
  // rows, on the tensor cores, tiles of 256 too (4 warps x 64).
  const foundry::gemm_plan bf16_1 = foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(1, 16384, 16384), h200);
  CHECK((bf16_1.block_n == 256 && bf16_1.split_k == 8 && bf16_1.k_per_split == 2048));
  const foundry::gemm_plan bf16_8 = foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(8, 16384, 16384), h200);
  CHECK((bf16_8.block_n == 256 && bf16_8.split_k == 8 && bf16_8.k_per_split == 2048));
  // 16384 x 8 x 16384 (along k): 256 tiles of 64 rows x 2 slices fill 512 of the 528 slots:
  // the warps keep their own tiles. A small product, 2 x 5851 x 224: 23 tiles of 256 columns
  // and K too short to split, so the warps share K: 92 tiles of 64 columns, in 4 slices of 64
  // (H100 plan-space, session 25: 8.1 us, unsplit 10.5).
  const foundry::gemm_plan tall = foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(16384, 8, 16384), h200);
  CHECK((tall.block_n == 64 && tall.split_k == 2 && std::string(tall.why).find("sharing K") == std::string::npos));
  const foundry::gemm_plan small = foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(2, 5851, 224), h200);
  CHECK((small.block_n == 64 && small.split_k == 4 && small.k_per_split == 64 &&
         std::string(small.why).find("sharing K") != std::string::npos));
  // 16 fp32 rows, named (foundry::gemm takes rung 3 from 9).
  CHECK(skinny_plan(plan_problem<float>(16, 16384, 16384)).split_k == 4);
  CHECK(foundry::make_gemm_plan(plan_problem<float>(1, 32768, 16384), h200).split_k == 2);
  CHECK(foundry::make_gemm_plan(plan_problem<__nv_bfloat16>(16384, 1, 16384), h200).split_k == 1);  // 512 tiles
}

TEMPLATE_TEST_CASE(
    "the CUDA-core along-n kernel holds 2 columns a lane where B's rows are off its vectors and the "
    "grid is small",
    "[gemm][plan]", float, __nv_bfloat16) {
  // As 301x1x87_rt_ct_p2_5_3 of the sweep, which is solved as C^T (B is A as stored, 87 x 301
  // with ld 303): here the 1 x 301 product with that B directly, the rung named.
  constexpr int elements = gk::skinny_elements_per_load<TestType>;
  auto p = plan_problem<TestType>(1, 301, 87);
  p.ldb = 303;
  const foundry::gemm_plan scalar = skinny_plan(p);
  INFO(scalar.describe());
  CHECK((scalar.rung == gemm_rung::skinny && scalar.block_m == 1 && scalar.block_n == 64 && scalar.split_k == 1));
  CHECK(gk::skinny_policy::split_unit_k(true, 1, elements, true) == 64);  // 4 warps x 16 rows in flight
  p.ldb = 304;                                                            // a multiple of 8: vectors
  const foundry::gemm_plan vector = skinny_plan(p);
  CHECK(vector.block_n == 32 * elements);
  p.b = p.b + 1;  // the base off the vector's alignment: scalars again
  CHECK(skinny_plan(p).block_n == 64);
  // A large grid keeps the wide layout, whose warps hold twice the bytes in flight: 1 x 16384
  // x 16384 with ldb off by 3 as 64 (bf16) or 128 (fp32) tiles split 8 or 4 (512 blocks); the
  // narrow layout would make as many.
  auto large = plan_problem<TestType>(1, 16384, 16384);
  large.ldb = 16387;
  const foundry::gemm_plan wide = skinny_plan(large);
  INFO(wide.describe());
  CHECK((wide.block_n == 32 * elements && wide.split_k == elements));
  CHECK(gk::skinny_policy::prefers_narrow(5, 6, 528));
  CHECK_FALSE(gk::skinny_policy::prefers_narrow(264, 528, 528));  // half the slots: wide
  CHECK_FALSE(gk::skinny_policy::prefers_narrow(100, 100, 528));  // no more blocks: wide
  if constexpr (std::is_same_v<TestType, float>) {
    // 16 rows: three wide tiles of 128; K = 31 cannot split (slices of 32 at least), so the
    // narrow layout's 5 tiles win; K = 87 splits the wide tiles in 2 slices of 48 (6 blocks),
    // more than the narrow layout's 5, so they stay.
    auto rows16 = plan_problem<float>(16, 301, 31);
    rows16.ldb = 302;
    CHECK(skinny_plan(rows16).block_n == 64);
    rows16.k = 87;
    const foundry::gemm_plan split = skinny_plan(rows16);
    INFO(split.describe());
    CHECK((split.block_n == 128 && split.split_k == 2 && split.k_per_split == 48));
  }
}

TEMPLATE_TEST_CASE("every skinny split is whole rounds of loads, fills at most the slots, and covers K exactly",
                   "[gemm][plan]", float, __nv_bfloat16) {
  const foundry::device_properties h200 = hopper();
  for (const std::int64_t m : {1, 3, 8, 16, 17, 32}) {
    for (const std::int64_t n : {1, 58, 300, 5000}) {
      for (const std::int64_t k : {1, 255, 700, 2835, 11373, 100000}) {
        for (const bool b_n : {true, false}) {
          const auto p = plan_problem<TestType>(m, n, k, true, b_n);
          const foundry::gemm_plan plan = foundry::make_gemm_plan(p, gemm_rung::skinny, h200.sm_count);
          INFO(m << "x" << n << "x" << k << " " << plan.describe());
          if (plan.split_k == 1) continue;
          const auto g = gk::detail::skinny_orient(p);
          const bool narrow = g.b_n_contiguous && !gk::skinny_uses_mma(g) &&
                              plan.block_n == gk::skinny_policy::along_n_columns(
                                                  plan.block_m, gk::skinny_elements_per_load<TestType>, true);
          const int unit = gk::skinny_uses_mma(g)
                               ? gk::skinny_mma_policy::split_unit_k(g.b_n_contiguous)
                               : gk::skinny_policy::split_unit_k(g.b_n_contiguous, plan.block_m,
                                                                 gk::skinny_elements_per_load<TestType>, narrow);
          const std::int64_t tiles =
              (g.n + plan.block_n - 1) / plan.block_n * ((g.m + plan.block_m - 1) / plan.block_m);
          const bool shared_k =
              gk::skinny_uses_mma(g) && plan.block_n == gk::skinny_mma_policy::block_large(g.b_n_contiguous, true);
          CHECK(plan.k_per_split % unit == 0);
          CHECK(plan.k_per_split >= (shared_k ? gk::skinny_mma_policy::shared_min_k_per_split(g.b_n_contiguous)
                                     : gk::skinny_uses_mma(g) ? gk::skinny_mma_policy::min_k_per_split
                                                              : gk::skinny_policy::min_k_per_split_for(
                                                                    g.b_n_contiguous, plan.block_m,
                                                                    gk::skinny_elements_per_load<TestType>, narrow)));
          CHECK((plan.split_k - 1) * plan.k_per_split < k);
          CHECK(plan.split_k * plan.k_per_split >= k);
          CHECK(plan.split_k <= gk::skinny_policy::max_splits);
          CHECK(plan.split_k * tiles <= std::int64_t{h200.sm_count} * plan.min_blocks_per_sm);
        }
      }
    }
  }
}

TEST_CASE("the along-n kernel shares a short K chunk among its warps in whole rounds", "[gemm][plan]") {
  auto share = [](int kc, int warp) {
    int begin = 0, end = 0;
    gk::detail::warp_k_share<4, 8>(kc, warp, begin, end);
    return std::pair<int, int>{begin, end};
  };
  CHECK(share(512, 0) == std::pair<int, int>{0, 128});  // a whole chunk: quarters, as before
  CHECK(share(512, 3) == std::pair<int, int>{384, 512});
  CHECK(share(288, 0) == std::pair<int, int>{0, 72});  // a slice of 288: every warp busy
  CHECK(share(288, 3) == std::pair<int, int>{216, 288});
  CHECK(share(19, 2) == std::pair<int, int>{16, 19});  // a ragged tail: the last warps idle
  CHECK(share(19, 3).first >= share(19, 3).second);
}

TEST_CASE("skinny_orient keeps a small M and swaps a small N into C^T = B^T A^T", "[gemm][plan]") {
  auto p = plan_problem<float>(3, 100, 50, true, false);
  p.ldc = 101;
  const auto kept = gk::detail::skinny_orient(p);
  CHECK((kept.m == 3 && kept.n == 100 && kept.a == p.a && kept.b == p.b && !kept.b_n_contiguous));
  CHECK((kept.c_row_stride == 101 && kept.c_col_stride == 1));
  auto q = plan_problem<float>(100, 3, 50, false, true);
  q.ldc = 7;
  const auto swapped = gk::detail::skinny_orient(q);
  CHECK((swapped.m == 3 && swapped.n == 100 && swapped.a == q.b && swapped.lda == q.ldb && swapped.b == q.a));
  CHECK((!swapped.a_k_contiguous && swapped.b_n_contiguous));  // B n-contiguous: B^T m-major; A m-major: A^T n-major
  CHECK((swapped.c_row_stride == 1 && swapped.c_col_stride == 7));
}
