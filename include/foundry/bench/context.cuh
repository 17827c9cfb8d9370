#pragma once
/// \file
/// What the figures were measured on, written into Google Benchmark's context (the top of
/// the console output and the "context" object of the JSON): the GPU, its clocks and
/// memory, ECC, the driver, CUDA, cuBLAS and CCCL versions, and the measured ceilings.

#include <foundry/bench/ceilings.cuh>
#include <foundry/runtime/device.cuh>

#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <cuda/version>

#include <cstdio>
#include <string>

namespace foundry::bench {

namespace detail {

inline std::string cuda_version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

inline std::string fixed(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

/// The driver's release ("580.95.05") through NVML, loaded at run time so that the
/// harness needs no NVML headers or link; "unknown" where NVML is absent.
inline std::string nvidia_driver_version() {
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (nvml == nullptr) return "unknown";
  using init_fn = int (*)();
  using version_fn = int (*)(char*, unsigned);
  auto init = reinterpret_cast<init_fn>(dlsym(nvml, "nvmlInit_v2"));
  auto version = reinterpret_cast<version_fn>(dlsym(nvml, "nvmlSystemGetDriverVersion"));
  auto shutdown = reinterpret_cast<init_fn>(dlsym(nvml, "nvmlShutdown"));
  std::string result = "unknown";
  char text[96] = {};
  if (init != nullptr && version != nullptr && shutdown != nullptr && init() == 0) {
    if (version(text, sizeof text) == 0) result = text;  // 0 is NVML_SUCCESS
    (void)shutdown();
  }
  dlclose(nvml);
  return result;
}

}  // namespace detail

/// Adds the device description and the measured ceilings (measuring them if this is the
/// first use) to Google Benchmark's context. Call before RunSpecifiedBenchmarks
/// (FOUNDRY_BENCH_MAIN does). Throws `cuda_error` if the device cannot be queried.
inline void add_context() {
  using benchmark::AddCustomContext;
  const device_properties& p = get_device_properties();
  int driver = 0;
  int runtime = 0;
  FOUNDRY_CUDA_TRY(cudaDriverGetVersion(&driver));
  FOUNDRY_CUDA_TRY(cudaRuntimeGetVersion(&runtime));
  AddCustomContext("gpu", p.name);
  AddCustomContext("gpu_compute_capability",
                   std::to_string(p.compute_capability_major) + "." + std::to_string(p.compute_capability_minor));
  AddCustomContext("gpu_sm_count", std::to_string(p.sm_count));
  AddCustomContext("gpu_sm_clock_max_mhz", std::to_string(p.sm_clock_khz / 1000));
  AddCustomContext("gpu_memory_clock_max_mhz", std::to_string(p.memory_clock_khz / 1000));
  AddCustomContext("gpu_memory_bus_bits", std::to_string(p.memory_bus_width_bits));
  AddCustomContext("gpu_memory_gib", detail::fixed(static_cast<double>(p.global_memory_bytes) / (1u << 30), 1));
  AddCustomContext("gpu_l2_mib", detail::fixed(static_cast<double>(p.l2_cache_bytes) / (1u << 20), 1));
  AddCustomContext("gpu_ecc", p.ecc_enabled ? "on" : "off");
  AddCustomContext("nvidia_driver", detail::nvidia_driver_version());
  AddCustomContext("cuda_driver_api", detail::cuda_version_string(driver));
  AddCustomContext("cuda_runtime", detail::cuda_version_string(runtime));
  AddCustomContext("cublas", std::to_string(CUBLAS_VER_MAJOR) + "." + std::to_string(CUBLAS_VER_MINOR) + "." +
                                 std::to_string(CUBLAS_VER_PATCH));
  AddCustomContext("cccl", std::to_string(CCCL_MAJOR_VERSION) + "." + std::to_string(CCCL_MINOR_VERSION) + "." +
                               std::to_string(CCCL_PATCH_VERSION));

  const ceilings& c = device_ceilings();
  AddCustomContext("ceiling_copy_GB/s", detail::fixed(c.copy_bytes_per_second * 1e-9, 1));
  AddCustomContext("ceiling_theoretical_GB/s", detail::fixed(c.theoretical_bytes_per_second * 1e-9, 1));
  for (flop_ceiling f : {flop_ceiling::fp32_cuda_cores, flop_ceiling::fp32_cublas, flop_ceiling::tf32_tensor,
                         flop_ceiling::bf16_tensor, flop_ceiling::bf16_mma_sync}) {
    AddCustomContext(std::string("ceiling_") + to_string(f) + "_TFLOP/s",
                     detail::fixed(c.flops_per_second(f) * 1e-12, 2));
  }
  AddCustomContext("ceiling_copy_probe_bytes", std::to_string(c.copy_bytes));
  AddCustomContext("ceiling_gemm_probe_size", std::to_string(c.gemm_size));
}

}  // namespace foundry::bench
