// The GEMM shape sweep with bf16 inputs: rows gemm_sweep_bf16/{foundry,cublas}/<M>x<N>x<K>_<layouts>_<pads>.
// The problems, the checks and the time budget: gemm_sweep.cuh.

#include "gemm_sweep.cuh"

namespace {
const bool registered = gemm_sweep::register_sweep<__nv_bfloat16>("bf16");
}  // namespace

FOUNDRY_BENCH_MAIN()
