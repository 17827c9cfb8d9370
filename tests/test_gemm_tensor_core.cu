// Rung 4 of the GEMM ladder: gemm_kernels::gemm_tensor_core (mma.sync, fp16/bf16 in, fp32 out).
//
// Two kinds of tests:
// - host-only: the index arithmetic the kernels use (swizzled shared tiles, the row addresses
//   handed to ldmatrix, the block order) checked against the PTX ISA's fragment layouts by an
//   emulated ldmatrix, plus bank-conflict freedom; these run on every machine;
// - [gpu]: the kernels against a CPU reference.
//
// Tolerance, for both bf16 and fp16 inputs. The reference accumulates in double the very
// values the GPU multiplies (the inputs rounded to bf16/fp16 first), so input rounding is not
// an error here. Products of two 8-bit (bf16) or 11-bit (fp16) significands are exact in
// fp32; what remains is fp32 accumulation inside and across mma instructions. Even with the
// truncating alignment that tensor cores use when adding, that is at most about K·2^-23 of
// Σ|a·b| — 1.2e-4 at the largest K tested (1000) — plus one rounding of alpha·acc + beta·c.
// So every element must satisfy
//     |c - ref| <= 1e-3 · (|alpha|·Σ_p |a_ip·b_pj| + |beta|·|c0_ij|),
// eight times that worst case. An indexing mistake moves an element by whole terms of
// average size Σ|a·b|/K: one wrong product exceeds the bound for K <= 255 (most shapes
// here), and the likelier mistakes (a 16-byte chunk of 8 products, a fragment row, a tile
// edge) exceed it at every tested K. The issue's bound, relative Frobenius norm <= 1e-2, is
// checked as well; it is much looser than the element-wise one.
#include <catch2/catch.hpp>

#include <foundry/gemm/gemm_tensor_core.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace gk = foundry::gemm_kernels;
namespace gkd = foundry::gemm_kernels::detail;

// ---------------------------------------------------------------------------------------------
// Host emulation of ldmatrix.x4 over a shared tile whose every 16-bit slot records which
// logical operand element (mn, k) the tile copy put there.

struct element {
  int mn = -1;
  int k = -1;
  bool operator==(const element& o) const { return mn == o.mn && k == o.k; }
};
std::ostream& operator<<(std::ostream& os, const element& e) { return os << "(mn " << e.mn << ", k " << e.k << ")"; }

// The tile for operand `Layout` as the global → shared copy fills it: element (mn, k) sits at
// stored row/column (mn, k) for a K-contiguous operand and (k, mn) otherwise.
template <class Layout, bool KContiguous, int Extent, int BlockK>
std::vector<element> filled_tile() {
  std::vector<element> slots(Layout::bytes / 2);
  for (int mn = 0; mn < Extent; ++mn) {
    for (int k = 0; k < BlockK; ++k) {
      const int row = KContiguous ? mn : k;
      const int col = KContiguous ? k : mn;
      const int offset = Layout::tile::element_offset(row, col);
      REQUIRE(offset >= 0);
      REQUIRE(offset < Layout::bytes);
      REQUIRE(offset % 2 == 0);
      REQUIRE(slots[offset / 2].mn == -1);  // a bijection: no slot written twice
      slots[offset / 2] = {mn, k};
    }
  }
  return slots;
}

// regs[lane][j][h]: element h (0 = low half) of register j of `lane` after
// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16, each lane passing fragment_offset(mn, k, lane).
// PTX: lanes 8j..8j+7 address the 8 rows of matrix j. Without .trans lane l receives row l/4,
// columns 2(l%4) and 2(l%4)+1; with .trans, rows 2(l%4) and 2(l%4)+1 of column l/4.
using fragment_regs = std::vector<std::vector<std::vector<element>>>;

template <class Layout>
fragment_regs emulate_ldmatrix_x4(const std::vector<element>& slots, int mn, int k) {
  fragment_regs regs(32, std::vector<std::vector<element>>(4, std::vector<element>(2)));
  for (int j = 0; j < 4; ++j) {
    int row_address[8];
    std::set<int> bank_groups;
    for (int r = 0; r < 8; ++r) {
      row_address[r] = Layout::fragment_offset(mn, k, 8 * j + r);
      REQUIRE(row_address[r] % 16 == 0);  // ldmatrix rows are 16-byte aligned
      REQUIRE(row_address[r] + 16 <= Layout::bytes);
      bank_groups.insert((row_address[r] / 16) % 8);
    }
    // One ldmatrix phase reads the 8 rows of one matrix: conflict-free when they fall in the
    // 8 different 16-byte groups of the 32 four-byte banks.
    CHECK(bank_groups.size() == 8);
    for (int lane = 0; lane < 32; ++lane) {
      for (int h = 0; h < 2; ++h) {
        const int row = Layout::transpose ? 2 * (lane % 4) + h : lane / 4;
        const int col = Layout::transpose ? lane / 4 : 2 * (lane % 4) + h;
        regs[lane][j][h] = slots[(row_address[row] + 2 * col) / 2];
      }
    }
  }
  return regs;
}

// PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type", .f16/.bf16:
// A (16×16): a_i in register i/2; row = g for i in {0,1,4,5}, g+8 otherwise;
//            col = 2t + (i&1), +8 for i >= 4.
// B (16×8):  b_i in register i/2; row (k) = 2t + (i&1), +8 for i >= 2; col (n) = g.
// (g = lane >> 2, t = lane % 4.)
template <class Layout, bool KContiguous, int Extent, int BlockK>
void check_a_fragments() {
  const auto slots = filled_tile<Layout, KContiguous, Extent, BlockK>();
  for (int m0 = 0; m0 < Extent; m0 += 16) {
    for (int k0 = 0; k0 < BlockK; k0 += 16) {
      const auto regs = emulate_ldmatrix_x4<Layout>(slots, m0, k0);
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2;
        const int t = lane % 4;
        for (int i = 0; i < 8; ++i) {
          const int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
          const int col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
          INFO("A tile at m " << m0 << ", k " << k0 << ", lane " << lane << ", a" << i);
          CHECK(regs[lane][i / 2][i % 2] == element{m0 + row, k0 + col});
        }
      }
    }
  }
}

template <class Layout, bool KContiguous, int Extent, int BlockK>
void check_b_fragments() {
  const auto slots = filled_tile<Layout, KContiguous, Extent, BlockK>();
  for (int n0 = 0; n0 < Extent; n0 += 16) {
    for (int k0 = 0; k0 < BlockK; k0 += 16) {
      const auto regs = emulate_ldmatrix_x4<Layout>(slots, n0, k0);
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2;
        const int t = lane % 4;
        // load_fragments: columns n0..n0+7 take {r0, r2}, columns n0+8..n0+15 take {r1, r3}.
        const int source[2][2] = {{0, 2}, {1, 3}};
        for (int half = 0; half < 2; ++half) {
          for (int i = 0; i < 4; ++i) {
            const int k = 2 * t + (i & 1) + (i >= 2 ? 8 : 0);
            const int n = g;
            INFO("B tile at n " << n0 + 8 * half << ", k " << k0 << ", lane " << lane << ", b" << i);
            CHECK(regs[lane][source[half][i / 2]][i % 2] == element{n0 + 8 * half + n, k0 + k});
          }
        }
      }
    }
  }
}

// The cp.async stores of 8 consecutive threads (one shared-memory wavefront of 16-byte
// stores) land in 8 different bank groups.
template <class Layout, int Threads>
void check_copy_is_conflict_free() {
  using tile = typename Layout::tile;
  using copier = gkd::tile_copier<__nv_bfloat16, tile, Threads>;
  for (int pass = 0; pass < copier::passes; ++pass) {
    for (int first = 0; first < Threads; first += 8) {
      std::set<int> groups;
      for (int thread = first; thread < first + 8; ++thread) {
        const int row = thread / tile::row_chunks + pass * copier::rows_per_pass;
        const int chunk = thread % tile::row_chunks;
        groups.insert((tile::offset(row, chunk) / 16) % 8);
      }
      CHECK(groups.size() == 8);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// GPU cases against a CPU reference.

using foundry::test::from_float;
using foundry::test::to_float;

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
};

std::string describe(const gemm_case& c) {
  std::ostringstream s;
  s << c.m << "x" << c.n << "x" << c.k << " alpha " << c.alpha << " beta " << c.beta << " A "
    << (c.a_k_contiguous ? "K" : "M") << "-contiguous, B " << (c.b_n_contiguous ? "N" : "K")
    << "-contiguous, ld multiple " << c.ld_multiple << " + " << c.ld_extra << ", operand offset "
    << c.operand_offset << ", ldc extra " << c.c_ld_extra << ", C offset " << c.c_offset;
  return s.str();
}

struct gemm_outcome {
  bool fast_path = false;
  std::int64_t out_of_bound = 0;      // elements beyond the element-wise bound (NaN included)
  double worst_ratio = 0.0;           // max |c - ref| / bound
  double relative_frobenius = 0.0;    // ||c - ref||_F / ||ref||_F
  std::int64_t touched_outside = 0;   // elements of C outside the m × n window that changed
};

// A stored operand: logical (rows × cols of the problem's op) values, rounded to In, placed
// in a buffer of `offset + stored_rows * ld` elements whose padding holds NaN, so that a
// kernel reading past the matrix is caught by the comparison.
template <class In>
struct stored_operand {
  std::vector<In> host;
  std::vector<double> logical;  // row-major (outer × inner) logical matrix, exact values
  std::int64_t ld = 0;
};

template <class In>
stored_operand<In> make_operand(std::int64_t outer, std::int64_t inner, bool inner_contiguous,
                                const gemm_case& c, std::uint64_t stream_id) {
  // Logical matrix outer × inner (A: m × k, B: k × n); stored rows are `inner_contiguous`
  // ? outer : inner.
  const std::int64_t stored_rows = inner_contiguous ? outer : inner;
  const std::int64_t stored_cols = inner_contiguous ? inner : outer;
  stored_operand<In> op;
  op.ld = foundry::round_up<std::int64_t>(std::max<std::int64_t>(stored_cols, 1), c.ld_multiple) + c.ld_extra;
  op.host.assign(static_cast<std::size_t>(c.operand_offset + stored_rows * op.ld),
                 from_float<In>(std::numeric_limits<float>::quiet_NaN()));
  const auto values = foundry::test::random_vector<float>(static_cast<std::size_t>(outer * inner), -1.0f, 1.0f,
                                                          stream_id);
  op.logical.resize(values.size());
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const In x = from_float<In>(values[static_cast<std::size_t>(o * inner + i)]);
      op.logical[static_cast<std::size_t>(o * inner + i)] = to_float(x);
      const std::int64_t at = inner_contiguous ? o * op.ld + i : i * op.ld + o;
      op.host[static_cast<std::size_t>(c.operand_offset + at)] = x;
    }
  }
  return op;
}

template <class In>
gemm_outcome run_case(const gemm_case& c) {
  foundry::stream s;
  // A: m × k, "inner" = k; B: k × n, "inner" = n.
  const auto a = make_operand<In>(c.m, c.k, c.a_k_contiguous, c, 1);
  const auto b = make_operand<In>(c.k, c.n, c.b_n_contiguous, c, 2);

  const std::int64_t ldc = c.n + c.c_ld_extra;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> c_host(static_cast<std::size_t>(c.c_offset + c.m * ldc), nan);
  const auto c0 = foundry::test::random_vector<float>(static_cast<std::size_t>(c.m * c.n), -1.0f, 1.0f, 3);
  if (c.beta != 0.0f) {
    for (std::int64_t i = 0; i < c.m; ++i) {
      for (std::int64_t j = 0; j < c.n; ++j) {
        c_host[static_cast<std::size_t>(c.c_offset + i * ldc + j)] = c0[static_cast<std::size_t>(i * c.n + j)];
      }
    }
  }  // with beta == 0 the window stays NaN: a kernel that reads C produces NaN

  auto a_dev = foundry::test::to_device(a.host, s);
  auto b_dev = foundry::test::to_device(b.host, s);
  auto c_dev = foundry::test::to_device(c_host, s);

  foundry::gemm_problem<In, float> p;
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.a = a_dev.data() + c.operand_offset;
  p.lda = a.ld;
  p.a_k_contiguous = c.a_k_contiguous;
  p.b = b_dev.data() + c.operand_offset;
  p.ldb = b.ld;
  p.b_n_contiguous = c.b_n_contiguous;
  p.c = c_dev.data() + c.c_offset;
  p.ldc = ldc;
  p.alpha = c.alpha;
  p.beta = c.beta;

  gemm_outcome out;
  out.fast_path = gk::gemm_tensor_core_fast_path(p);
  gk::gemm_tensor_core(p, s);
  const auto result = foundry::test::to_host(c_dev, s);

  double diff2 = 0.0;
  double ref2 = 0.0;
  for (std::int64_t i = 0; i < c.m; ++i) {
    for (std::int64_t j = 0; j < c.n; ++j) {
      double sum = 0.0;
      double magnitude = 0.0;
      for (std::int64_t q = 0; q < c.k; ++q) {
        const double term = a.logical[static_cast<std::size_t>(i * c.k + q)] *
                            b.logical[static_cast<std::size_t>(q * c.n + j)];
        sum += term;
        magnitude += std::fabs(term);
      }
      const double old = c.beta != 0.0f ? c0[static_cast<std::size_t>(i * c.n + j)] : 0.0;
      const double ref = double{c.alpha} * sum + double{c.beta} * old;
      const double bound = 1e-3 * (std::fabs(double{c.alpha}) * magnitude + std::fabs(double{c.beta} * old));
      const double got = result[static_cast<std::size_t>(c.c_offset + i * ldc + j)];
      const double err = std::fabs(got - ref);
      if (!(err <= bound)) ++out.out_of_bound;  // NaN fails too
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

// Runs `c` and checks it; returns the outcome for further checks (which path ran).
template <class In>
gemm_outcome require_matches(const gemm_case& c) {
  INFO(describe(c));
  const gemm_outcome out = run_case<In>(c);
  INFO("fast path " << out.fast_path << ", worst error / bound " << out.worst_ratio << ", relative Frobenius "
                    << out.relative_frobenius);
  CHECK(out.out_of_bound == 0);
  CHECK(out.relative_frobenius <= 1e-2);
  CHECK(out.touched_outside == 0);
  return out;
}

struct shape {
  std::int64_t m, n, k;
};

// The brief's odd shapes plus two that span many block tiles and K steps: 300 × 520 × 1000
// runs 32 pipeline steps (more than the 4 stages) over 3 × 3 tiles; 1157 × 300 × 64 has 10
// tile rows, more than one group (8) of the block order.
const std::vector<shape>& odd_shapes() {
  static const std::vector<shape> shapes{{1, 1, 1},       {16, 8, 16},    {17, 33, 65},
                                         {127, 129, 255}, {256, 128, 64}, {300, 520, 1000},
                                         {1157, 300, 64}};
  return shapes;
}

const std::vector<shape>& non_square_shapes() {
  static const std::vector<shape> shapes{{1, 700, 33}, {700, 1, 33}, {40, 300, 513}, {513, 40, 7}, {8, 8, 1000}};
  return shapes;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Host-only: the index arithmetic, checked against the PTX ISA.

namespace {

// check_a_fragments / check_b_fragments on the operand tile the kernels use for an
// Extent × BlockK operand stored K-contiguous or not (the tile type follows from the three).
template <bool KContiguous, int Extent, int BlockK>
void check_a_tile() {
  check_a_fragments<gkd::operand_tile<KContiguous, Extent, BlockK>, KContiguous, Extent, BlockK>();
}

template <bool KContiguous, int Extent, int BlockK>
void check_b_tile() {
  check_b_fragments<gkd::operand_tile<KContiguous, Extent, BlockK>, KContiguous, Extent, BlockK>();
}

}  // namespace

TEST_CASE("ldmatrix row addresses give every lane its mma.m16n8k16 A fragment", "[gemm][tensor_core]") {
  using policy = gk::tensor_core_policy;
  using fallback = gk::tensor_core_fallback_policy;
  SECTION("K-contiguous A (ldmatrix)") { check_a_tile<true, policy::block_m, policy::block_k>(); }
  SECTION("M-contiguous A (ldmatrix.trans)") { check_a_tile<false, policy::block_m, policy::block_k>(); }
  SECTION("fallback tile") { check_a_tile<true, fallback::block_m, fallback::block_k>(); }
}

TEST_CASE("ldmatrix row addresses give every lane its mma.m16n8k16 B fragments", "[gemm][tensor_core]") {
  using policy = gk::tensor_core_policy;
  using fallback = gk::tensor_core_fallback_policy;
  SECTION("N-contiguous B (ldmatrix.trans)") { check_b_tile<false, policy::block_n, policy::block_k>(); }
  SECTION("K-contiguous B (ldmatrix)") { check_b_tile<true, policy::block_n, policy::block_k>(); }
  SECTION("fallback tile") { check_b_tile<true, fallback::block_n, fallback::block_k>(); }
}

TEST_CASE("other tile widths keep ldmatrix conflict-free and correct", "[gemm][tensor_core]") {
  // Rows of 2, 8 and 16 chunks (block_k 16 or 64, narrower M/N tiles) for policies one may try.
  check_a_tile<true, 64, 16>();
  check_a_tile<true, 64, 64>();
  check_a_tile<false, 64, 64>();
  check_b_tile<true, 128, 64>();
  check_b_tile<false, 128, 16>();
}

TEST_CASE("cp.async tile copies are free of shared-memory bank conflicts", "[gemm][tensor_core]") {
  using policy = gk::tensor_core_policy;
  constexpr int threads = gkd::tensor_core_shape<policy>::threads;
  check_copy_is_conflict_free<gkd::operand_tile<true, policy::block_m, policy::block_k>, threads>();
  check_copy_is_conflict_free<gkd::operand_tile<false, policy::block_m, policy::block_k>, threads>();
  check_copy_is_conflict_free<gkd::operand_tile<true, policy::block_n, policy::block_k>, threads>();
  check_copy_is_conflict_free<gkd::operand_tile<false, policy::block_n, policy::block_k>, threads>();
}

TEST_CASE("the grouped block order visits every block tile exactly once", "[gemm][tensor_core]") {
  for (const auto& [tiles_m, tiles_n] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 1}, {1, 7}, {7, 1}, {8, 8}, {9, 5}, {17, 3}, {64, 32}, {65, 33}}) {
    for (const int group_m : {1, 3, 8}) {
      INFO(tiles_m << " x " << tiles_n << " tiles, groups of " << group_m);
      std::set<std::pair<std::int64_t, std::int64_t>> seen;
      for (std::int64_t block = 0; block < tiles_m * tiles_n; ++block) {
        const auto t = gkd::grouped_tile(block, tiles_m, tiles_n, group_m);
        REQUIRE(t.m >= 0);
        REQUIRE(t.m < tiles_m);
        REQUIRE(t.n >= 0);
        REQUIRE(t.n < tiles_n);
        seen.insert({t.m, t.n});
      }
      CHECK(static_cast<std::int64_t>(seen.size()) == tiles_m * tiles_n);
    }
  }
}

TEST_CASE("the fast path needs 16-byte aligned operand rows", "[gemm][tensor_core]") {
  foundry::gemm_problem<__nv_bfloat16, float> p;
  p.m = p.n = p.k = 64;
  p.a = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{4096});
  p.b = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{8192});
  p.lda = 64;
  p.ldb = 72;
  CHECK(gk::gemm_tensor_core_fast_path(p));
  p.a_k_contiguous = false;
  p.b_n_contiguous = false;
  CHECK(gk::gemm_tensor_core_fast_path(p));  // every layout has a fast kernel
  p.lda = 65;
  CHECK_FALSE(gk::gemm_tensor_core_fast_path(p));
  p.lda = 64;
  p.ldb = 68;
  CHECK_FALSE(gk::gemm_tensor_core_fast_path(p));
  p.ldb = 72;
  p.a = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{4096 + 2});
  CHECK_FALSE(gk::gemm_tensor_core_fast_path(p));
  p.a = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{4096});
  p.b = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{8192 + 8});
  CHECK_FALSE(gk::gemm_tensor_core_fast_path(p));
}

TEST_CASE("gemm_tensor_core rejects a C with more block tiles than a grid holds", "[gemm][tensor_core]") {
  // Throws before anything is enqueued, so no device is needed; the pointers are never used.
  foundry::gemm_problem<__nv_bfloat16, float> p;
  p.m = std::int64_t{1} << 40;
  p.n = std::int64_t{1} << 40;
  p.k = 16;
  p.a = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{4096});
  p.b = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{8192});
  p.c = reinterpret_cast<float*>(std::uintptr_t{16384});
  p.lda = p.ldb = 16;
  p.ldc = p.n;
  const cuda::stream_ref legacy{cudaStreamLegacy};
  REQUIRE_THROWS_AS(gk::gemm_tensor_core(p, legacy), std::invalid_argument);
  p.lda = 17;  // the fallback's grid is checked too
  REQUIRE_THROWS_AS(gk::gemm_tensor_core(p, legacy), std::invalid_argument);
}

TEST_CASE("gemm_tensor_core rejects a K that needs more than 2^31 - 1 pipeline steps", "[gemm][tensor_core]") {
  // The fast kernel counts K steps in 32 bits; the check runs before anything is enqueued.
  foundry::gemm_problem<__nv_bfloat16, float> p;
  p.m = p.n = 16;
  p.k = std::int64_t{1} << 40;
  p.a = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{4096});
  p.b = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{8192});
  p.c = reinterpret_cast<float*>(std::uintptr_t{16384});
  p.lda = p.k;
  p.ldb = 16;
  p.ldc = 16;
  REQUIRE(gk::gemm_tensor_core_fast_path(p));
  REQUIRE_THROWS_AS(gk::gemm_tensor_core(p, cuda::stream_ref{cudaStreamLegacy}), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// GPU: results against the CPU reference.

TEMPLATE_TEST_CASE("gemm_tensor_core matches the reference on odd shapes", "[gpu][gemm][tensor_core]",
                   __nv_bfloat16, __half) {
  for (const auto& sh : odd_shapes()) {
    gemm_case c;
    c.m = sh.m;
    c.n = sh.n;
    c.k = sh.k;
    require_matches<TestType>(c);
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core matches the reference on non-square shapes", "[gpu][gemm][tensor_core]",
                   __nv_bfloat16, __half) {
  for (const auto& sh : non_square_shapes()) {
    gemm_case c;
    c.m = sh.m;
    c.n = sh.n;
    c.k = sh.k;
    require_matches<TestType>(c);
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core with K = 0 sets C to beta * C", "[gpu][gemm][tensor_core]", __nv_bfloat16,
                   __half) {
  for (const float beta : {0.0f, 0.5f, -2.0f}) {
    gemm_case c;
    c.m = 33;
    c.n = 65;
    c.k = 0;
    c.alpha = 1.5f;
    c.beta = beta;
    require_matches<TestType>(c);
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core applies alpha and beta", "[gpu][gemm][tensor_core]", __nv_bfloat16,
                   __half) {
  const std::vector<std::pair<float, float>> pairs{{2.0f, 0.0f}, {-1.5f, 0.5f}, {0.0f, 1.0f}, {1.0f, -2.0f},
                                                   {0.25f, 1.0f}};
  for (const auto& [alpha, beta] : pairs) {
    for (const bool fast : {true, false}) {
      gemm_case c;
      c.m = 127;
      c.n = 129;
      c.k = 255;
      c.alpha = alpha;
      c.beta = beta;
      if (!fast) c.operand_offset = 1;
      require_matches<TestType>(c);
    }
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core never reads C when beta is 0", "[gpu][gemm][tensor_core]", __nv_bfloat16,
                   __half) {
  // run_case leaves a NaN-poisoned C when beta == 0: any read of C would surface as NaN.
  for (const auto& sh : {shape{17, 33, 65}, shape{256, 128, 64}, shape{300, 520, 1000}}) {
    for (const bool fast : {true, false}) {
      gemm_case c;
      c.m = sh.m;
      c.n = sh.n;
      c.k = sh.k;
      c.alpha = -0.75f;
      c.beta = 0.0f;
      if (!fast) c.operand_offset = 1;
      require_matches<TestType>(c);
    }
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core handles every operand contiguity on the fast path", "[gpu][gemm][tensor_core]",
                   __nv_bfloat16, __half) {
  for (const bool a_k : {true, false}) {
    for (const bool b_n : {true, false}) {
      for (const auto& sh : {shape{17, 33, 65}, shape{127, 129, 255}, shape{300, 520, 1000}, shape{513, 40, 7}}) {
        gemm_case c;
        c.m = sh.m;
        c.n = sh.n;
        c.k = sh.k;
        c.alpha = 1.25f;
        c.beta = -0.5f;
        c.a_k_contiguous = a_k;
        c.b_n_contiguous = b_n;
        CHECK(require_matches<TestType>(c).fast_path);
      }
    }
  }
}

const std::vector<shape>& fallback_shapes() {
  static const std::vector<shape> shapes{{1, 1, 1}, {17, 33, 65}, {127, 129, 255}, {70, 130, 40}};
  return shapes;
}

TEMPLATE_TEST_CASE("gemm_tensor_core falls back correctly for leading dimensions not a multiple of 8",
                   "[gpu][gemm][tensor_core]", __nv_bfloat16, __half) {
  for (const bool a_k : {true, false}) {
    for (const bool b_n : {true, false}) {
      for (const auto& sh : fallback_shapes()) {
        gemm_case c;
        c.m = sh.m;
        c.n = sh.n;
        c.k = sh.k;
        c.beta = 0.5f;
        c.a_k_contiguous = a_k;
        c.b_n_contiguous = b_n;
        c.ld_multiple = 1;
        c.ld_extra = 3;  // stored row length + 3: never a multiple of 8 for these shapes
        CHECK_FALSE(require_matches<TestType>(c).fast_path);
      }
    }
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core falls back correctly for operands off a 16-byte boundary",
                   "[gpu][gemm][tensor_core]", __nv_bfloat16, __half) {
  for (const bool a_k : {true, false}) {
    for (const bool b_n : {true, false}) {
      for (const auto& sh : fallback_shapes()) {
        gemm_case c;
        c.m = sh.m;
        c.n = sh.n;
        c.k = sh.k;
        c.beta = 0.5f;
        c.a_k_contiguous = a_k;
        c.b_n_contiguous = b_n;
        c.operand_offset = 1;  // 2 bytes past the allocation's alignment
        CHECK_FALSE(require_matches<TestType>(c).fast_path);
      }
    }
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core with an empty C does nothing", "[gpu][gemm][tensor_core]", __nv_bfloat16,
                   __half) {
  for (const auto& sh : {shape{0, 5, 3}, shape{5, 0, 3}, shape{0, 0, 0}}) {
    gemm_case c;
    c.m = sh.m;
    c.n = sh.n;
    c.k = sh.k;
    c.c_ld_extra = 2;  // C holds only padding (or nothing): it must stay NaN
    require_matches<TestType>(c);
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core writes only the m x n window of C", "[gpu][gemm][tensor_core]",
                   __nv_bfloat16, __half) {
  // Padding beyond column n, odd ldc (single-float stores) and a C not 8-byte aligned.
  for (const auto& [ld_extra, offset] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{8, 0}, {3, 0}, {0, 1}, {5, 3}}) {
    for (const bool fast : {true, false}) {
      gemm_case c;
      c.m = 130;
      c.n = 259;
      c.k = 48;
      c.alpha = 1.0f;
      c.beta = 2.0f;
      c.c_ld_extra = ld_extra;
      c.c_offset = offset;
      if (!fast) c.operand_offset = 1;
      require_matches<TestType>(c);
    }
  }
}
