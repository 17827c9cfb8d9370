// Session 30, for issue 21: the tensor-core skinny kernel where the large operand is read along
// k. On the H100 (session 29's bench_gemm_skinny) 16384 x 8 x 16384 bf16 and fp16 read A at
// 2.32 TB/s, 78% of the device copy (2.98 TB/s), against 2.85 TB/s along n (8 x 16384 x 16384)
// and 2.74 for the fp32 CUDA-core kernel along k. Along k a warp's round of loads takes 128
// bytes of each of 32 rows (2 tiles of 16 rows x 2 blocks of 32 k); this probe is built once per
// variant of `skinny_mma_policy`'s along_k_row_tiles and along_k_blocks_in_flight (sed on a copy
// of include/, see s30.sh) to time fewer rows at more contiguous bytes a round.
// One CSV line a problem: variant,problem,plan,us,cublas_us,copy_us,large_bytes,max_abs_diff;
// the main build adds a line "wgmma" for the wgmma rung's plan where N <= 64
// (copy_us: cudaMemcpyAsync of the large operand's bytes, device to device; the ceiling's
// bandwidth is 2 x bytes / copy_us, as scripts count a copy's read and write; max_abs_diff
// against cuBLAS's C on operands of 0x3c3c (1.18 in bf16, 1.06 in fp16), whose exact sum is the same
// for every element.)
// Build (from the repository root, INCLUDE the variant's copy of include/):
//   nvcc -O3 -std=c++20 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I $INCLUDE -I bench \
//     -I bench/results/h200/runs/session23 -DVARIANT='"v1"' \
//     bench/results/h100/runs/session30/skinny_along_k_probe.cu -lcublas -lbenchmark -o skinny_along_k_probe
#include <foundry/foundry.cuh>

#include "probe_common.cuh"

#include <cuda_bf16.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#ifndef VARIANT
#define VARIANT "main"
#endif
// Session 31 (runs/session31/build-probes.sh): the variant that prints the wgmma lines, and
// two shapes of 256 MB of A, to place the size from which the wgmma tiles beat the kernel.
#ifndef WGMMA_VARIANT
#define WGMMA_VARIANT "main"
#endif
#ifndef WITH_256_MB_SHAPES
#define WITH_256_MB_SHAPES 0
#endif

namespace {

namespace gk = foundry::gemm_kernels;
using in = __nv_bfloat16;

gemm_sweep::sweep_problem shape(std::int64_t m, std::int64_t n, std::int64_t k, bool b_col_major) {
  gemm_sweep::sweep_problem p = gemm_sweep::plain(m, n, k, gemm_sweep::sweep_class::vector_or_skinny);
  if (b_col_major) p.layout_b = foundry::matrix_layout::col_major;
  return p;
}

void probe(const gemm_sweep::sweep_problem& problem, int sms, foundry::stream& s) {
  probe_operands<in> operands(problem, s);
  const auto& p = operands.p;
  const foundry::gemm_plan plan = gk::skinny_plan<in>(p, 0, sms);
  const std::string what = plan.describe();
  const double us = time_back_to_back([&] { gk::launch_skinny<in>(plan, p, {}, s.view()); }, s);
  std::vector<float> ours(operands.c.size()), theirs(operands.c.size());
  FOUNDRY_CUDA_TRY(
      cudaMemcpyAsync(ours.data(), operands.c.data(), ours.size() * sizeof(float), cudaMemcpyDeviceToHost, s.get()));
  const double cublas_us = time_back_to_back(
      [&] { gemm_sweep::cublas_gemm<in>(problem, operands.a.data(), operands.b.data(), operands.c.data(), s); }, s);
  FOUNDRY_CUDA_TRY(cudaMemcpyAsync(theirs.data(), operands.c.data(), theirs.size() * sizeof(float),
                                   cudaMemcpyDeviceToHost, s.get()));
  s.synchronize();
  double diff = 0.0;
  for (std::size_t i = 0; i < ours.size(); ++i) diff = std::fmax(diff, std::fabs(ours[i] - theirs[i]));
  const bool a_large = p.m >= p.n;
  const std::size_t bytes = (a_large ? operands.a.size() : operands.b.size()) * sizeof(in);
  foundry::device_buffer<char> copy(bytes, s);
  const void* from = a_large ? static_cast<const void*>(operands.a.data()) : operands.b.data();
  const double copy_us = time_back_to_back(
      [&] { FOUNDRY_CUDA_TRY(cudaMemcpyAsync(copy.data(), from, bytes, cudaMemcpyDeviceToDevice, s.get())); }, s);
  std::printf("%s,%s,%s,%.2f,%.2f,%.2f,%zu,%.3g\n", VARIANT, problem.name().c_str(),
              what.substr(0, what.find(": ")).c_str(), us, cublas_us, copy_us, bytes, diff);
  // The wgmma rung's plan of the same problem (its 128 x 64 tiles where N <= 64), as a line of
  // variant "wgmma": the one rung that does not change with the skinny kernel's shape.
  if (std::string(VARIANT) == WGMMA_VARIANT && p.n <= 64) {
    const foundry::gemm_plan wgmma = foundry::make_gemm_plan(p, foundry::gemm_rung::wgmma, sms);
    const std::string wgmma_what = wgmma.describe();
    const double wgmma_us = time_back_to_back([&] { foundry::detail::launch_plan(wgmma, p, {}, s.view()); }, s);
    std::printf("wgmma,%s,%s,%.2f,%.2f,%.2f,%zu,-\n", problem.name().c_str(),
                wgmma_what.substr(0, wgmma_what.find(": ")).c_str(), wgmma_us, cublas_us, copy_us, bytes);
  }
  std::fflush(stdout);
}

}  // namespace

int main() {
  try {
    foundry::stream s;
    const int sms = foundry::get_device_properties(0).sm_count;
    std::vector<gemm_sweep::sweep_problem> problems = {
        shape(16384, 8, 16384, false),  shape(16384, 4, 16384, false), shape(16384, 2, 16384, false),
        shape(16384, 16, 16384, false), shape(65536, 8, 4096, false),  shape(4096, 8, 65536, false),
        shape(16384, 8, 4096, false),   shape(4096, 8, 16384, false),  shape(131072, 4, 2048, false),
        shape(8, 16384, 16384, true),   shape(2, 16384, 16384, true),  shape(6085, 6, 2048, false),
        shape(1024, 8, 8192, false)};
    if (WITH_256_MB_SHAPES)
      problems.insert(problems.end(), {shape(16384, 8, 8192, false), shape(8192, 8, 16384, false)});
    for (const auto& problem : problems) probe(problem, sms, s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "skinny_along_k_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
