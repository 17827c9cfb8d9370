#pragma once
/// \file
/// The ceilings every benchmark is compared with, measured on the device in use, once per
/// process (about a second, most of it cuBLAS start-up):
/// - bandwidth: a large device-to-device `cudaMemcpyAsync` (bytes read + written per
///   second: what a copy kernel can hope for), and the datasheet figure from clock × bus;
/// - FLOP rate: an FMA-bound kernel on the CUDA cores (fp32), an `mma.sync`-bound kernel on
///   the tensor cores (bf16 in, fp32 accumulation: the instruction rung 4 of the GEMM ladder
///   is built from, with operands in registers), and cuBLAS GEMM at 8192^3 for fp32, tf32
///   and bf16 (fp32 accumulation) on random inputs.
/// Each figure is the median of event-timed runs after a warm-up.

#include <foundry/bench/cublas.cuh>
#include <foundry/bench/random.cuh>
#include <foundry/core/error.cuh>
#include <foundry/gemm/detail/mma_sync.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/event.cuh>
#include <foundry/runtime/stream.cuh>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace foundry::bench {

/// Which FLOP ceiling binds a compute-bound benchmark.
enum class flop_ceiling { fp32_cuda_cores, fp32_cublas, tf32_tensor, bf16_tensor, bf16_mma_sync };

/// The ceiling's name as it appears in the JSON context and the report.
inline const char* to_string(flop_ceiling c) noexcept {
  switch (c) {
    case flop_ceiling::fp32_cuda_cores: return "fp32_cuda_cores";
    case flop_ceiling::fp32_cublas: return "fp32_cublas";
    case flop_ceiling::tf32_tensor: return "tf32_tensor";
    case flop_ceiling::bf16_tensor: return "bf16_tensor";
    case flop_ceiling::bf16_mma_sync: return "bf16_mma_sync";
  }
  return "unknown";
}

/// Measured ceilings (NaN where a probe failed; the harness then reports NaN percentages).
struct ceilings {
  double copy_bytes_per_second = 0;         ///< cudaMemcpyAsync D2D, read + write
  double theoretical_bytes_per_second = 0;  ///< 2 × memory clock × bus width
  double fp32_cuda_cores_flops = 0;         ///< FMA-bound kernel
  double fp32_cublas_flops = 0;             ///< cuBLAS SGEMM
  double tf32_tensor_flops = 0;             ///< cuBLAS GEMM, CUBLAS_COMPUTE_32F_FAST_TF32
  double bf16_tensor_flops = 0;             ///< cuBLAS GEMM, bf16 inputs, fp32 accumulation and output
  double bf16_mma_sync_flops = 0;           ///< mma.sync.m16n8k16 bf16 → fp32, operands in registers
  std::size_t copy_bytes = 0;               ///< size of the copy probe (each buffer)
  int gemm_size = 0;                        ///< m = n = k of the GEMM probes

  /// The measured rate of ceiling `c`, in FLOP/s.
  [[nodiscard]] double flops_per_second(flop_ceiling c) const noexcept {
    switch (c) {
      case flop_ceiling::fp32_cuda_cores: return fp32_cuda_cores_flops;
      case flop_ceiling::fp32_cublas: return fp32_cublas_flops;
      case flop_ceiling::tf32_tensor: return tf32_tensor_flops;
      case flop_ceiling::bf16_tensor: return bf16_tensor_flops;
      case flop_ceiling::bf16_mma_sync: return bf16_mma_sync_flops;
    }
    return std::numeric_limits<double>::quiet_NaN();
  }
  /// Intensity (flop/byte) above which a kernel is bound by `c` rather than by bandwidth.
  [[nodiscard]] double ridge_point(flop_ceiling c) const noexcept {
    return flops_per_second(c) / copy_bytes_per_second;
  }
};

namespace detail {

/// Median seconds of `reps` event-timed calls of `enqueue(s)` after one warm-up call.
template <class Enqueue>
double median_event_seconds(cuda::stream_ref s, int reps, Enqueue&& enqueue) {
  enqueue(s);
  synchronize(s);
  event start;
  event stop;
  std::vector<double> v;
  for (int i = 0; i < reps; ++i) {
    start.record(s);
    enqueue(s);
    stop.record(s);
    v.push_back(static_cast<double>(elapsed_ms(start, stop)) * 1e-3);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Eight independent FMA chains per thread: enough instruction-level parallelism, with a
/// full SM of warps, to issue an FMA on every fp32 lane every clock. `a` and `b` arrive at
/// run time, so the compiler cannot fold the chains.
inline constexpr int fma_chains = 8;
template <int = 0>
__global__ void fma_probe_kernel(float* out, float a, float b, int iterations) {
  float x[fma_chains];
#pragma unroll
  for (int j = 0; j < fma_chains; ++j) x[j] = static_cast<float>(threadIdx.x) * 1e-3f + static_cast<float>(j);
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < fma_chains; ++j) x[j] = fmaf(x[j], a, b);
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < fma_chains; ++j) sum += x[j];
  out[global_thread_index()] = sum;
}

/// Independent `mma.sync` accumulators per warp: with a full SM of warps, enough in flight to
/// cover the instruction's latency on every tensor core. The operands come from the thread
/// index, so the compiler cannot fold the chain; they stay in registers, so only the tensor
/// cores bound the rate (no shared memory, no ldmatrix).
inline constexpr int mma_chains = 8;
template <int = 0>
__global__ void mma_sync_probe_kernel(float* out, int iterations) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  const auto seed = static_cast<std::uint32_t>(threadIdx.x);
  const std::uint32_t a[4] = {seed * 0x00010001u, seed ^ 0x3c003c00u, seed + 0x3c003c00u, 0x3c003c00u};
  const std::uint32_t b[2] = {seed ^ 0x3f803f80u, 0x3f803f80u};
  float acc[mma_chains][4] = {};
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int j = 0; j < mma_chains; ++j) gemm_kernels::detail::mma_m16n8k16<__nv_bfloat16>(acc[j], a, b);
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < mma_chains; ++j) sum += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  out[global_thread_index()] = sum;
#else
  (void)out;
  (void)iterations;
  __trap();  // no bf16 mma before sm_80; the host side does not launch it there
#endif
}

inline double probe_copy(cuda::stream_ref s, std::size_t bytes) {
  device_buffer<std::uint32_t> in(bytes / 4, s);
  device_buffer<std::uint32_t> out(bytes / 4, s);
  fill_uniform(in.span(), 0.0, 4294967295.0, default_seed, s);
  const double t = median_event_seconds(s, 20, [&](cuda::stream_ref st) {
    FOUNDRY_CUDA_TRY(cudaMemcpyAsync(out.data(), in.data(), in.size_bytes(), cudaMemcpyDeviceToDevice, st.get()));
  });
  return 2.0 * static_cast<double>(in.size_bytes()) / t;
}

/// Median seconds of `kernel(out, args...)` on a grid that fills every SM to its thread limit
/// with blocks of 256 threads, `out` holding one float per thread (so that nothing computed is
/// dead code); `threads` receives the thread count.
template <class Kernel, class... Args>
double time_full_device(cuda::stream_ref s, std::size_t& threads, Kernel kernel, Args... args) {
  const device_properties& p = get_device_properties(stream_device(s.get()));
  constexpr std::uint32_t block = 256;
  const std::uint32_t blocks = static_cast<std::uint32_t>(p.sm_count) *
                               std::max<std::uint32_t>(1, static_cast<std::uint32_t>(p.max_threads_per_sm) / block);
  device_buffer<float> out(std::size_t{blocks} * block, s);
  threads = out.size();
  const launch_config c = make_launch_config_1d(out.size(), block);
  return median_event_seconds(s, 5, [&](cuda::stream_ref st) { launch(st, c, kernel, out.data(), args...); });
}

inline double probe_fma(cuda::stream_ref s) {
  const int iterations = 1 << 17;  // ~9 ms at 67 TFLOP/s (H200): long against launch and clock noise
  std::size_t threads = 0;
  const double t = time_full_device(s, threads, fma_probe_kernel<>, 0.9999f, 1e-4f, iterations);
  return 2.0 * fma_chains * static_cast<double>(iterations) * static_cast<double>(threads) / t;
}

/// FLOP/s of `mma.sync.m16n8k16` (bf16 in, fp32 accumulation) with operands in registers.
/// Throws `std::runtime_error` below compute capability 8.0 (no bf16 mma there).
inline double probe_mma_sync(cuda::stream_ref s) {
  if (get_device_properties(stream_device(s.get())).compute_capability_major < 8) {
    throw std::runtime_error("bf16 mma.sync needs compute capability 8.0 or later");
  }
  const int iterations = 1 << 14;  // ~8 ms at 600 TFLOP/s (H200): long against launch and clock noise
  std::size_t threads = 0;
  const double t = time_full_device(s, threads, mma_sync_probe_kernel<>, iterations);
  constexpr double flops_per_mma = 2.0 * 16 * 8 * 16;  // per warp
  return flops_per_mma * mma_chains * static_cast<double>(iterations) * (static_cast<double>(threads) / 32.0) / t;
}

/// FLOP/s of an n×n×n cuBLAS GEMM with inputs of type `In`, fp32 output and `compute`.
template <class In>
double probe_gemm(const cublas_handle& h, cuda::stream_ref s, int n, cudaDataType_t in_type,
                  cublasComputeType_t compute) {
  const std::size_t count = std::size_t(n) * std::size_t(n);
  device_buffer<In> a(count, s);
  device_buffer<In> b(count, s);
  device_buffer<float> c(count, s);
  fill_uniform(a.span(), -1.0, 1.0, default_seed, s);
  fill_uniform(b.span(), -1.0, 1.0, default_seed + 1, s);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const double t = median_event_seconds(s, 5, [&](cuda::stream_ref) {
    cublas_try(cublasGemmEx(h.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.data(), in_type, n, b.data(), in_type,
                            n, &beta, c.data(), CUDA_R_32F, n, compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
  });
  return 2.0 * double(n) * double(n) * double(n) / t;
}

/// Runs `probe`; on failure warns on stderr and returns NaN, so that one missing ceiling
/// (say bf16 on a device without it) does not stop the benchmarks.
template <class Probe>
double try_probe(const char* name, Probe&& probe) {
  try {
    return probe();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "foundry bench: ceiling %s not measured: %s\n", name, e.what());
    return std::numeric_limits<double>::quiet_NaN();
  }
}

}  // namespace detail

/// Runs every probe on the device of `s`, on `s` (blocking). Throws `cuda_error` if the
/// copy probe fails; a failed FLOP probe gives NaN with a warning on stderr.
inline ceilings measure_ceilings(cuda::stream_ref s) {
  const device_properties& p = get_device_properties(stream_device(s.get()));
  ceilings c;
  c.theoretical_bytes_per_second = p.theoretical_bandwidth_bytes_per_second();
  // 1 GiB per buffer, far past any L2, where the device has room for it.
  c.copy_bytes = p.global_memory_bytes >= (std::size_t{16} << 30) ? (std::size_t{1} << 30) : (std::size_t{128} << 20);
  c.copy_bytes_per_second = detail::probe_copy(s, c.copy_bytes);
  c.fp32_cuda_cores_flops = detail::try_probe("fp32_cuda_cores", [&] { return detail::probe_fma(s); });
  c.bf16_mma_sync_flops = detail::try_probe("bf16_mma_sync", [&] { return detail::probe_mma_sync(s); });
  // 8192^3 reaches cuBLAS's peak on large GPUs and takes ~20 ms in fp32 on the H200.
  c.gemm_size = p.global_memory_bytes >= (std::size_t{8} << 30) ? 8192 : 4096;
  const int n = c.gemm_size;
  try {
    const cublas_handle h(s);
    c.fp32_cublas_flops = detail::try_probe(
        "fp32_cublas", [&] { return detail::probe_gemm<float>(h, s, n, CUDA_R_32F, CUBLAS_COMPUTE_32F); });
    c.tf32_tensor_flops = detail::try_probe(
        "tf32_tensor", [&] { return detail::probe_gemm<float>(h, s, n, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32); });
    c.bf16_tensor_flops = detail::try_probe(
        "bf16_tensor", [&] { return detail::probe_gemm<__nv_bfloat16>(h, s, n, CUDA_R_16BF, CUBLAS_COMPUTE_32F); });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "foundry bench: cuBLAS ceilings not measured: %s\n", e.what());
    c.fp32_cublas_flops = c.tf32_tensor_flops = c.bf16_tensor_flops = std::numeric_limits<double>::quiet_NaN();
  }
  synchronize(s);
  return c;
}

/// The ceilings of `device`, measured once per process and device on a stream of their
/// own (thread-safe; blocks for about a second the first time on each device). Throws
/// `std::invalid_argument` for an ordinal that is not a visible device.
inline const ceilings& device_ceilings(int device) {
  // Never freed: a static destructor would run after the CUDA runtime's own teardown.
  static auto* const cache = new foundry::detail::per_device_cache<const ceilings>();
  return cache->get(device, [device] {
    const device_guard on(device);
    stream s;
    return std::make_unique<const ceilings>(measure_ceilings(s));
  });
}

/// The ceilings of the calling thread's current device (see above).
inline const ceilings& device_ceilings() { return device_ceilings(current_device()); }

}  // namespace foundry::bench
