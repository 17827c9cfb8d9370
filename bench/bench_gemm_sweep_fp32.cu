// The GEMM shape sweep with fp32 inputs: rows gemm_sweep_fp32/{foundry,cublas}/<M>x<N>x<K>_<layouts>_<pads>.
// The problems, the checks and the time budget: gemm_sweep.cuh.

#include "gemm_sweep.cuh"

namespace {
const bool registered = gemm_sweep::register_sweep<float>("fp32");
}  // namespace

FOUNDRY_BENCH_MAIN()
