// The GEMM shape sweep with fp16 inputs: rows gemm_sweep_fp16/{foundry,cublas}/<M>x<N>x<K>_<layouts>_<pads>.
// The problems, the checks and the time budget: gemm_sweep.cuh.

#include "gemm_sweep.cuh"

namespace {
const bool registered = gemm_sweep::register_sweep<__half>("fp16");
}  // namespace

FOUNDRY_BENCH_MAIN()
