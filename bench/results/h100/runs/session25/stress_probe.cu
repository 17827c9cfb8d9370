// initcheck reports on the stress test: a tool artifact of cross-stream pool reuse, or a race?
// argv[1] = 1: the default pool may not reuse memory opportunistically or by internal dependencies.
// Built on the device from the repository root (the file carried from .probe/):
//   nvcc -O2 -std=c++20 -arch=sm_90 --extended-lambda -I include stress_probe.cu -o /tmp/sp
// and, with no programmatic launch (compute_80 PTX, see launch.cuh), -gencode arch=compute_80,code=compute_80.
// Results: initcheck-under-load.txt.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <foundry/foundry.cuh>
#include <thread>
#include <vector>
struct twice {
  __host__ __device__ std::int64_t operator()(std::int64_t v) const { return 2 * v; }
};
int main(int argc, char** argv) {
  const bool strict = argc > 1 && std::atoi(argv[1]) == 1;
  if (strict) {
    cudaMemPool_t pool;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    int zero = 0;
    cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &zero);
    cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &zero);
  }
  std::atomic<long> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      cudaSetDevice(0);
      foundry::stream s;
      for (int i = 0; i < 25; ++i) {
        const auto n = static_cast<std::int64_t>(1 + (std::int64_t{i} * 7919 + std::int64_t{t} * 104729) % 70000);
        foundry::device_buffer<std::int64_t> x(n, s), y(n, s.view());
        foundry::iota(x.span(), std::int64_t{t} - i, s);
        foundry::transform(x.span(), y.span(), twice{}, s);
        foundry::device_buffer<std::int64_t> sum(1, s);
        foundry::reduce_sum(y.span(), sum.span(), s);
        std::int64_t host = 0;
        foundry::copy(cuda::std::span<std::int64_t>(&host, 1), sum.span(), s);
        s.synchronize();
        const std::int64_t a = t - i;
        if (host != 2 * (a * n + n * (n - 1) / 2)) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  std::printf("strict=%d wrong=%ld\n", strict, wrong.load());
  return wrong != 0;
}
