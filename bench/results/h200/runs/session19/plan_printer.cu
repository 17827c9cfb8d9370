// Prints foundry::make_gemm_plan's choice for every problem of the shape sweep
// (bench/gemm_sweep.cuh), fp32 and bf16, for an H100/H200-like device (132 SMs, compute
// capability 9.0, 227 KiB of opt-in shared memory), on a machine without a GPU: the plans of two
// trees can be diffed before a device call. Session 19 used it for model-for-large-fallbacks.patch
// and rung3-small-c-splits.patch. Build and run (from the repository root):
//   nvcc -std=c++20 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
//     -I bench/include bench/results/h200/runs/session19/plan_printer.cu -lcublas -lbenchmark -o /tmp/plans && /tmp/plans
#include <foundry/foundry.cuh>

#include "gemm_sweep.cuh"

#include <cstdint>
#include <cstdio>

template <class In>
void show(const char* tag, const gemm_sweep::sweep_problem& p) {
  // Only the operands' alignment reaches the plan: any well-aligned addresses stand for them.
  const auto at = [](std::uintptr_t address) { return reinterpret_cast<const In*>(address); };
  const auto q =
      foundry::make_gemm_problem<In, float>(1.0f, p.a().view(at(256)), p.op_a, p.b().view(at(1u << 20)), p.op_b, 0.0f,
                                            p.c().view(reinterpret_cast<float*>(std::uintptr_t{1u << 21})));
  foundry::device_properties device;
  device.sm_count = 132;
  device.compute_capability_major = 9;
  device.shared_memory_per_block_optin = 232448;
  std::printf("%s %-32s %s\n", tag, p.name().c_str(), foundry::make_gemm_plan(q, device).describe().c_str());
}

int main() {
  for (const auto& p : gemm_sweep::sweep_problems()) {
    show<float>("fp32", p);
    show<__nv_bfloat16>("bf16", p);
  }
}
