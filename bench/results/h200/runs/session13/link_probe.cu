// Issue 19 probe: how much of the host link can both directions get at once, and in what
// shape? Copy engines (cudaMemcpyAsync) whole or in 8 MiB chunks, one or two streams a
// direction, and SM-driven copies (a kernel reading or writing mapped pinned memory),
// alone, both at once, and mixed. Plain CUDA, no foundry: a measurement of the machine.
//   nvcc -O3 -arch=sm_90 -std=c++17 link_probe.cu -o link_probe && ./link_probe
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#define CK(x) \
  do { \
    cudaError_t e_ = (x); \
    if (e_ != cudaSuccess) { \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1); \
    } \
  } while (0)

__global__ void sm_copy(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    int4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

static double best_ms(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < reps + 1; ++r) {
    CK(cudaDeviceSynchronize());
    auto t0 = std::chrono::steady_clock::now();
    f();
    CK(cudaDeviceSynchronize());
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) best = std::min(best, ms);  // first run warms up
  }
  return best;
}

int main(int argc, char** argv) {
  size_t bytes = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256) << 20;
  const size_t chunk = 8u << 20;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  char *h_in, *h_out, *d_in, *d_out;
  CK(cudaHostAlloc(&h_in, bytes, cudaHostAllocMapped));
  CK(cudaHostAlloc(&h_out, bytes, cudaHostAllocMapped));
  CK(cudaMalloc(&d_in, bytes));
  CK(cudaMalloc(&d_out, bytes));
  std::memset(h_in, 1, bytes);
  std::memset(h_out, 2, bytes);
  CK(cudaMemset(d_in, 3, bytes));
  CK(cudaMemset(d_out, 4, bytes));
  cudaStream_t s[4];
  for (auto& x : s) CK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  const size_t n4 = bytes / 16;
  auto ce_h2d = [&](cudaStream_t st, size_t off, size_t len) {
    CK(cudaMemcpyAsync(d_in + off, h_in + off, len, cudaMemcpyHostToDevice, st));
  };
  auto ce_d2h = [&](cudaStream_t st, size_t off, size_t len) {
    CK(cudaMemcpyAsync(h_out + off, d_out + off, len, cudaMemcpyDeviceToHost, st));
  };
  auto sm_h2d = [&](cudaStream_t st, int blocks) {
    sm_copy<<<blocks, 512, 0, st>>>((const int4*)h_in, (int4*)d_in, n4);
    CK(cudaGetLastError());
  };
  auto sm_d2h = [&](cudaStream_t st, int blocks) {
    sm_copy<<<blocks, 512, 0, st>>>((const int4*)d_out, (int4*)h_out, n4);
    CK(cudaGetLastError());
  };
  auto chunked = [&](auto op, std::vector<cudaStream_t> sts) {
    int k = 0;
    for (size_t o = 0; o < bytes; o += chunk, ++k) op(sts[k % sts.size()], o, std::min(chunk, bytes - o));
  };
  const double mb = bytes / 1e6;
  auto one = [&](const char* name, const std::function<void()>& f) {
    double ms = best_ms(5, f);
    std::printf("%-44s %8.3f ms  %6.1f GB/s a direction\n", name, ms, mb / ms);
  };
  std::printf("bytes a direction: %zu MiB, chunk %zu MiB, %d SMs\n", bytes >> 20, chunk >> 20, sms);
  one("ce h2d whole", [&] { ce_h2d(s[0], 0, bytes); });
  one("ce d2h whole", [&] { ce_d2h(s[0], 0, bytes); });
  one("ce h2d 8MiB chunks, 1 stream", [&] { chunked(ce_h2d, {s[0]}); });
  one("ce d2h 8MiB chunks, 1 stream", [&] { chunked(ce_d2h, {s[0]}); });
  one("ce h2d 8MiB chunks, 2 streams", [&] { chunked(ce_h2d, {s[0], s[1]}); });
  one("ce both whole (1+1 streams)", [&] {
    ce_h2d(s[0], 0, bytes);
    ce_d2h(s[1], 0, bytes);
  });
  one("ce both 8MiB chunks (1+1 streams)", [&] {
    chunked(ce_h2d, {s[0]});
    chunked(ce_d2h, {s[1]});
  });
  one("ce both 8MiB chunks (2+2 streams)", [&] {
    chunked(ce_h2d, {s[0], s[2]});
    chunked(ce_d2h, {s[1], s[3]});
  });
  for (int blocks : {sms, 2 * sms, 4 * sms}) {
    char name[64];
    std::snprintf(name, sizeof name, "sm h2d, %d blocks", blocks);
    one(name, [&] { sm_h2d(s[0], blocks); });
    std::snprintf(name, sizeof name, "sm d2h, %d blocks", blocks);
    one(name, [&] { sm_d2h(s[0], blocks); });
  }
  one("sm both (2*sms blocks each)", [&] {
    sm_h2d(s[0], 2 * sms);
    sm_d2h(s[1], 2 * sms);
  });
  one("sm both (sms/2 blocks each)", [&] {
    sm_h2d(s[0], sms / 2);
    sm_d2h(s[1], sms / 2);
  });
  one("ce h2d whole + sm d2h (sms blocks)", [&] {
    ce_h2d(s[0], 0, bytes);
    sm_d2h(s[1], sms);
  });
  one("sm h2d (sms blocks) + ce d2h whole", [&] {
    sm_h2d(s[0], sms);
    ce_d2h(s[1], 0, bytes);
  });
  one("ce h2d whole + sm d2h (16 blocks)", [&] {
    ce_h2d(s[0], 0, bytes);
    sm_d2h(s[1], 16);
  });
  one("sm h2d (16 blocks) + ce d2h whole", [&] {
    sm_h2d(s[0], 16);
    ce_d2h(s[1], 0, bytes);
  });
  std::printf("check: %d %d\n", int(d_in != nullptr), int(h_out[bytes - 1]));
  return 0;
}
