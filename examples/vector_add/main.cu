// vector_add: the classic six steps of a CUDA program, with foundry's RAII types.
//
//   1. allocate host and device memory   -> pinned_buffer, device_buffer (freed by destructors)
//   2. copy the inputs to the device      -> device_buffer::copy_from_host, asynchronous on a stream
//   3. launch the kernel                  -> foundry::launch checks the configuration and the launch
//   4. copy the result back               -> device_buffer::copy_to_host
//   5. check it                           -> against the same sum computed on the CPU
//   6. free everything                    -> nothing to write: scope exit does it, even on an exception
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include <foundry/foundry.cuh>

#include <cstdio>
#include <exception>
#include <random>

// One thread per element would need n threads; a grid-stride loop lets any grid cover any n.
__global__ void vector_add(const float* a, const float* b, float* c, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) c[i] = a[i] + b[i];
}

int main() {
  if (!foundry::has_device()) {
    std::fprintf(stderr, "vector_add: no usable CUDA device: this example needs a GPU\n");
    return 2;
  }
  try {
    const std::size_t n = 50'000'000;
    foundry::stream s;

    // 1. Allocate. Pinned host memory makes the copies truly asynchronous.
    foundry::pinned_buffer<float> a(n), b(n), c(n);
    foundry::device_buffer<float> d_a(n, s), d_b(n, s), d_c(n, s);
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = dist(rng);
      b[i] = dist(rng);
    }

    // 2. Copy in.
    d_a.copy_from_host(a.span(), s);
    d_b.copy_from_host(b.span(), s);

    // 3. Launch: 256 threads per block, enough blocks to cover n.
    foundry::launch(s, foundry::make_launch_config_1d(n, 256), vector_add, d_a.data(), d_b.data(), d_c.data(), n);

    // 4. Copy back, then wait: only after synchronize() may the host read c.
    d_c.copy_to_host(c.span(), s);
    s.synchronize();

    // 5. Check. a + b rounds the same way on the GPU and the CPU, so the match is exact.
    for (std::size_t i = 0; i < n; ++i) {
      if (c[i] != a[i] + b[i]) {
        std::fprintf(stderr, "vector_add: mismatch at %zu: %g + %g gave %g\n", i, a[i], b[i], c[i]);
        return 1;
      }
    }
    std::printf("vector_add: %zu elements added correctly\n", n);
    return 0;
    // 6. Free: the buffers' destructors run here (device memory stream-ordered on s).
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "vector_add: %s\n", e.what());
    return 3;
  }
}
