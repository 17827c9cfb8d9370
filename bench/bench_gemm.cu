// The GEMM ladder side by side: C = A * B (row-major, alpha = 1, beta = 0) at 4096^3,
// 8192^3, 8192x8192x1024 and 1024x1024x8192 (names give MxNxK), every rung beside cuBLAS.
//
//   gemm_f32/naive              rung 1 (not at 8192^3: about a second per call)
//   gemm_f32/foundry_shared_tiled       rung 2
//   gemm_f32/foundry_register_blocked   rung 3, default policy (128x128 tile, BK = 8, 2 blocks/SM)
//   gemm_f32/foundry_register_blocked_1cta        rung 3 tuning candidates (built with
//     FOUNDRY_BENCH_TUNING, as the h200 preset does; CI spares their compile): 1 block/SM (up to
//   gemm_f32/foundry_register_blocked_bk16_1cta   255 registers), BK = 16 with 1 block/SM, and
//   gemm_f32/foundry_register_blocked_bk16        BK = 16 with 2 blocks/SM (128 registers: spills)
//   gemm_f32/foundry_register_blocked_256x128_16x8, _128x256_8x16   rung 3 with 16 x 8 and
//     8 x 16 results per thread at one block per SM (cuBLAS's fp32 tile shape)
//   gemm_f32/foundry_register_blocked_64x128_4cta   rung 3 with half the tile (128 threads)
//     (register_blocked_short_m_policy, the tile for C of 17-64 rows)
//     at 4 blocks per SM: the same 128-register cap, twice the blocks to hide each barrier
//   gemm_f32/foundry            the public foundry::gemm (the dispatch picks rung 3)
//   gemm_f32/cublas             cublasSgemm (default math: true fp32, no TF32)
//   gemm_bf16/foundry_tensor_core, gemm_bf16/foundry, gemm_bf16/cublas   rung 4 (its automatic
//   tiling: 128 x 128 at two blocks per SM when K <= 1536, else 128 x 256), the dispatch, and
//   cublasGemmEx (bf16 A and B, fp32 C, CUBLAS_COMPUTE_32F); the same for gemm_f16.
//   gemm_bf16/foundry_tensor_core_128x256, _128x128   rung 4 with one tiling forced, at every
//     shape and at 8192x8192x2048 (the K between the measured shapes, near where the
//     automatic choice switches), so that the choice is measured on both sides; the
//     dispatch and cuBLAS rows there too
//   gemm_bf16/foundry_tensor_core_<candidate>    rung 4 tuning candidates (4096^3 and 8192^3;
//     FOUNDRY_BENCH_TUNING builds only):
//     bk32_s4 (block_k 32, 4 stages: the default until 2026-12-02), bk32_s3, s4 (block_k 64,
//     4 stages: 192 KiB of shared memory), 256x128 (4 x 2 warps)
//   gemm_bf16/foundry_wgmma, gemm_f16/foundry_wgmma   rung 5 (wgmma fed by TMA); only in
//   builds with sm_90a code (FOUNDRY_HAS_SM90A, cmake/foundry_sm90a.cmake), where the
//   gemm_bf16/foundry row (the dispatch) runs it too on the H200. At 1024x1024x8192 (too
//   few block tiles for the SMs: the automatic choice splits K in 4) also
//   .../foundry_wgmma_split_k_1 (no split: since session 26 the plan then takes 128 128 x 64
//   tiles, not 32 of 128 x 256) and .../foundry_wgmma_split_k_8.
//   gemm_tf32/foundry             foundry::gemm with gemm_math::tf32 (opt-in TF32 on the wgmma
//     rung; B, row-major, is copied transposed first, K-major, as the TF32 wgmma needs)
//   gemm_tf32/foundry_k_major     the same with B stored K-major (column-major), so nothing is
//     copied: the kernel alone
//   gemm_tf32/cublas              cublasGemmEx, fp32 A, B and C, CUBLAS_COMPUTE_32F_FAST_TF32
//     (cuBLAS's CUBLAS_TF32_TENSOR_OP_MATH); the TF32 rows only in builds with sm_90a code
//
// pct_of_ceiling: fp32 rows against the CUDA cores' FMA rate, rung 4's rows against the
// register-only mma.sync rate (ceiling bf16_mma_sync), the other 16-bit rows against cuBLAS bf16.
//
// flops = 2 M N K; bytes = A and B read once, C written once (beta = 0: C is not read), the
// minimal traffic. Every row runs its GEMM once on random inputs (fixed seed) into a C
// poisoned with NaN and checks it against cuBLAS's result before timing: relative Frobenius
// error ||C - C_cublas|| / ||C_cublas|| at most 1e-4 for fp32 (both sides round in fp32;
// for random-sign inputs the difference is ~0.4 u sqrt(K) ≈ 2e-6 at K = 8192, while one
// missing or wrong term of the K is ~1/sqrt(K) ≈ 1e-2) and 1e-3 for 16-bit inputs (the same
// rounded inputs on both sides; tensor-core accumulation is a little less exact). The TF32 rows
// are checked against cuBLAS's true-fp32 SGEMM, so their rel_error counter is the accuracy lost
// to TF32 (the low 13 mantissa bits of every input: ~2^-11 relative per product, ~3e-4 expected
// for these random inputs), accepted up to 5e-3; one wrong term of K moves it by ~1/sqrt(K).
//
// Each row takes up to 20 samples (within the harness's 1 s per round), so the whole binary
// stays under two minutes on the H200.

#include <foundry/bench/harness.cuh>
#include <foundry/foundry.cuh>
#include <foundry/gemm/gemm.cuh>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace {

namespace bench = foundry::bench;
using foundry::gemm_rung;
using foundry::matrix_op;
using foundry::matrix_view;

using shape = bench::gemm_shape;
// cuBLAS, the peer row: bench::cublas_gemm_row_major (include/foundry/bench/cublas.cuh).

// ---------------------------------------------------------------------------
// ||x - ref||^2 and ||ref||^2 in double, one atomic pair per warp.
__global__ void frobenius_kernel(const float* x, const float* ref, std::size_t n, double* sums) {
  double diff = 0.0;
  double norm = 0.0;
  for (auto i : foundry::grid_stride_range(n)) {
    const double d = static_cast<double>(x[i]) - static_cast<double>(ref[i]);
    diff += d * d;  // NaN in x stays NaN: the check fails
    norm += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    diff += __shfl_down_sync(0xFFFFFFFFu, diff, offset);
    norm += __shfl_down_sync(0xFFFFFFFFu, norm, offset);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&sums[0], diff);
    atomicAdd(&sums[1], norm);
  }
}

// ||x - ref||_F / ||ref||_F; blocks the host.
double relative_frobenius_error(const foundry::device_buffer<float>& x, const foundry::device_buffer<float>& ref,
                                cuda::stream_ref s) {
  foundry::device_buffer<double> sums(2, s, 0.0);
  foundry::launch(s, foundry::make_launch_config_1d(x.size(), 256, foundry::resident_grid_blocks(8)), frobenius_kernel,
                  x.data(), ref.data(), x.size(), sums.data());
  double host[2] = {0.0, 0.0};
  FOUNDRY_CUDA_TRY(cudaMemcpyAsync(host, sums.data(), sizeof host, cudaMemcpyDeviceToHost, s.get()));
  foundry::synchronize(s);
  return std::sqrt(host[0]) / std::sqrt(host[1]);
}

// ---------------------------------------------------------------------------
// One row's data: random A and B, cuBLAS's C as the reference, and the C under test.
// With `b_k_major`, B's buffer holds B column-major (K-major: element (p, j) at j·K + p) and the
// reference is computed so.
template <class In>
struct gemm_data {
  explicit gemm_data(const shape& shape_, bool b_k_major_ = false)
      : sh(shape_),
        b_k_major(b_k_major_),
        a(static_cast<std::size_t>(sh.m * sh.k), s),
        b(static_cast<std::size_t>(sh.k * sh.n), s),
        c(static_cast<std::size_t>(sh.m * sh.n), s),
        reference(static_cast<std::size_t>(sh.m * sh.n), s) {
    // Keep freed pool memory instead of returning it at every synchronisation, so that
    // the split-K workspace of foundry::gemm is reused across samples, as in an application
    // that keeps its pool warm.
    cudaMemPool_t pool = nullptr;
    FOUNDRY_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, foundry::current_device()));
    std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
    FOUNDRY_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));

    bench::fill_uniform(a.span(), -1.0, 1.0, bench::default_seed, s);
    bench::fill_uniform(b.span(), -1.0, 1.0, bench::default_seed + 1, s);
    if (b_k_major) {
      bench::cublas_gemm_row_major_b_k_major(a.data(), b.data(), reference.data(), sh, s);
    } else {
      bench::cublas_gemm_row_major(a.data(), b.data(), reference.data(), sh, s);
    }
  }

  [[nodiscard]] matrix_view<const In> view_a() const { return {a.data(), sh.m, sh.k, sh.k}; }
  [[nodiscard]] matrix_view<const In> view_b() const {
    if (b_k_major) return {b.data(), sh.k, sh.n, sh.k, foundry::matrix_layout::col_major};
    return {b.data(), sh.k, sh.n, sh.n};
  }
  [[nodiscard]] matrix_view<float> view_c() { return {c.data(), sh.m, sh.n, sh.n}; }

  [[nodiscard]] bench::work work() const {
    const double m = static_cast<double>(sh.m), n = static_cast<double>(sh.n), k = static_cast<double>(sh.k);
    return {(m * k + k * n) * sizeof(In), m * n * sizeof(float), 2.0 * m * n * k};
  }

  foundry::stream s;
  shape sh;
  bool b_k_major = false;
  foundry::device_buffer<In> a;
  foundry::device_buffer<In> b;
  foundry::device_buffer<float> c;
  foundry::device_buffer<float> reference;
};

template <class In>
using enqueue_fn = std::function<void(gemm_data<In>&, cuda::stream_ref)>;

// The FLOP ceiling a row's pct_of_ceiling refers to: fp32 rows the CUDA-core FMA rate, 16-bit
// rows cuBLAS bf16, except rung 4's, which are measured against the rate of the mma.sync
// instruction they are built from.
template <class In>
void bm_gemm(benchmark::State& state, shape sh, enqueue_fn<In> run, bench::flop_ceiling ceiling, double tolerance,
             bool b_k_major) {
  gemm_data<In> d(sh, b_k_major);
  foundry::fill(d.c.span(), std::numeric_limits<float>::quiet_NaN(), d.s);
  auto enqueue = [&](cuda::stream_ref st) { run(d, st); };
  try {
    enqueue(d.s);
  } catch (const std::exception& e) {
    bench::expect(state, false, e.what());
    return;
  }
  const double error = relative_frobenius_error(d.c, d.reference, d.s);
  state.counters["rel_error"] = error;
  if (!bench::expect(
          state, error <= tolerance,
          "relative Frobenius error against cuBLAS " + std::to_string(error) + " exceeds " + std::to_string(tolerance)))
    return;
  bench::options opt;
  opt.ceiling = ceiling;
  bench::measure(state, d.s, d.work(), enqueue, opt);
}

// ---------------------------------------------------------------------------
template <class In>
enqueue_fn<In> with_rung(gemm_rung rung) {
  return [rung](gemm_data<In>& d, cuda::stream_ref s) {
    foundry::gemm_with(rung, 1.0f, d.view_a(), matrix_op::none, d.view_b(), matrix_op::none, 0.0f, d.view_c(), s);
  };
}

template <class In>
enqueue_fn<In> with_dispatch(foundry::gemm_math math = foundry::gemm_math::fp32) {
  return [math](gemm_data<In>& d, cuda::stream_ref s) {
    foundry::gemm(1.0f, d.view_a(), matrix_op::none, d.view_b(), matrix_op::none, 0.0f, d.view_c(), s, math);
  };
}

// cuBLAS with TF32 tensor cores: fp32 A, B and C, CUBLAS_COMPUTE_32F_FAST_TF32, B as gemm_data
// holds it.
enqueue_fn<float> with_cublas_tf32() {
  return [](gemm_data<float>& d, cuda::stream_ref s) {
    bench::cublas_gemm_row_major(d.a.data(), d.b.data(), d.c.data(), d.sh, s, CUBLAS_COMPUTE_32F_FAST_TF32,
                                 d.b_k_major);
  };
}

template <class Policy>
enqueue_fn<float> with_register_blocked_policy() {
  return [](gemm_data<float>& d, cuda::stream_ref s) {
    const auto p = foundry::make_gemm_problem<float, float>(1.0f, d.view_a(), matrix_op::none, d.view_b(),
                                                            matrix_op::none, 0.0f, d.view_c());
    foundry::gemm_kernels::gemm_register_blocked<Policy>(p, s);
  };
}

template <class In, class Policy>
enqueue_fn<In> with_tensor_core_policy() {
  return [](gemm_data<In>& d, cuda::stream_ref s) {
    const auto p = foundry::make_gemm_problem<In, float>(1.0f, d.view_a(), matrix_op::none, d.view_b(), matrix_op::none,
                                                         0.0f, d.view_c());
    foundry::gemm_kernels::gemm_tensor_core<In, Policy>(p, s);
  };
}

// Rung 5 with a fixed split-K count (1: no split), beside the automatic choice of the
// foundry_wgmma row.
template <class In>
enqueue_fn<In> with_wgmma_split_k(int splits) {
  return [splits](gemm_data<In>& d, cuda::stream_ref s) {
    const auto p = foundry::make_gemm_problem<In, float>(1.0f, d.view_a(), matrix_op::none, d.view_b(), matrix_op::none,
                                                         0.0f, d.view_c());
    foundry::gemm_kernels::split_k_options options;
    options.split_k = splits;
    foundry::gemm_kernels::gemm_wgmma<In>(p, options, s);
  };
}

// Tuning candidates for rung 4 (tensor_core_policy: 128 x 256 x 64, 2 x 4 warps, 3 stages),
// one block per SM.
template <int BlockM, int BlockN, int BlockK, int WarpsM, int WarpsN, int Stages>
struct tensor_core_candidate {
  static constexpr int block_m = BlockM;
  static constexpr int block_n = BlockN;
  static constexpr int block_k = BlockK;
  static constexpr int warps_m = WarpsM;
  static constexpr int warps_n = WarpsN;
  static constexpr int stages = Stages;
  static constexpr int group_m = 8;
  static constexpr int min_blocks_per_sm = 1;
};

template <class In>
enqueue_fn<In> with_cublas() {
  return [](gemm_data<In>& d, cuda::stream_ref s) {
    bench::cublas_gemm_row_major(d.a.data(), d.b.data(), d.c.data(), d.sh, s);
  };
}

template <class In>
void add(const std::string& name, const shape& sh, enqueue_fn<In> run, bool b_k_major = false) {
  const bool tf32 = name.rfind("gemm_tf32/", 0) == 0;
  const bench::flop_ceiling ceiling = tf32                        ? bench::flop_ceiling::tf32_tensor
                                      : std::is_same_v<In, float> ? bench::flop_ceiling::fp32_cuda_cores
                                      : name.find("/foundry_tensor_core") != std::string::npos
                                          ? bench::flop_ceiling::bf16_mma_sync
                                          : bench::flop_ceiling::bf16_tensor;
  const double tolerance = tf32 ? 5e-3 : std::is_same_v<In, float> ? 1e-4 : 1e-3;  // file comment
  benchmark::RegisterBenchmark((name + "/" + sh.name()).c_str(), bm_gemm<In>, sh, std::move(run), ceiling, tolerance,
                               b_k_major)
      ->Apply(bench::configure)
      ->Iterations(20);
}

template <class In>
void add_16bit(const std::string& algorithm, const shape& sh) {
  add<In>(algorithm + "/foundry_tensor_core", sh, with_rung<In>(gemm_rung::tensor_core));
  if constexpr (foundry::gemm_kernels::gemm_wgmma_built) {
    add<In>(algorithm + "/foundry_wgmma", sh, with_rung<In>(gemm_rung::wgmma));
    // The shape that splits K (32 block tiles for 132 SMs): the gain, and one more count.
    if (sh.m * sh.n < std::int64_t{132} * 128 * 256) {
      add<In>(algorithm + "/foundry_wgmma_split_k_1", sh, with_wgmma_split_k<In>(1));
      add<In>(algorithm + "/foundry_wgmma_split_k_8", sh, with_wgmma_split_k<In>(8));
    }
  }
  add<In>(algorithm + "/foundry", sh, with_dispatch<In>());
  add<In>(algorithm + "/cublas", sh, with_cublas<In>());
}

const bool registered = [] {
  const shape shapes[] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 8192, 1024}, {1024, 1024, 8192}};
  for (const shape& sh : shapes) {
    // The naive rung moves 8 bytes per FMA: at 8192^3 one call takes about a second.
    if (sh.m * sh.n * sh.k <= std::int64_t{4096} * 4096 * 4096)
      add<float>("gemm_f32/naive", sh, with_rung<float>(gemm_rung::naive));
    add<float>("gemm_f32/foundry_shared_tiled", sh, with_rung<float>(gemm_rung::shared_tiled));
    add<float>("gemm_f32/foundry_register_blocked", sh, with_rung<float>(gemm_rung::register_blocked));
#if FOUNDRY_BENCH_TUNING
    // Tuning candidates for register_blocked_default_policy (BK = 8, 2 blocks/SM, 128 registers).
    add<float>("gemm_f32/foundry_register_blocked_1cta", sh,
               with_register_blocked_policy<foundry::gemm_kernels::register_blocked_policy<128, 128, 8, 1>>());
    add<float>("gemm_f32/foundry_register_blocked_bk16_1cta", sh,
               with_register_blocked_policy<foundry::gemm_kernels::register_blocked_policy<128, 128, 16, 1>>());
    add<float>("gemm_f32/foundry_register_blocked_bk16", sh,
               with_register_blocked_policy<foundry::gemm_kernels::register_blocked_policy<128, 128, 16, 2>>());
    // cuBLAS's fp32 kernel on the H200 (sm80_xmma_gemm_..._tilesize256x128x8_stage3_warpsize4x2x1_ffma,
    // Nsight Compute) gives each thread 16 × 8 results at one block per SM.
    add<float>("gemm_f32/foundry_register_blocked_256x128_16x8", sh,
               with_register_blocked_policy<foundry::gemm_kernels::register_blocked_policy<256, 128, 8, 1, 16, 8>>());
    add<float>("gemm_f32/foundry_register_blocked_128x256_8x16", sh,
               with_register_blocked_policy<foundry::gemm_kernels::register_blocked_policy<128, 256, 8, 1, 8, 16>>());
#endif
    // 64 × 128 (not 128 × 64: ptxas spills 4 bytes there under the 128-register cap).
    add<float>("gemm_f32/foundry_register_blocked_64x128_4cta", sh,
               with_register_blocked_policy<foundry::gemm_kernels::register_blocked_short_m_policy>());
    add<float>("gemm_f32/foundry", sh, with_dispatch<float>());
    add<float>("gemm_f32/cublas", sh, with_cublas<float>());
  }
  for (const shape& sh : shapes) add_16bit<__nv_bfloat16>("gemm_bf16", sh);
#if FOUNDRY_BENCH_TUNING
  for (const shape& sh : {shapes[0], shapes[1]}) {
    using bf16 = __nv_bfloat16;
    add<bf16>("gemm_bf16/foundry_tensor_core_bk32_s4", sh,
              with_tensor_core_policy<bf16, tensor_core_candidate<128, 256, 32, 2, 4, 4>>());
    add<bf16>("gemm_bf16/foundry_tensor_core_s4", sh,
              with_tensor_core_policy<bf16, tensor_core_candidate<128, 256, 64, 2, 4, 4>>());
    add<bf16>("gemm_bf16/foundry_tensor_core_bk32_s3", sh,
              with_tensor_core_policy<bf16, tensor_core_candidate<128, 256, 32, 2, 4, 3>>());
    add<bf16>("gemm_bf16/foundry_tensor_core_256x128", sh,
              with_tensor_core_policy<bf16, tensor_core_candidate<256, 128, 64, 4, 2, 3>>());
  }
#endif
  // Rung 4's two tilings, each forced, on both sides of the K where the automatic choice
  // switches (tensor_core_auto_policy::shallow_k_max = 1536).
  const shape between{8192, 8192, 2048};
  for (const shape& sh : {shapes[0], shapes[1], shapes[2], shapes[3], between}) {
    namespace gk = foundry::gemm_kernels;
    add<__nv_bfloat16>("gemm_bf16/foundry_tensor_core_128x256", sh,
                       with_tensor_core_policy<__nv_bfloat16, gk::tensor_core_policy>());
    add<__nv_bfloat16>("gemm_bf16/foundry_tensor_core_128x128", sh,
                       with_tensor_core_policy<__nv_bfloat16, gk::tensor_core_shallow_k_policy>());
  }
  add<__nv_bfloat16>("gemm_bf16/foundry", between, with_dispatch<__nv_bfloat16>());
  add<__nv_bfloat16>("gemm_bf16/cublas", between, with_cublas<__nv_bfloat16>());
  for (const shape& sh : shapes) add_16bit<__half>("gemm_f16", sh);
  if constexpr (foundry::gemm_kernels::gemm_wgmma_built) {
    for (const shape& sh : shapes) {
      add<float>("gemm_tf32/foundry", sh, with_dispatch<float>(foundry::gemm_math::tf32));
      add<float>("gemm_tf32/foundry_k_major", sh, with_dispatch<float>(foundry::gemm_math::tf32), true);
      add<float>("gemm_tf32/cublas", sh, with_cublas_tf32());
    }
  }
  return true;
}();

}  // namespace

FOUNDRY_BENCH_MAIN()
