// Rung 5 of the GEMM ladder: gemm_kernels::gemm_wgmma (wgmma fed by TMA, fp16/bf16 in, fp32 out).
//
// Three kinds of tests:
// - host-only, on every machine: the matrix descriptor's bit fields against a descriptor that
//   CUTLASS prints for the same layout; an emulation of where TMA (128-byte swizzle) puts each
//   tile element and where wgmma reads each operand element through the kernel's descriptors
//   (the canonical layouts of CUTLASS's make_gmma_desc), which must agree for every element,
//   K- and MN-major, both consumers and every K slice; the dispatch offering the rung only where
//   it runs; the conditions of the TMA path.
// - [gpu] against a CPU reference. They need a compute capability 9.0 device and sm_90a code in
//   this binary (FOUNDRY_HAS_SM90A, set by cmake/foundry_sm90a.cmake); elsewhere each case
//   prints "SKIPPED: <why>" and returns, which ctest reports as skipped.
// - [gpu] one 128 × 256 × 64 tile of exact small integers: every wrong element names the tile
//   element the kernel actually read, to localise a descriptor or swizzle fault.
//
// Tolerance, for bf16 and fp16 inputs alike (the argument of test_gemm_tensor_core.cu). The
// reference accumulates in double the very values the GPU multiplies (the inputs rounded to
// bf16/fp16 first), so input rounding is no error here; products of two 8-bit or 11-bit
// significands are exact in fp32, and what remains is fp32 accumulation inside and across
// wgmma (truncating alignment included, at most about K·2^-23 of Σ|a·b|, 1.2e-4 at K = 1000)
// and one rounding of alpha·acc + beta·c. Each element must satisfy
//     |c - ref| <= 1e-3 · (|alpha|·Σ_p |a_ip·b_pj| + |beta|·|c0_ij|),
// eight times that worst case, yet below one wrong product for K <= 255 and below any wrong
// 16-byte chunk (8 products), fragment row or tile edge at every K tested. For random-sign
// data the typical relative error is ~u·sqrt(K) ≈ 2e-6; the issue's bound, relative Frobenius
// error <= 1e-2, is checked too and is far looser.
#include <catch2/catch.hpp>

#include <foundry/gemm/gemm.cuh>
#include <foundry/gemm/gemm_wgmma.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/gemm_test_case.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace gk = foundry::gemm_kernels;
namespace gkd = foundry::gemm_kernels::detail;
using policy = gk::wgmma_policy;

// Why this process cannot run the wgmma kernel, or "" if it can.
std::string wgmma_unavailable_reason() {
  if (!gk::gemm_wgmma_built) return "no sm_90a code in this binary (FOUNDRY_HAS_SM90A is 0)";
  const int cc = foundry::get_device_properties().compute_capability();
  if (!gk::gemm_wgmma_available(cc)) return "the device is sm_" + std::to_string(cc) + "; wgmma code is sm_90a";
  return {};
}

// Returns from the test case, reported as skipped by ctest (SKIP_REGULAR_EXPRESSION), when the
// rung cannot run here.
#define SKIP_UNLESS_WGMMA_RUNS() FOUNDRY_SKIP_FOR_REASON(wgmma_unavailable_reason())

// ---------------------------------------------------------------------------------------------
// Host emulation of the shared-memory layouts.

// The 128-byte swizzle that TMA applies when writing and wgmma when reading (swizzle mode 1):
// bits 4-6 of the shared address (the 16-byte chunk in a 128-byte row) are XORed with bits 7-9
// (the row in a 1024-byte block of 8 rows).
constexpr std::uint32_t swizzle_128b(std::uint32_t address) { return address ^ (((address >> 7) & 7u) << 4); }

struct descriptor_fields {
  std::uint32_t start, leading, stride, base_offset, swizzle;
};
constexpr descriptor_fields decode(std::uint64_t d) {
  return {static_cast<std::uint32_t>(d & 0x3FFF) << 4, static_cast<std::uint32_t>((d >> 16) & 0x3FFF) << 4,
          static_cast<std::uint32_t>((d >> 32) & 0x3FFF) << 4, static_cast<std::uint32_t>((d >> 49) & 7),
          static_cast<std::uint32_t>(d >> 62)};
}

// The shared address wgmma reads for element (mn, k) (mn < 64 for A, < 256 for B; k < 16) of an
// operand described by `d`, in the canonical layouts of CUTLASS's make_gmma_desc for the 128-byte
// swizzle, in bytes for 16-bit elements:
//   K-major  ((8,n),2):((8,SBO),1) chunks   → start + 128 (mn%8) + SBO (mn/8) + 2k
//   MN-major ((8,n),(8,k)):((1,LBO),(8,SBO)) → start + 2 (mn%64) + LBO (mn/64) + 128 (k%8) + SBO (k/8)
// then swizzled.
std::uint32_t wgmma_read_address(std::uint64_t d, bool transposed, int mn, int k) {
  const descriptor_fields f = decode(d);
  REQUIRE(f.swizzle == 1);
  REQUIRE(f.base_offset == 0);
  std::uint32_t logical = 0;
  if (!transposed) {
    logical = f.start + 128u * (mn % 8) + f.stride * (mn / 8) + 2u * k;
  } else {
    logical = f.start + 2u * (mn % 64) + f.leading * (mn / 64) + 128u * (k % 8) + f.stride * (k / 8);
  }
  return swizzle_128b(logical);
}

// The shared address where gemm_wgmma's TMA copies put element (mn, k) of an operand tile at
// `tile` (1024-byte aligned): boxes of 128-byte rows written with the 128-byte swizzle, one box
// of Extent rows (K-major: row mn, element k) or Extent/64 boxes of 64 K-rows (MN-major: box
// mn/64, row k, element mn%64), placed as wgmma_operand::load places them.
template <class Operand, bool KMajor>
std::uint32_t tma_write_address(std::uint32_t tile, int mn, int k) {
  if constexpr (KMajor) {
    static_assert(Operand::box_inner == 64);
    return swizzle_128b(tile + 128u * mn + 2u * k);
  } else {
    static_assert(Operand::box_inner == 64 && Operand::box_outer == 64);
    return swizzle_128b(tile + static_cast<std::uint32_t>(Operand::box_bytes) * (mn / 64) + 128u * k + 2u * (mn % 64));
  }
}

// For every element wgmma reads, during every K slice and for every consumer, the address it
// reads is where TMA put the element the product needs.
template <bool KMajor, int Extent, int ReadExtent>
void check_operand_layout() {
  using operand = gkd::wgmma_operand<KMajor, Extent>;
  const std::uint32_t tile = 0x8000;  // any 1024-byte aligned address, as the ring's stages are
  // TMA writes a bijection onto the tile's bytes.
  std::set<std::uint32_t> written;
  for (int mn = 0; mn < Extent; ++mn) {
    for (int k = 0; k < policy::block_k; ++k) written.insert(tma_write_address<operand, KMajor>(tile, mn, k));
  }
  REQUIRE(written.size() == static_cast<std::size_t>(Extent * policy::block_k));
  CHECK(*written.begin() == tile);
  CHECK(*written.rbegin() == tile + operand::bytes - 2);

  for (int first_mn = 0; first_mn < Extent; first_mn += ReadExtent) {  // A: each consumer's 64 rows
    for (int k_step = 0; k_step < policy::block_k / 16; ++k_step) {
      const std::uint64_t d = operand::descriptor(tile + operand::mn_offset(first_mn) + operand::k_offset(k_step));
      for (int mn = 0; mn < ReadExtent; ++mn) {
        for (int k = 0; k < 16; ++k) {
          const std::uint32_t read = wgmma_read_address(d, operand::transpose, mn, k);
          const std::uint32_t expected = tma_write_address<operand, KMajor>(tile, first_mn + mn, 16 * k_step + k);
          if (read != expected) {
            FAIL_CHECK("operand (mn " << first_mn + mn << ", k " << 16 * k_step + k << ") read at " << read
                                      << ", written at " << expected);
            return;
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// GPU cases against a CPU reference (support/gemm_test_case.cuh, as in test_gemm_tensor_core.cu).

using foundry::test::gemm_case;
using foundry::test::gemm_outcome;
using foundry::test::gemm_value_fn;
using foundry::test::make_gemm_case;
using shape = foundry::test::gemm_shape;

// Runs `c` through gemm_wgmma and checks it; returns the outcome for further checks (`path`:
// whether the TMA path ran). `values` are A's and B's value functions, or none for random data
// (fixed seeds).
template <class In, class... Values>
gemm_outcome require_matches(const gemm_case& c, const Values&... values) {
  INFO(foundry::test::describe(c));
  const auto out = foundry::test::run_gemm_case<In>(
      c, [](const auto& p) { return gk::gemm_wgmma_tma_path(p); },
      [](const auto& p, cuda::stream_ref s) { gk::gemm_wgmma(p, s); }, values...);
  return foundry::test::check_gemm_outcome(out, "TMA path");
}

// require_matches with split-K options (a forced slice count, a caller's workspace).
template <class In>
gemm_outcome require_matches_split(const gemm_case& c, const gk::split_k_options& options) {
  INFO(foundry::test::describe(c) << ", split_k " << options.split_k << ", workspace " << options.workspace.size());
  const auto out = foundry::test::run_gemm_case<In>(
      c, [](const auto& p) { return gk::gemm_wgmma_tma_path(p); },
      [&](const auto& p, cuda::stream_ref s) { gk::gemm_wgmma(p, options, s); });
  return foundry::test::check_gemm_outcome(out, "TMA path");
}

// require_matches with the tiling `Policy` named, whatever wgmma_plan's own choice: its plan
// and launch on the stream's device (split-K automatic, or `split` slices).
template <class In, class Policy>
gemm_outcome require_matches_tiling(const gemm_case& c, int split = 0) {
  INFO(foundry::test::describe(c) << ", tiles " << Policy::block_m << " x " << Policy::block_n << ", split_k "
                                  << split);
  const auto out = foundry::test::run_gemm_case<In>(
      c, [](const auto& p) { return gk::gemm_wgmma_tma_path(p); },
      [split](const auto& p, cuda::stream_ref s) {
        const int sms = foundry::get_device_properties(foundry::stream_device(s.get())).sm_count;
        gk::launch_wgmma<In, Policy>(gk::wgmma_plan<In, Policy>(p, split, sms), p, {}, s);
      });
  return foundry::test::check_gemm_outcome(out, "TMA path");
}

// The brief's shapes: single elements, odd sizes, one exact tile, several tiles and K stages
// (300 × 520 × 1000: 3 × 3 tiles, 16 stages, 4 laps of the ring), and one spanning more than
// a group of the block order in M (10 tile rows) and 3 tile columns, both edges ragged.
const std::vector<shape>& odd_shapes() {
  static const std::vector<shape> shapes{{1, 1, 1},      {17, 33, 65},     {127, 129, 255},
                                         {128, 256, 64}, {300, 520, 1000}, {1157, 600, 200}};
  return shapes;
}

constexpr std::pair<bool, bool> layouts[] = {{true, true}, {true, false}, {false, true}, {false, false}};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Host-only.

TEST_CASE("the wgmma matrix descriptor packs its fields as the PTX ISA says", "[gemm][wgmma]") {
  // CUTLASS prints, for a K-major 128-byte-swizzled tile at shared address 0x400:
  //   GmmaDescriptor: 0x4000004000010040  start_addr 0x0040, leading_off 1, stride_off 64, B128
  CHECK(gkd::make_smem_descriptor(0x400, 16, 1024, gkd::smem_swizzle::bytes_128) == 0x4000004000010040ull);
  const auto f = decode(gkd::make_smem_descriptor(0x3FFF0, 8192, 1024, gkd::smem_swizzle::bytes_128));
  CHECK(f.start == 0x3FFF0u);
  CHECK(f.leading == 8192u);
  CHECK(f.stride == 1024u);
  CHECK(f.base_offset == 0u);
  CHECK(f.swizzle == 1u);
}

TEST_CASE("wgmma reads every operand element where TMA wrote it", "[gemm][wgmma]") {
  SECTION("A K-contiguous (K-major), two consumers of 64 rows") { check_operand_layout<true, policy::block_m, 64>(); }
  SECTION("A M-contiguous (M-major, transposed)") { check_operand_layout<false, policy::block_m, 64>(); }
  SECTION("B K-contiguous (K-major)") { check_operand_layout<true, policy::block_n, 256>(); }
  SECTION("B N-contiguous (N-major, transposed)") { check_operand_layout<false, policy::block_n, 256>(); }
  // The narrow tiles: B of 64 columns, read whole by each m64n64 wgmma.
  SECTION("narrow B K-contiguous") { check_operand_layout<true, gk::wgmma_narrow_policy::block_n, 64>(); }
  SECTION("narrow B N-contiguous") { check_operand_layout<false, gk::wgmma_narrow_policy::block_n, 64>(); }
}

TEST_CASE("the shared-memory ring fits the H200 and keeps every stage 1024-byte aligned", "[gemm][wgmma]") {
  using shape = gkd::wgmma_shape<policy>;
  STATIC_REQUIRE(shape::threads == 384);
  STATIC_REQUIRE(shape::stage_bytes == 48 * 1024);
  STATIC_REQUIRE(shape::stage_bytes % 1024 == 0);
  STATIC_REQUIRE(shape::a_bytes % 1024 == 0);
  STATIC_REQUIRE(shape::shared_bytes <= 227 * 1024);  // the opt-in limit of sm_90
  using narrow = gkd::wgmma_shape<gk::wgmma_narrow_policy>;
  STATIC_REQUIRE(narrow::threads == 384);
  STATIC_REQUIRE(narrow::stage_bytes == 24 * 1024);
  STATIC_REQUIRE(narrow::stage_bytes % 1024 == 0);
  STATIC_REQUIRE(narrow::shared_bytes <= 227 * 1024);
}

TEST_CASE("gemm_wgmma plans 128 x 64 tiles where N is at most 64 and 128 x 256 beyond", "[gemm][wgmma][plan]") {
  for (const std::int64_t n : {1, 9, 33, 63, 64, 65, 256, 1000}) {
    INFO("N = " << n);
    const foundry::gemm_plan plan =
        gk::wgmma_plan<__nv_bfloat16>(foundry::test::fake_gemm_problem({16384, n, 16384}), 0, 132);
    const bool narrow = n <= 64;
    CHECK(plan.block_n == (narrow ? 64 : 256));
    CHECK(plan.stages == (narrow ? 8 : 4));
    CHECK((plan.block_m == 128 && plan.block_k == 64));
    CHECK((std::string(plan.why).find("m64n64k16") != std::string::npos) == narrow);
  }
  // An explicit policy keeps its tile whatever N is.
  CHECK(gk::wgmma_plan<__nv_bfloat16, gk::wgmma_policy>(foundry::test::fake_gemm_problem({4096, 16, 4096}), 0, 132)
            .block_n == 256);
  // 16384 x 64 x 16384: 128 tiles of 128 x 64, every SM but 4 busy: no split.
  CHECK(gk::wgmma_plan<__nv_bfloat16>(foundry::test::fake_gemm_problem({16384, 64, 16384}), 0, 132).split_k == 1);
}

TEST_CASE("gemm_wgmma plans 128 x 64 tiles beyond N = 64 where 128 x 256 tiles leave SMs idle and are modelled slower",
          "[gemm][wgmma][plan]") {
  struct expected {
    foundry::test::gemm_shape shape;
    int block_n;
    int split_k;
  };
  // Deep K, small C: the wide tiles split as far as they may and still leave SMs idle, with
  // twice the slices of C to write and reduce. Small products: a quarter of the work a block.
  // 128 x 256 stays where its grid fills the SMs (4096^3, 16384 x 65 x 16384), where the narrow
  // plan's slices would be more than twice as deep (82 x 2455 x 7918: 3 x 2688 against 13 x
  // 640, slower on the H100), and where the model finds no clear gain (1000 x 1000 x 12000).
  const expected cases[] = {{{256, 256, 16384}, 64, 16},  {{128, 1024, 16384}, 64, 8},  {{130, 300, 6000}, 64, 11},
                            {{300, 520, 1000}, 64, 1},    {{127, 259, 200}, 64, 1},     {{1000, 1000, 12000}, 256, 4},
                            {{4096, 4096, 4096}, 256, 1}, {{16384, 65, 16384}, 256, 1}, {{65, 1000, 4096}, 256, 8},
                            {{82, 2455, 7918}, 256, 13}};
  for (const auto& e : cases) {
    INFO(e.shape.m << " x " << e.shape.n << " x " << e.shape.k);
    const foundry::gemm_plan plan = gk::wgmma_plan<__nv_bfloat16>(foundry::test::fake_gemm_problem(e.shape), 0, 132);
    CHECK(plan.block_n == e.block_n);
    CHECK(plan.split_k == e.split_k);
    CHECK(plan.stages == (e.block_n == 64 ? 8 : 4));
    CHECK((std::string(plan.why).find("leave SMs idle") != std::string::npos) == (e.block_n == 64));
  }
}

TEST_CASE("wgmma_tiling_policy: a step in proportion to the tile's rows, the operands' reads a bound",
          "[gemm][wgmma][plan]") {
  using model = gk::wgmma_tiling_policy;
  // 256 x 256 x 16384: A and B are 16.8 MB, 6.2 us at 2.7 TB/s, above either tiling's steps
  // (8 wide steps of 0.5 us, 16 narrow of 0.25, one wave each): the reads bind both, and the
  // reduce of 32 or 16 slices tells them apart.
  const auto deep = foundry::test::fake_gemm_problem({256, 256, 16384});
  const foundry::gemm_plan wide = gk::wgmma_plan<__nv_bfloat16, gk::wgmma_policy>(deep, 0, 132);
  const foundry::gemm_plan narrow = gk::wgmma_plan<__nv_bfloat16, gk::wgmma_narrow_policy>(deep, 0, 132);
  REQUIRE((wide.split_k == 32 && wide.k_per_split == 512 && narrow.split_k == 16 && narrow.k_per_split == 1024));
  const double operands_us = 2.0 * (256.0 * 16384 + 16384.0 * 256) / model::operand_bytes_per_us;
  REQUIRE(operands_us > 8 * model::fast_step_us);
  CHECK(gk::modelled_us<__nv_bfloat16, model>(wide, deep, 132) ==
        Approx(model::fast_call_us + operands_us + gk::modelled_reduce_us<model>(256, 256, 32)));
  CHECK(gk::modelled_us<__nv_bfloat16, model>(narrow, deep, 132) ==
        Approx(model::fast_call_us + operands_us + gk::modelled_reduce_us<model>(256, 256, 16)));
  // The packing rule's policy has neither term: 16 narrow steps at the full 0.5 us.
  CHECK(gk::modelled_us(narrow, deep, 132) ==
        Approx(gk::gemm_pack_policy::fast_call_us + 16 * gk::gemm_pack_policy::fast_step_us +
               gk::modelled_reduce_us(256, 256, 16)));
  // 1000 x 1000 x 12000 in 128 x 64 tiles: 128 tiles, one slice, one wave of 188 steps at half
  // of 0.5 us (rows 128 + 64 of 384): 47 us, above the 48 MB of operands (17.8 us).
  const auto square = foundry::test::fake_gemm_problem({1000, 1000, 12000});
  const foundry::gemm_plan narrow_square = gk::wgmma_plan<__nv_bfloat16, gk::wgmma_narrow_policy>(square, 0, 132);
  REQUIRE(narrow_square.split_k == 1);
  CHECK(gk::modelled_us<__nv_bfloat16, model>(narrow_square, square, 132) == Approx(model::fast_call_us + 188 * 0.25));
}

TEST_CASE("the dispatch offers the wgmma rung only where it runs", "[gemm][wgmma]") {
  using foundry::gemm_rung;
  constexpr bool built = gk::gemm_wgmma_built;
  CHECK(std::string(foundry::gemm_rung_name(gemm_rung::wgmma)) == "wgmma");
  CHECK(foundry::gemm_rung_supports<__nv_bfloat16, float>(gemm_rung::wgmma, 90) == built);
  CHECK(foundry::gemm_rung_supports<__half, float>(gemm_rung::wgmma, 90) == built);
  for (const int cc : {80, 86, 89, 100, 120}) {
    INFO("sm_" << cc);
    CHECK_FALSE(foundry::gemm_rung_supports<__nv_bfloat16, float>(gemm_rung::wgmma, cc));
    CHECK(foundry::best_gemm_rung<__nv_bfloat16, float>(cc) == gemm_rung::tensor_core);
  }
  CHECK_FALSE(foundry::gemm_rung_supports<float, float>(gemm_rung::wgmma, 90));
  CHECK(foundry::best_gemm_rung<__nv_bfloat16, float>(90) == (built ? gemm_rung::wgmma : gemm_rung::tensor_core));
  CHECK(foundry::best_gemm_rung<__half, float>(90) == (built ? gemm_rung::wgmma : gemm_rung::tensor_core));
  CHECK(foundry::best_gemm_rung<float, float>(90) == gemm_rung::register_blocked);
}

TEST_CASE("the TMA path needs 16-byte aligned operands, leading dimensions of 8k and K > 0", "[gemm][wgmma]") {
  auto p = foundry::test::fake_gemm_problem({64, 64, 64});
  p.lda = 64;
  p.ldb = 72;
  CHECK(gk::gemm_wgmma_tma_path(p));
  p.a_k_contiguous = false;
  p.b_n_contiguous = false;
  CHECK(gk::gemm_wgmma_tma_path(p));  // every layout has TMA maps
  p.lda = 68;
  CHECK_FALSE(gk::gemm_wgmma_tma_path(p));
  p.lda = 64;
  p.b = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{8192 + 8});
  CHECK_FALSE(gk::gemm_wgmma_tma_path(p));
  p.b = reinterpret_cast<const __nv_bfloat16*>(std::uintptr_t{8192});
  p.k = 0;
  CHECK_FALSE(gk::gemm_wgmma_tma_path(p));  // C = beta * C: rung 4
  p.k = std::int64_t{1} << 31;
  CHECK_FALSE(gk::gemm_wgmma_tma_path(p));  // TMA coordinates are 32-bit
}

TEST_CASE("gemm_wgmma splits K only when its block tiles leave SMs idle", "[gemm][wgmma]") {
  const auto splits = [](std::int64_t m, std::int64_t n, std::int64_t k, int requested) {
    return gk::wgmma_split_k(m, n, k, requested, 132).splits;
  };
  CHECK(splits(1024, 1024, 8192, 0) == 4);  // 32 tiles of 128 x 256
  CHECK(gk::wgmma_split_k(1024, 1024, 8192, 0, 132).depth == 2048);
  CHECK(splits(256, 512, 4096, 0) == 8);    // 4 tiles: K / 512 binds
  CHECK(splits(8192, 8192, 1024, 0) == 1);  // 2048 tiles
  CHECK(splits(4096, 4096, 4096, 0) == 1);
  CHECK(splits(4096, 1024, 8192, 0) == 1);    // 128 tiles: 132 / 128 slots per tile
  CHECK(splits(100, 100, 300, 0) == 1);       // K too short to split
  CHECK(splits(256, 256, 16384, 0) == 32);    // 2 tiles: K / 512 binds
  CHECK(splits(100, 100, 1 << 20, 0) == 64);  // at most 64 for a C of 2^16 elements or fewer
  CHECK(splits(128, 1024, 16384, 0) == 16);   // 4 tiles, 2^17 elements: at most 16
  CHECK(splits(100, 100, 100, 5) == 2);       // at most one slice per K step of 64
  CHECK(splits(8192, 8192, 1024, 3) == 3);    // a request is honoured
  CHECK(splits(128, 256, 1000, 15) == 8);     // depth round_up(67, 64) = 128: 8 slices, as the launcher runs
  CHECK(splits(128, 256, 1000, 7) == 6);      // depth round_up(143, 64) = 192: 6 slices
}

TEST_CASE("gemm_wgmma refuses to run in a program without sm_90a code", "[gemm][wgmma]") {
  if constexpr (gk::gemm_wgmma_built) {
    SUCCEED("this binary has sm_90a code: the refusal is tested in builds without it");
  } else {
    // Throws before any device query, so no GPU is needed; the pointers are never used.
    auto p = foundry::test::fake_gemm_problem({64, 64, 64});
    p.lda = p.ldb = p.ldc = 64;
    REQUIRE_THROWS_AS(gk::gemm_wgmma(p, cuda::stream_ref{cudaStreamLegacy}), std::invalid_argument);
  }
}

// ---------------------------------------------------------------------------------------------
// GPU.

TEMPLATE_TEST_CASE("gemm_wgmma computes one tile of exact integers element by element", "[gpu][gemm][wgmma]",
                   __nv_bfloat16, __half) {
  // One 128 × 256 × 64 tile (one block, one stage) whose products are exact small integers,
  // so the result is exact and a wrong element tells which element the kernel read:
  //   A selects (A(i, p) = 1 where p = i % 64) and B(p, j) = p:    C(i, j) = i % 64  (A rows, B K-rows)
  //   A selects, B(p, j) = j % 256 (exact in bf16):                 C(i, j) = j       (B columns)
  //   A(i, p) = i (< 128), B selects (B(p, j) = 1 where p = j % 64): C(i, j) = i      (A rows)
  //   A(i, p) = p, B selects:                                       C(i, j) = j % 64  (A K-columns)
  // A fault in a descriptor, the swizzle or the fragment layout shows up as a pattern in
  // "C(i, j) = got, expected ref" below. Also a small case for compute-sanitizer.
  SKIP_UNLESS_WGMMA_RUNS();
  const gemm_value_fn a_select = [](std::int64_t i, std::int64_t q) { return q == i % 64 ? 1.0f : 0.0f; };
  const gemm_value_fn b_select = [](std::int64_t q, std::int64_t j) { return q == j % 64 ? 1.0f : 0.0f; };
  const gemm_value_fn a_row = [](std::int64_t i, std::int64_t) { return static_cast<float>(i); };
  const gemm_value_fn a_col = [](std::int64_t, std::int64_t q) { return static_cast<float>(q); };
  const gemm_value_fn b_row = [](std::int64_t q, std::int64_t) { return static_cast<float>(q); };
  const gemm_value_fn b_col = [](std::int64_t, std::int64_t j) { return static_cast<float>(j); };
  const std::pair<gemm_value_fn, gemm_value_fn> patterns[] = {
      {a_select, b_row}, {a_select, b_col}, {a_row, b_select}, {a_col, b_select}};
  for (const auto& [a_k, b_n] : layouts) {
    int pattern = 0;
    for (const auto& [a_value, b_value] : patterns) {
      gemm_case c = make_gemm_case({128, 256, 64});
      c.a_k_contiguous = a_k;
      c.b_n_contiguous = b_n;
      INFO("pattern " << pattern++);
      const auto out = require_matches<TestType>(c, a_value, b_value);
      CHECK(out.path);
      CHECK(out.worst_ratio == 0.0);  // exact
    }
  }
}

TEMPLATE_TEST_CASE("gemm_wgmma matches the reference on odd shapes in every layout",
                   "[gpu][gemm][wgmma][racecheck_slow]", __nv_bfloat16, __half) {
  SKIP_UNLESS_WGMMA_RUNS();
  for (const auto& [a_k, b_n] : layouts) {
    for (const auto& sh : odd_shapes()) {
      gemm_case c = make_gemm_case(sh);
      c.a_k_contiguous = a_k;
      c.b_n_contiguous = b_n;
      CHECK(require_matches<TestType>(c).path);
      // The plan takes 128 x 64 tiles for most of these small products: the wide ones too.
      CHECK(require_matches_tiling<TestType, policy>(c).path);
    }
  }
}

TEMPLATE_TEST_CASE("gemm_wgmma's 128 x 64 tiles match the reference beyond N = 64",
                   "[gpu][gemm][wgmma][racecheck_slow]", __nv_bfloat16, __half) {
  // Several column tiles, the last ragged (N = 129, 300, 333, 520), the automatic plan's
  // split-K slices, every layout with the narrow tiling named; and each shape through the
  // plan's own choice.
  SKIP_UNLESS_WGMMA_RUNS();
  const shape shapes[] = {{130, 300, 2600}, {257, 129, 1500}, {200, 333, 1100}, {70, 520, 700}};
  for (const auto& sh : shapes) {
    for (const auto& [a_k, b_n] : layouts) {
      gemm_case c = make_gemm_case(sh, 1.25f, 0.5f);
      c.a_k_contiguous = a_k;
      c.b_n_contiguous = b_n;
      CHECK(require_matches_tiling<TestType, gk::wgmma_narrow_policy>(c).path);
    }
    CHECK(require_matches<TestType>(make_gemm_case(sh, 1.25f, 0.5f)).path);
  }
}

TEMPLATE_TEST_CASE("gemm_wgmma's 128 x 64 tiles beyond N = 64 with forced split-K and C off sectors",
                   "[gpu][gemm][wgmma]", __nv_bfloat16, __half) {
  SKIP_UNLESS_WGMMA_RUNS();
  for (const int splits : {3, 7}) {
    gemm_case c = make_gemm_case({211, 450, 2100}, 1.0f, 0.0f);
    c.c_ld_extra = 5;
    c.c_offset = 3;
    CHECK(require_matches_tiling<TestType, gk::wgmma_narrow_policy>(c, splits).path);
  }
}

TEMPLATE_TEST_CASE("gemm_wgmma's 128 x 64 tiles match the reference where N is at most 64", "[gpu][gemm][wgmma]",
                   __nv_bfloat16, __half) {
  // N from 1 to 64 (the narrow tiles' whole width), ragged tile rows, K with a ragged stage and
  // the 8-stage ring wrapping (K = 1000: 16 stages); then C off sectors with split-K.
  SKIP_UNLESS_WGMMA_RUNS();
  const shape shapes[] = {{300, 64, 1000}, {1157, 63, 200}, {129, 9, 777},
                          {2000, 33, 130}, {64, 64, 64},    {5000, 1, 72}};
  for (const auto& [a_k, b_n] : layouts) {
    for (const auto& sh : shapes) {
      gemm_case c = make_gemm_case(sh, 1.0f, 0.5f);
      c.a_k_contiguous = a_k;
      c.b_n_contiguous = b_n;
      CHECK(require_matches<TestType>(c).path);
    }
  }
  for (const int splits : {0, 5}) {
    gemm_case c = make_gemm_case({777, 40, 3000}, 1.5f, 0.0f);
    c.c_ld_extra = 3;
    c.c_offset = 1;
    gk::split_k_options options;
    options.split_k = splits;
    CHECK(require_matches_split<TestType>(c, options).path);
  }
}

TEMPLATE_TEST_CASE("gemm_wgmma applies alpha and beta, and never reads C when beta is 0",
                   "[gpu][gemm][wgmma][racecheck_slow]", __nv_bfloat16, __half) {
  // run_gemm_case leaves a NaN-poisoned C when beta == 0: any read of C would surface as NaN.
  SKIP_UNLESS_WGMMA_RUNS();
  const std::vector<std::pair<float, float>> pairs{{1.0f, 0.0f}, {-0.75f, 0.0f}, {2.0f, 0.5f},
                                                   {0.0f, 1.0f}, {1.0f, -2.0f},  {0.25f, 1.0f}};
  for (const auto& [alpha, beta] : pairs) {
    for (const auto& sh : {shape{127, 129, 255}, shape{300, 520, 1000}}) {
      for (const bool b_n : {true, false}) {
        gemm_case c = make_gemm_case(sh, alpha, beta);
        c.b_n_contiguous = b_n;
        CHECK(require_matches<TestType>(c).path);
      }
    }
  }
}

TEMPLATE_TEST_CASE("gemm_wgmma with K = 0 sets C to beta * C", "[gpu][gemm][wgmma]", __nv_bfloat16, __half) {
  SKIP_UNLESS_WGMMA_RUNS();
  for (const float beta : {0.0f, 0.5f, -2.0f}) {
    CHECK_FALSE(require_matches<TestType>(make_gemm_case({33, 65, 0}, 1.5f, beta)).path);  // rung 4 does it
  }
}

TEMPLATE_TEST_CASE("gemm_wgmma falls back to rung 4 for operands TMA cannot describe", "[gpu][gemm][wgmma]",
                   __nv_bfloat16, __half) {
  SKIP_UNLESS_WGMMA_RUNS();
  for (const auto& [a_k, b_n] : layouts) {
    for (const bool misaligned : {true, false}) {
      gemm_case c = make_gemm_case({127, 129, 255}, 1.0f, 0.5f);
      c.a_k_contiguous = a_k;
      c.b_n_contiguous = b_n;
      if (misaligned) {
        c.operand_offset = 1;  // 2 bytes past the allocation's alignment
      } else {
        c.ld_multiple = 1;
        c.ld_extra = 3;  // leading dimensions not a multiple of 8
      }
      CHECK_FALSE(require_matches<TestType>(c).path);
    }
  }
}

TEMPLATE_TEST_CASE("gemm_wgmma writes only the m x n window of C", "[gpu][gemm][wgmma]", __nv_bfloat16, __half) {
  // Padding beyond column n, odd ldc (single-float stores) and a C not 8-byte aligned.
  SKIP_UNLESS_WGMMA_RUNS();
  for (const auto& [ld_extra, offset] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{8, 0}, {3, 0}, {0, 1}, {5, 3}}) {
    gemm_case c = make_gemm_case({130, 259, 72}, 1.0f, 2.0f);
    c.c_ld_extra = ld_extra;
    c.c_offset = offset;
    CHECK(require_matches<TestType>(c).path);
  }
}

TEST_CASE("the wgmma epilogue stages C through shared memory where its rows are off sectors or K fits the ring",
          "[gemm][wgmma]") {
  foundry::gemm_problem<__nv_bfloat16, float> p;
  const auto at = [](std::uintptr_t bytes) { return reinterpret_cast<float*>(std::uintptr_t{1} << 20) + bytes / 4; };
  p.c = at(0);
  p.ldc = 4096;
  CHECK(gkd::c_rows_on_sectors(p));
  p.ldc = 4851;  // odd: the pairs would go out 4 bytes at a time
  CHECK_FALSE(gkd::c_rows_on_sectors(p));
  p.ldc = 11846;  // even, but rows 8 bytes off a sector
  CHECK_FALSE(gkd::c_rows_on_sectors(p));
  p.ldc = 4096;
  p.c = at(16);  // 16-byte aligned is not enough
  CHECK_FALSE(gkd::c_rows_on_sectors(p));
  p.c = at(32);
  CHECK(gkd::c_rows_on_sectors(p));
  // On sectors, the unit's depth decides: deeper than the ring of 4 stages, the direct pairs;
  // within it, staged (C's writes bind there, not the K loop).
  p.c = at(0);
  CHECK(gkd::wgmma_stores_c_directly<gk::wgmma_policy>(p, gk::wgmma_policy::stages + 1));
  CHECK_FALSE(gkd::wgmma_stores_c_directly<gk::wgmma_policy>(p, gk::wgmma_policy::stages));
  CHECK_FALSE(gkd::wgmma_stores_c_directly<gk::wgmma_policy>(p, 1));
  CHECK(gkd::wgmma_stores_c_directly<gk::wgmma_narrow_policy>(p, gk::wgmma_narrow_policy::stages + 1));
  CHECK_FALSE(gkd::wgmma_stores_c_directly<gk::wgmma_narrow_policy>(p, gk::wgmma_narrow_policy::stages));
  p.ldc = 4851;  // off sectors: staged whatever the depth
  CHECK_FALSE(gkd::wgmma_stores_c_directly<gk::wgmma_policy>(p, 1000));
}

TEMPLATE_TEST_CASE("gemm_wgmma writes C on and off 32-byte sectors: every ldc pad 0..7, bases 0 to 8 floats off",
                   "[gpu][gemm][wgmma]", __nv_bfloat16, __half) {
  // n = 264: the second column tile holds 8 columns, so a staged pass is mostly past N.
  // K = 300 (5 steps, deeper than the ring of 4): rows start on sectors only for pad 0 with
  // the base 0 or 8 floats off (the direct epilogue); every other case is staged. K = 72 (2
  // steps, within the ring): every case is staged. beta alternates 0 (C poisoned, never read)
  // and 0.5.
  SKIP_UNLESS_WGMMA_RUNS();
  for (const std::int64_t k : {300, 72}) {
    for (std::int64_t ld_extra = 0; ld_extra < 8; ++ld_extra) {
      for (const std::int64_t offset : {0, 1, 2, 4, 8}) {
        gemm_case c = make_gemm_case({130, 264, k}, 1.5f, (ld_extra + offset) % 2 == 0 ? 0.0f : 0.5f);
        c.c_ld_extra = ld_extra;
        c.c_offset = offset;
        c.b_n_contiguous = ld_extra % 2 == 0;
        INFO("k = " << k << ", ldc pad " << ld_extra << ", base " << offset << " floats off");
        CHECK(require_matches<TestType>(c).path);
      }
    }
  }
}

TEMPLATE_TEST_CASE("gemm_wgmma with split-K matches the reference in every layout and workspace", "[gpu][gemm][wgmma]",
                   __nv_bfloat16, __half) {
  SKIP_UNLESS_WGMMA_RUNS();
  foundry::test::check_split_k_cases(require_matches_split<TestType>);
}

TEMPLATE_TEST_CASE("gemm_wgmma sums its split-K slices in slice order, bit for bit", "[gpu][gemm][wgmma]",
                   __nv_bfloat16, __half) {
  SKIP_UNLESS_WGMMA_RUNS();
  const int sms = foundry::get_device_properties().sm_count;
  foundry::test::check_split_k_sum_is_exact<TestType>(
      [](const auto& q, const auto& options, cuda::stream_ref s) {
        REQUIRE(gk::gemm_wgmma_tma_path(q));
        gk::gemm_wgmma(q, options, s);
      },
      [&](std::int64_t m, std::int64_t n, std::int64_t k, int splits) {
        return gk::wgmma_split_k(m, n, k, splits, sms).depth;
      });
}

TEMPLATE_TEST_CASE("gemm_wgmma runs several tiles per persistent block, with and without split-K", "[gpu][gemm][wgmma]",
                   __nv_bfloat16, __half) {
  // More block tiles than SMs (11 tile columns, enough ragged tile rows: 13 x 11 = 143 on the
  // H200's 132 SMs), so some blocks take a second tile, whose copies fly while the first is
  // stored. K = 136: two full stages and a ragged one. With 2 slices, twice the units: a
  // block's units span both slices and the ring wraps inside a block's later units.
  SKIP_UNLESS_WGMMA_RUNS();
  const int sms = foundry::get_device_properties().sm_count;
  const std::int64_t tile_rows = (sms + 11) / 11;  // 11 * tile_rows > sms
  const std::int64_t m = 128 * tile_rows - 28;     // the last tile row ragged
  REQUIRE(gk::wgmma_split_k(m, 2600, 136, 0, sms).splits == 1);
  for (const int splits : {1, 2}) {
    for (const auto& [a_k, b_n] : layouts) {
      gemm_case c = make_gemm_case({m, 2600, 136}, 1.0f, 0.5f);
      c.a_k_contiguous = a_k;
      c.b_n_contiguous = b_n;
      gk::split_k_options options;
      options.split_k = splits;
      CHECK(require_matches_split<TestType>(c, options).path);
      // The 128 x 64 tiles named (two layouts: the CPU reference dominates the time): 41 tile
      // columns, about four times the units a block.
      if (a_k == b_n) CHECK(require_matches_tiling<TestType, gk::wgmma_narrow_policy>(c, splits).path);
    }
  }
}

TEMPLATE_TEST_CASE("gemm_wgmma splits K by itself when the tiles are few, and never reads C when beta is 0",
                   "[gpu][gemm][wgmma]", __nv_bfloat16, __half) {
  // 4 wide or 16 narrow block tiles on the GPU's SMs: the plan (128 x 64 tiles on the H200)
  // splits K, 8 slices of 512 there.
  SKIP_UNLESS_WGMMA_RUNS();
  const gemm_case c = make_gemm_case({256, 512, 4096});
  const foundry::gemm_plan plan = gk::wgmma_plan<__nv_bfloat16>(foundry::test::fake_gemm_problem({c.m, c.n, c.k}), 0,
                                                                foundry::get_device_properties().sm_count);
  INFO("plan: " << plan.describe());
  CHECK(plan.split_k > 1);
  CHECK(require_matches<TestType>(c).path);
}

TEMPLATE_TEST_CASE("gemm_wgmma refuses a split-K workspace that is too small", "[gpu][gemm][wgmma]", __nv_bfloat16,
                   __half) {
  SKIP_UNLESS_WGMMA_RUNS();
  foundry::test::check_split_k_rejects_small_workspace<TestType>(
      [](const auto& q) { return gk::gemm_wgmma_tma_path(q); },
      [](const auto& q, const auto& options, cuda::stream_ref s) { gk::gemm_wgmma(q, options, s); });
}

TEMPLATE_TEST_CASE("gemm_wgmma with an empty C does nothing", "[gpu][gemm][wgmma]", __nv_bfloat16, __half) {
  SKIP_UNLESS_WGMMA_RUNS();
  for (const auto& sh : {shape{0, 5, 3}, shape{5, 0, 3}, shape{0, 0, 0}}) {
    gemm_case c = make_gemm_case(sh);
    c.c_ld_extra = 2;  // C holds only padding (or nothing): it must stay NaN
    require_matches<TestType>(c);
  }
}
