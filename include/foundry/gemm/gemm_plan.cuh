#pragma once
/// \file
/// The plan of one GEMM: every choice the host makes before it enqueues a kernel,
/// as a value that a test can inspect and a log can print.
///
///     const foundry::gemm_plan plan = foundry::make_gemm_plan(problem);
///     std::cout << plan.describe() << "\n";  // "wgmma 128x256x64, 4 stages, 1 block/SM, split-K 1: ..."
///
/// `foundry::gemm` builds it from the problem and the device (gemm.cuh) and hands it
/// to the launch function of the kernel it names (`launch_<rung>` in each rung's
/// header). Packing (gemm_pack.cuh) is a field here and a step of the builder: the
/// operands the launch first copies into the workspace, aligned, so that the fast kernel
/// of the rung can read them. Choices still to come (a per-shape table, TF32) get a field
/// here and a line in the builder, not another layer.

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace foundry {

/// The rungs of the GEMM ladder, slowest first; then `skinny`, which the plan picks by
/// shape (M or N small), not by type.
enum class gemm_rung {
  naive,             ///< one thread per element of C, global memory only
  shared_tiled,      ///< 32 × 32 shared-memory tiles, one element per thread
  register_blocked,  ///< 128 × 128 tiles, 8 × 8 per thread in registers, float4, double-buffered
  tensor_core,       ///< mma.sync m16n8k16, fp16/bf16 inputs, fp32 accumulation (sm_80+)
  wgmma,   ///< wgmma m64n256 fed by TMA, fp16/bf16 inputs or fp32 ones as TF32 (opt-in), fp32 accumulation (sm_90a)
  skinny,  ///< memory-bound kernel for M or N small: the large operand read once (any input type)
};

/// The rung's name as benchmarks print it ("register_blocked", ...).
[[nodiscard]] constexpr const char* gemm_rung_name(gemm_rung rung) noexcept {
  switch (rung) {
    case gemm_rung::naive: return "naive";
    case gemm_rung::shared_tiled: return "shared_tiled";
    case gemm_rung::register_blocked: return "register_blocked";
    case gemm_rung::tensor_core: return "tensor_core";
    case gemm_rung::wgmma: return "wgmma";
    case gemm_rung::skinny: return "skinny";
  }
  return "unknown";
}

/// What `foundry::gemm` will enqueue for one problem. Tile fields are 0 for the
/// rungs without a block tile (naive); `min_blocks_per_sm` is the residency the kernel
/// is built for (`__launch_bounds__`) and the split-K plan assumes.
struct gemm_plan {
  /// The rung that runs the problem.
  gemm_rung rung = gemm_rung::naive;
  /// Rung 4 only: the unaligned-operand kernel (scalar loads, no pipeline; it splits K as the fast one does).
  bool fallback = false;
  /// fp32 inputs multiplied on tensor cores as TF32 (`gemm_math::tf32`, the wgmma rung).
  bool tf32 = false;
  /// Rows of C per block tile.
  int block_m = 0;
  /// Columns of C per block tile.
  int block_n = 0;
  /// K per step of the main loop.
  int block_k = 0;
  int stages = 1;  ///< shared-memory buffers in the K pipeline
  /// Blocks resident per SM, as built (`__launch_bounds__`).
  int min_blocks_per_sm = 1;
  int split_k = 1;  ///< K slices, each computed by separate blocks
  /// K per slice (0 without split): a multiple of block_k, except on the skinny rung, whose
  /// slices are whole rounds of its loads (`skinny_policy::split_unit_k`), often less than a chunk.
  std::int64_t k_per_split = 0;
  /// Workspace the launch needs: the packed copies (`pack_bytes`, at the front), then
  /// split-K's slices (none for one slice).
  std::size_t workspace_bytes = 0;
  /// A is first copied into the workspace, dense, its rows on 16-byte boundaries
  /// (gemm_pack.cuh), and the rung reads the copy.
  bool pack_a = false;
  bool pack_b = false;          ///< as `pack_a`, for B
  std::int64_t packed_lda = 0;  ///< leading dimension of A's copy (0: not packed)
  std::int64_t packed_ldb = 0;  ///< leading dimension of B's copy (0: not packed)
  /// A's copy is stored transposed: K-contiguous where A is M-contiguous (TF32's wgmma reads
  /// only K-major operands); `packed_lda` is then the copy's row length rounded up.
  bool pack_a_transposed = false;
  bool pack_b_transposed = false;  ///< as `pack_a_transposed`: B's copy K-contiguous where B is N-contiguous
  std::size_t pack_bytes = 0;      ///< bytes of `workspace_bytes` that the copies take
  const char* why = "";            ///< the reason for the rung (and the packing), in a few words

  /// One line: rung, tile, stages, residency, packing, split, workspace and why.
  [[nodiscard]] std::string describe() const {
    std::string s = gemm_rung_name(rung);
    if (fallback) s += " (fallback)";
    if (tf32) s += " (tf32)";
    if (block_m > 0) {
      s += " " + std::to_string(block_m) + "x" + std::to_string(block_n) + "x" + std::to_string(block_k) + ", " +
           std::to_string(stages) + (stages == 1 ? " stage, " : " stages, ") + std::to_string(min_blocks_per_sm) +
           " block/SM";
    }
    // "A packed (ld 4100)", "B packed (transposed, ld 4096)", "A and B packed (A transposed, ld 1024, 4096)".
    if (pack_a || pack_b) {
      const bool both = pack_a && pack_b;
      s += both ? ", A and B packed (" : pack_a ? ", A packed (" : ", B packed (";
      const bool ta = pack_a && pack_a_transposed, tb = pack_b && pack_b_transposed;
      if (ta || tb) s += std::string(!both || (ta && tb) ? "" : ta ? "A " : "B ") + "transposed, ";
      s += "ld " +
           (both ? std::to_string(packed_lda) + ", " + std::to_string(packed_ldb)
                 : std::to_string(pack_a ? packed_lda : packed_ldb)) +
           ")";
    }
    s += ", split-K " + std::to_string(split_k);
    if (split_k > 1) s += " x " + std::to_string(k_per_split);
    if (workspace_bytes > 0) s += " (" + std::to_string(workspace_bytes) + " bytes of workspace)";
    return s + ": " + why;
  }
};

namespace detail {

/// Whether `Policy` has a member `blocks_per_sm`: a GEMM policy's residency is
/// `min_blocks_per_sm` (ARCHITECTURE.md, "Policy vocabulary"), so a `blocks_per_sm`
/// there is a tuning from before the rename that no kernel would read.
template <class Policy, class = void>
inline constexpr bool has_blocks_per_sm = false;
template <class Policy>
inline constexpr bool has_blocks_per_sm<Policy, std::void_t<decltype(Policy::blocks_per_sm)>> = true;

/// A plan of `rung` with `Policy`'s tile, stages and residency, chosen for `why`.
template <class Policy>
[[nodiscard]] gemm_plan plan_with_policy(gemm_rung rung, const char* why) noexcept {
  static_assert(!has_blocks_per_sm<Policy>,
                "a GEMM policy names its residency min_blocks_per_sm (blocks_per_sm is a grid cap elsewhere)");
  gemm_plan plan;
  plan.rung = rung;
  plan.block_m = Policy::block_m;
  plan.block_n = Policy::block_n;
  plan.block_k = Policy::block_k;
  plan.stages = Policy::stages;
  plan.min_blocks_per_sm = Policy::min_blocks_per_sm;
  plan.why = why;
  return plan;
}

}  // namespace detail
}  // namespace foundry
