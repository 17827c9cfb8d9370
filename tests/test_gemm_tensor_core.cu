// Rung 4 of the GEMM ladder: gemm_kernels::gemm_tensor_core (mma.sync, fp16/bf16 in, fp32 out).
//
// Two kinds of tests:
// - host-only: the index arithmetic the kernels use (swizzled shared tiles, the row addresses
//   handed to ldmatrix, the block order) checked against the PTX ISA's fragment layouts by an
//   emulated ldmatrix, plus bank-conflict freedom; these run on every machine;
// - [gpu]: the kernels against a CPU reference (the cases of support/gemm_test_case.cuh).
//
// Tolerance, for both bf16 and fp16 inputs. The reference accumulates in double the very
// values the GPU multiplies (the inputs rounded to bf16/fp16 first), so input rounding is not
// an error here. Products of two 8-bit (bf16) or 11-bit (fp16) significands are exact in
// fp32; what remains is fp32 accumulation inside and across mma instructions. Even with the
// truncating alignment that tensor cores use when adding, that is at most about K·2^-23 of
// Σ|a·b| — 1.2e-4 at K = 1000, 4.9e-4 at the largest K tested (4096, split into slices) —
// plus one rounding of alpha·acc + beta·c. So every element must satisfy
//     |c - ref| <= 1e-3 · (|alpha|·Σ_p |a_ip·b_pj| + |beta|·|c0_ij|),
// eight times that worst case at K = 1000, twice at K = 4096. An indexing mistake moves an
// element by whole terms of average size Σ|a·b|/K: one wrong product exceeds the bound for
// K <= 255 (most shapes here), and the likelier mistakes (a 16-byte chunk of 8 products, a
// fragment row, a tile edge, a K step counted twice or dropped) exceed it at every tested K.
// The issue's bound, relative Frobenius norm <= 1e-2, is checked as well; it is much looser
// than the element-wise one.
#include <catch2/catch.hpp>

#include <foundry/gemm/gemm_tensor_core.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/gemm_test_case.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <set>
#include <stdexcept>
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

template <class Layout, gkd::fragment_order Order>
fragment_regs emulate_ldmatrix_x4(const std::vector<element>& slots, int mn, int k) {
  fragment_regs regs(32, std::vector<std::vector<element>>(4, std::vector<element>(2)));
  for (int j = 0; j < 4; ++j) {
    int row_address[8];
    std::set<int> bank_groups;
    for (int r = 0; r < 8; ++r) {
      row_address[r] = Layout::template fragment_offset<Order>(mn, k, 8 * j + r);
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
      const auto regs = emulate_ldmatrix_x4<Layout, gkd::fragment_order::mn_first>(slots, m0, k0);
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
      const auto regs = emulate_ldmatrix_x4<Layout, gkd::fragment_order::k_first>(slots, n0, k0);
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2;
        const int t = lane % 4;
        // load_fragments: columns n0..n0+7 take {r0, r1}, columns n0+8..n0+15 take {r2, r3}.
        const int source[2][2] = {{0, 1}, {2, 3}};
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
// GPU cases against a CPU reference (support/gemm_test_case.cuh).

using foundry::test::gemm_case;
using foundry::test::gemm_outcome;
using foundry::test::make_gemm_case;
using shape = foundry::test::gemm_shape;

// Runs `c` through gemm_tensor_core with split-K `options` (a forced slice count, a
// caller's workspace) on random data (fixed seeds) and checks it, once with each tiling of
// the fast kernel whatever K is (the automatic choice is one of them), so that both meet
// every shape, layout and edge; returns the outcome for further checks (`path`: whether the
// fast kernel ran; it does not depend on the tiling).
template <class In>
gemm_outcome require_matches_split(const gemm_case& c, const gk::split_k_options& options) {
  gemm_outcome outcome;
  const auto check_with = [&](auto policy, const char* tiling) {
    INFO(foundry::test::describe(c) << ", " << tiling << ", split_k " << options.split_k << ", workspace "
                                    << options.workspace.size());
    const auto out = foundry::test::run_gemm_case<In>(
        c, [](const auto& p) { return gk::gemm_tensor_core_fast_path(p); },
        [&](const auto& p, cuda::stream_ref s) { gk::gemm_tensor_core<In, decltype(policy)>(p, options, s); });
    outcome = foundry::test::check_gemm_outcome(out, "fast path");
  };
  check_with(gk::tensor_core_policy{}, "128 x 256 tiling");
  check_with(gk::tensor_core_shallow_k_policy{}, "128 x 128 tiling (two blocks per SM)");
  return outcome;
}

// require_matches_split with the default options (automatic split-K, internal workspace).
template <class In>
gemm_outcome require_matches(const gemm_case& c) {
  return require_matches_split<In>(c, {});
}

// The brief's odd shapes plus two that span many block tiles and K steps: 300 × 520 × 1000
// runs 16 pipeline steps (more than the 3 stages) over 3 × 3 tiles; 1157 × 300 × 64 has 10
// tile rows, more than one group (8) of the block order.
const std::vector<shape>& odd_shapes() {
  static const std::vector<shape> shapes{{1, 1, 1},      {16, 8, 16},      {17, 33, 65},   {127, 129, 255},
                                         {256, 128, 64}, {300, 520, 1000}, {1157, 300, 64}};
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
  using small = gk::tensor_core_small_fallback_policy;
  SECTION("small fallback tile") { check_a_tile<true, small::block_m, small::block_k>(); }
}

TEST_CASE("ldmatrix row addresses give every lane its mma.m16n8k16 B fragments", "[gemm][tensor_core]") {
  using policy = gk::tensor_core_policy;
  using fallback = gk::tensor_core_fallback_policy;
  SECTION("N-contiguous B (ldmatrix.trans)") { check_b_tile<false, policy::block_n, policy::block_k>(); }
  SECTION("K-contiguous B (ldmatrix)") { check_b_tile<true, policy::block_n, policy::block_k>(); }
  SECTION("fallback tile") { check_b_tile<true, fallback::block_n, fallback::block_k>(); }
  using small = gk::tensor_core_small_fallback_policy;
  SECTION("small fallback tile") { check_b_tile<true, small::block_n, small::block_k>(); }
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
  auto p = foundry::test::fake_gemm_problem({64, 64, 64});
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
  auto p = foundry::test::fake_gemm_problem({std::int64_t{1} << 40, std::int64_t{1} << 40, 16});
  p.lda = p.ldb = 16;
  p.ldc = p.n;
  const cuda::stream_ref legacy{cudaStreamLegacy};
  REQUIRE_THROWS_AS(gk::gemm_tensor_core(p, legacy), std::invalid_argument);
  p.lda = 17;  // the fallback's grid is checked too
  REQUIRE_THROWS_AS(gk::gemm_tensor_core(p, legacy), std::invalid_argument);
}

TEST_CASE("gemm_tensor_core rejects a K that needs more than 2^31 - 1 pipeline steps", "[gemm][tensor_core]") {
  // The fast kernel counts K steps in 32 bits; the check runs before anything is enqueued.
  auto p = foundry::test::fake_gemm_problem({16, 16, std::int64_t{1} << 40});
  p.lda = p.k;
  p.ldb = 16;
  p.ldc = 16;
  REQUIRE(gk::gemm_tensor_core_fast_path(p));
  REQUIRE_THROWS_AS(gk::gemm_tensor_core(p, cuda::stream_ref{cudaStreamLegacy}), std::invalid_argument);
}

TEST_CASE("gemm_tensor_core splits K only when its block tiles leave SMs idle", "[gemm][tensor_core]") {
  // The default plan: the tiling that gemm_tensor_core picks by K (128 x 128 up to 1536).
  const auto splits = [](std::int64_t m, std::int64_t n, std::int64_t k, int requested) {
    return gk::tensor_core_split_k(m, n, k, requested, 132).splits;
  };
  CHECK(splits(1024, 1024, 8192, 0) == 4);  // 32 tiles of 128 x 256, one block per SM
  CHECK(gk::tensor_core_split_k(1024, 1024, 8192, 0, 132).depth == 2048);
  CHECK(splits(8192, 8192, 1024, 0) == 1);    // 4096 tiles of 128 x 128
  CHECK(splits(256, 512, 4096, 0) == 8);      // 4 tiles: K / 512 binds
  CHECK(splits(100, 100, 300, 0) == 1);       // K too short to split
  CHECK(splits(100, 100, 1 << 20, 0) == 16);  // at most 16
  CHECK(splits(100, 100, 100, 5) == 2);       // at most one slice per K step of 64
  CHECK(splits(128, 256, 1000, 7) == 6);      // depth round_up(143, 64) = 192: 6 slices, as launched
  CHECK(splits(64, 64, 0, 0) == 1);           // K = 0: one empty slice, C = beta * C
  // The shallow-K tiling runs two blocks per SM: its slots are twice the SMs.
  const auto shallow_splits = [](std::int64_t m, std::int64_t n, std::int64_t k) {
    return gk::tensor_core_split_k<gk::tensor_core_shallow_k_policy>(m, n, k, 0, 132).splits;
  };
  CHECK(shallow_splits(1024, 1024, 8192) == 4);  // 64 tiles of 128 x 128, 264 slots
  CHECK(shallow_splits(512, 512, 2048) == 4);    // 16 tiles: K / 512 binds
  CHECK(shallow_splits(8192, 8192, 1024) == 1);  // 4096 tiles
  CHECK(shallow_splits(1536, 1536, 2048) == 1);  // 144 tiles: every SM has one
}

TEST_CASE("gemm_tensor_core's fallback takes 32 x 32 tiles where its 64 x 64 grid fills at most half the SMs",
          "[gemm][tensor_core]") {
  using small = gk::tensor_core_small_fallback_policy;
  STATIC_REQUIRE((small::block_m == 32 && small::block_n == 32 && small::warps_m * small::warps_n == 2));
  // 608 x 118 x 51 with lda 53: 10 x 2 = 20 tiles of 64 x 64 on 132 SMs: 76 of 32 x 32.
  foundry::gemm_problem<__half, float> p;
  p.m = 608, p.n = 118, p.k = 51;
  p.a = reinterpret_cast<const __half*>(std::uintptr_t{4096});
  p.b = reinterpret_cast<const __half*>(std::uintptr_t{8192});
  p.c = reinterpret_cast<float*>(std::uintptr_t{16384});
  p.lda = 53, p.ldb = 118, p.ldc = 118;
  const foundry::gemm_plan tiny = gk::tensor_core_plan<__half>(p, 0, 132);
  CHECK((tiny.fallback && tiny.block_m == 32 && tiny.block_n == 32 && tiny.split_k == 1));
  // On 39 SMs the 20 tiles fill more than half: 64 x 64. A split asked for keeps 64 x 64 too.
  CHECK((gk::tensor_core_plan<__half>(p, 0, 39).block_m == 64));
  CHECK((gk::tensor_core_plan<__half>(p, 2, 132).block_m == 64));
  // 600 x 1000: 160 tiles of 64 x 64.
  p.m = 600, p.n = 1000, p.ldb = 1000, p.ldc = 1000;
  CHECK((gk::tensor_core_plan<__half>(p, 0, 132).block_m == 64));
}

TEST_CASE("gemm_tensor_core's automatic tiling is the 128 x 128 one up to K = 1536", "[gemm][tensor_core]") {
  CHECK(gk::tensor_core_picks_shallow_k(0));
  CHECK(gk::tensor_core_picks_shallow_k(1024));
  CHECK(gk::tensor_core_picks_shallow_k(1536));
  CHECK_FALSE(gk::tensor_core_picks_shallow_k(1537));
  CHECK_FALSE(gk::tensor_core_picks_shallow_k(8192));
  // The default split plan follows the same choice: 50 tiles in either tiling, 2 slices at
  // one block per SM, 3 at two (K / 512 = 3 binds), and the default is the shallow one here.
  using deep = gk::tensor_core_policy;
  using shallow = gk::tensor_core_shallow_k_policy;
  CHECK(gk::tensor_core_split_k<deep>(6400, 128, 1536, 0, 132).splits == 2);
  CHECK(gk::tensor_core_split_k<shallow>(6400, 128, 1536, 0, 132).splits == 3);
  CHECK(gk::tensor_core_split_k(6400, 128, 1536, 0, 132).splits == 3);
  CHECK(gk::tensor_core_split_k(6400, 128, 1600, 0, 132).splits == 2);  // K past the switch: 128 x 256
}

TEST_CASE("gemm_tensor_core's automatic tiling fits the device's shared memory", "[gemm][tensor_core]") {
  // Opt-in shared memory a block: sm_86, sm_89 and sm_120 grant 99 KiB, sm_80 163 KiB, sm_90 227 KiB.
  constexpr std::size_t kib99 = 101376, kib163 = 166912, kib227 = 232448;
  CHECK(gk::tensor_core_ring_bytes<gk::tensor_core_policy>() == 147456u);
  CHECK(gk::tensor_core_ring_bytes<gk::tensor_core_shallow_k_policy>() == 98304u);
  CHECK(gk::tensor_core_picks_shallow_k(8192, kib99));  // the deep ring does not fit: 128 x 128 at any K
  CHECK(gk::tensor_core_picks_shallow_k(1537, kib99));
  CHECK_FALSE(gk::tensor_core_picks_shallow_k(8192, kib163));
  CHECK_FALSE(gk::tensor_core_picks_shallow_k(8192, kib227));
  CHECK(gk::tensor_core_split_k(6400, 128, 1600, 0, 132, kib99).splits == 3);  // the shallow tiling's split

  const auto p = foundry::test::fake_gemm_problem({4096, 4096, 4096});
  auto aligned = p;
  aligned.lda = aligned.ldb = aligned.ldc = 4096;
  REQUIRE(gk::gemm_tensor_core_fast_path(aligned));
  const foundry::gemm_plan small_shared = gk::tensor_core_plan<__nv_bfloat16>(aligned, 0, 128, kib99);
  INFO(small_shared.describe());
  CHECK((small_shared.block_m == 128 && small_shared.block_n == 128 && small_shared.min_blocks_per_sm == 2));
  const foundry::gemm_plan large_shared = gk::tensor_core_plan<__nv_bfloat16>(aligned, 0, 128, kib163);
  INFO(large_shared.describe());
  CHECK((large_shared.block_m == 128 && large_shared.block_n == 256 && large_shared.min_blocks_per_sm == 1));
  // Without a device the plan assumes every tiling fits, as on the H100 and H200.
  CHECK(gk::tensor_core_plan<__nv_bfloat16>(aligned, 0, 132).block_n == 256);
}

// ---------------------------------------------------------------------------------------------
// GPU: results against the CPU reference.

TEMPLATE_TEST_CASE("gemm_tensor_core matches the reference on odd shapes", "[gpu][gemm][tensor_core]", __nv_bfloat16,
                   __half) {
  for (const auto& sh : odd_shapes()) require_matches<TestType>(make_gemm_case(sh));
}

TEMPLATE_TEST_CASE("gemm_tensor_core matches the reference on non-square shapes", "[gpu][gemm][tensor_core]",
                   __nv_bfloat16, __half) {
  for (const auto& sh : non_square_shapes()) require_matches<TestType>(make_gemm_case(sh));
}

TEMPLATE_TEST_CASE("gemm_tensor_core with K = 0 sets C to beta * C", "[gpu][gemm][tensor_core]", __nv_bfloat16,
                   __half) {
  for (const float beta : {0.0f, 0.5f, -2.0f}) require_matches<TestType>(make_gemm_case({33, 65, 0}, 1.5f, beta));
}

TEMPLATE_TEST_CASE("gemm_tensor_core applies alpha and beta", "[gpu][gemm][tensor_core]", __nv_bfloat16, __half) {
  const std::vector<std::pair<float, float>> pairs{
      {2.0f, 0.0f}, {-1.5f, 0.5f}, {0.0f, 1.0f}, {1.0f, -2.0f}, {0.25f, 1.0f}};
  for (const auto& [alpha, beta] : pairs) {
    for (const bool fast : {true, false}) {
      gemm_case c = make_gemm_case({127, 129, 255}, alpha, beta);
      if (!fast) c.operand_offset = 1;
      require_matches<TestType>(c);
    }
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core never reads C when beta is 0", "[gpu][gemm][tensor_core]", __nv_bfloat16, __half) {
  // run_gemm_case leaves a NaN-poisoned C when beta == 0: any read of C would surface as NaN.
  for (const auto& sh : {shape{17, 33, 65}, shape{256, 128, 64}, shape{300, 520, 1000}}) {
    for (const bool fast : {true, false}) {
      gemm_case c = make_gemm_case(sh, -0.75f, 0.0f);
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
        gemm_case c = make_gemm_case(sh, 1.25f, -0.5f);
        c.a_k_contiguous = a_k;
        c.b_n_contiguous = b_n;
        CHECK(require_matches<TestType>(c).path);
      }
    }
  }
}

// The main loop runs the steps whose refill is a whole tile inside A and B without bounds,
// the rest with them. Both tilings step K by 64 with 3 stages: unsplit, K =
// 64, 192, 200 and 1024 give 0, 1, 1 and 14 bounds-free steps, and 3 K slices of 2148
// (768, 768 and 612) 10, 10 and 7; 257 × 513 mixes inside and edge block tiles; every
// layout, since each copies its tiles along other axes. A wrong K limit shows in the results
// (NaN past K, a term counted twice); a block wrongly taken as inside M and N reads only
// elements that feed unstored rows or columns of C, which compute-sanitizer's memcheck
// catches on this test, not the comparison.
TEMPLATE_TEST_CASE("gemm_tensor_core's bounds-free steps hand over to the bounded ones", "[gpu][gemm][tensor_core]",
                   __nv_bfloat16, __half) {
  for (const bool a_k : {true, false}) {
    for (const bool b_n : {true, false}) {
      for (const auto& sh : {shape{256, 512, 64}, shape{256, 512, 192}, shape{256, 512, 200}, shape{384, 768, 1024},
                             shape{257, 513, 640}}) {
        gemm_case c = make_gemm_case(sh, 0.75f, 0.5f);
        c.a_k_contiguous = a_k;
        c.b_n_contiguous = b_n;
        CHECK(require_matches_split<TestType>(c, {1, {}}).path);
      }
      gemm_case c = make_gemm_case({256, 512, 2 * 1024 + 100}, 0.75f, 0.5f);
      c.a_k_contiguous = a_k;
      c.b_n_contiguous = b_n;
      CHECK(require_matches_split<TestType>(c, {3, {}}).path);
    }
  }
}

// The first four take the fallback's 32 x 32 tile (their 64 x 64 grids fill at most half of 132
// SMs); 600 x 1000 x 40 (160 tiles of 64 x 64) keeps the 64 x 64 one.
const std::vector<shape>& fallback_shapes() {
  static const std::vector<shape> shapes{{1, 1, 1}, {17, 33, 65}, {127, 129, 255}, {70, 130, 40}, {600, 1000, 40}};
  return shapes;
}

TEMPLATE_TEST_CASE("gemm_tensor_core falls back correctly for leading dimensions not a multiple of 8",
                   "[gpu][gemm][tensor_core]", __nv_bfloat16, __half) {
  for (const bool a_k : {true, false}) {
    for (const bool b_n : {true, false}) {
      for (const auto& sh : fallback_shapes()) {
        gemm_case c = make_gemm_case(sh, 1.0f, 0.5f);
        c.a_k_contiguous = a_k;
        c.b_n_contiguous = b_n;
        c.ld_multiple = 1;
        c.ld_extra = 3;  // stored row length + 3: never a multiple of 8 for these shapes
        CHECK_FALSE(require_matches<TestType>(c).path);
      }
    }
  }
}

// The fallback splits a deep K as the fast kernel does: automatically (70 x 130 x 2000: 6
// tiles of 64 x 64, 3 slices of 672; run in 15 tiles of 32 x 32 on 132 SMs, in the same slices) and at forced counts, with beta != 0 so that the reduce of the
// slices must read C once, and a ragged last slice (2000 = 2 x 672 + 656; 5 x 416 + ...).
TEMPLATE_TEST_CASE("gemm_tensor_core's fallback splits K", "[gpu][gemm][tensor_core]", __nv_bfloat16, __half) {
  for (const bool a_k : {true, false}) {
    for (const bool b_n : {true, false}) {
      for (const int split : {0, 2, 5}) {
        gemm_case c = make_gemm_case({70, 130, 2000}, 1.0f, 0.5f);
        c.a_k_contiguous = a_k;
        c.b_n_contiguous = b_n;
        c.ld_multiple = 1;
        c.ld_extra = 3;
        CHECK_FALSE(require_matches_split<TestType>(c, {split, {}}).path);
      }
    }
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core falls back correctly for operands off a 16-byte boundary",
                   "[gpu][gemm][tensor_core]", __nv_bfloat16, __half) {
  for (const bool a_k : {true, false}) {
    for (const bool b_n : {true, false}) {
      for (const auto& sh : fallback_shapes()) {
        gemm_case c = make_gemm_case(sh, 1.0f, 0.5f);
        c.a_k_contiguous = a_k;
        c.b_n_contiguous = b_n;
        c.operand_offset = 1;  // 2 bytes past the allocation's alignment
        CHECK_FALSE(require_matches<TestType>(c).path);
      }
    }
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core with an empty C does nothing", "[gpu][gemm][tensor_core]", __nv_bfloat16, __half) {
  for (const auto& sh : {shape{0, 5, 3}, shape{5, 0, 3}, shape{0, 0, 0}}) {
    gemm_case c = make_gemm_case(sh);
    c.c_ld_extra = 2;  // C holds only padding (or nothing): it must stay NaN
    require_matches<TestType>(c);
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core writes only the m x n window of C", "[gpu][gemm][tensor_core]", __nv_bfloat16,
                   __half) {
  // Padding beyond column n, odd ldc (single-float stores) and a C not 8-byte aligned.
  for (const auto& [ld_extra, offset] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{8, 0}, {3, 0}, {0, 1}, {5, 3}}) {
    for (const bool fast : {true, false}) {
      gemm_case c = make_gemm_case({130, 259, 48}, 1.0f, 2.0f);
      c.c_ld_extra = ld_extra;
      c.c_offset = offset;
      if (!fast) c.operand_offset = 1;
      require_matches<TestType>(c);
    }
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core's fallback writes C on and off 32-byte sectors: every ldc pad 0..7, bases off",
                   "[gpu][gemm][tensor_core]", __nv_bfloat16, __half) {
  // Rows on sectors (n a multiple of 8, pad 0, the base 0 or 8 floats off) take the direct
  // stores; every other case the swizzled staging in the operand tiles. Ragged in M and N; K
  // split or not (33 x 70 x 1500: 2 slices whose workspace rows, 70 floats, are off sectors,
  // staged too); beta 0 (C poisoned, never read) and 0.5 alternating.
  for (std::int64_t ld_extra = 0; ld_extra < 8; ++ld_extra) {
    for (const std::int64_t offset : {0, 1, 2, 8}) {
      for (const auto& sh : {shape{70, 136, 40}, shape{33, 70, 1500}}) {
        gemm_case c = make_gemm_case(sh, 1.5f, (ld_extra + offset) % 2 == 0 ? 0.0f : 0.5f);
        c.c_ld_extra = ld_extra;
        c.c_offset = offset;
        c.operand_offset = 1;  // the fallback
        c.b_n_contiguous = ld_extra % 2 == 0;
        CHECK_FALSE(require_matches<TestType>(c).path);
      }
    }
  }
  // The shapes above take the fallback's 32 x 32 tile on a GPU of 132 SMs; 600 x 1000 x 40 (160
  // tiles of 64 x 64) keeps the 64 x 64 one, whose staging differs.
  for (const std::int64_t ld_extra : {0, 3}) {
    for (const std::int64_t offset : {0, 1}) {
      gemm_case c = make_gemm_case({600, 1000, 40}, 1.5f, offset == 0 ? 0.0f : 0.5f);
      c.c_ld_extra = ld_extra;
      c.c_offset = offset;
      c.operand_offset = 1;
      CHECK_FALSE(require_matches<TestType>(c).path);
    }
  }
}

TEMPLATE_TEST_CASE("gemm_tensor_core with split-K matches the reference in every layout and workspace",
                   "[gpu][gemm][tensor_core]", __nv_bfloat16, __half) {
  foundry::test::check_split_k_cases(require_matches_split<TestType>);
}

TEMPLATE_TEST_CASE("gemm_tensor_core sums its split-K slices in slice order, bit for bit, in each tiling",
                   "[gpu][gemm][tensor_core]", __nv_bfloat16, __half) {
  const int sms = foundry::get_device_properties().sm_count;
  const auto check_with = [&](auto policy, const char* tiling) {
    using Policy = decltype(policy);
    INFO(tiling);
    foundry::test::check_split_k_sum_is_exact<TestType>(
        [](const auto& q, const auto& options, cuda::stream_ref s) {
          REQUIRE(gk::gemm_tensor_core_fast_path(q));
          gk::gemm_tensor_core<TestType, Policy>(q, options, s);
        },
        [&](std::int64_t m, std::int64_t n, std::int64_t k, int splits) {
          return gk::tensor_core_split_k<Policy>(m, n, k, splits, sms).depth;
        });
  };
  check_with(gk::tensor_core_policy{}, "128 x 256 tiling");
  check_with(gk::tensor_core_shallow_k_policy{}, "128 x 128 tiling (two blocks per SM)");
}

TEMPLATE_TEST_CASE("gemm_tensor_core splits K by itself when the tiles are few", "[gpu][gemm][tensor_core]",
                   __nv_bfloat16, __half) {
  // 4 block tiles of 128 x 256: 8 slices of 512 on a GPU of 32 SMs or more.
  const gemm_case c = make_gemm_case({256, 512, 4096});
  INFO("automatic slices: "
       << gk::tensor_core_split_k(c.m, c.n, c.k, 0, foundry::get_device_properties().sm_count).splits);
  CHECK(gk::tensor_core_split_k(c.m, c.n, c.k, 0, foundry::get_device_properties().sm_count).splits > 1);
  CHECK(require_matches<TestType>(c).path);
}

TEMPLATE_TEST_CASE("gemm_tensor_core refuses a split-K workspace that is too small", "[gpu][gemm][tensor_core]",
                   __nv_bfloat16, __half) {
  REQUIRE(gk::tensor_core_split_k(200, 304, 704, 4, foundry::get_device_properties().sm_count).splits == 4);
  foundry::test::check_split_k_rejects_small_workspace<TestType>(
      [](const auto& q) { return gk::gemm_tensor_core_fast_path(q); },
      [](const auto& q, const auto& options, cuda::stream_ref s) { gk::gemm_tensor_core(q, options, s); });
}
