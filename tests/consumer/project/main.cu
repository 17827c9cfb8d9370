// Consumer smoke test: the umbrella header compiles in a user's project and
// the basic RAII types work. Exits 0 on success, 3 when no GPU is present.
#include <foundry/foundry.cuh>

#include <cstdio>
#include <vector>

__global__ void add_one(float* x, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) x[i] += 1.0f;
}

int main() {
  if (!foundry::has_device()) {
    std::puts("consumer: no CUDA device; built only");
    return 3;
  }
  foundry::stream s;
  std::vector<float> host(1000, 41.0f);
  foundry::device_buffer<float> d(host.size(), s);
  d.copy_from_host(cuda::std::span<const float>(host.data(), host.size()), s);
  foundry::launch(s, foundry::make_launch_config_1d(d.size()), add_one, d.data(), d.size());
  d.copy_to_host(cuda::std::span<float>(host.data(), host.size()), s);
  s.synchronize();
  for (float v : host)
    if (v != 42.0f) return 1;
  std::puts("consumer: ok");
  return 0;
}
