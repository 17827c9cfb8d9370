// A kernel compiled for compute_80 alone (tests/CMakeLists.txt builds this unit as 80-virtual
// PTX), so that a Hopper device runs it JIT-compiled from code without the griddepcontrol
// instructions: test_reliability checks that foundry::launch then never launches it
// programmatically, which would let it read its input before the kernel ahead of it wrote it.
#include <support/compute_80_kernel.cuh>

#include <foundry/launch/dependent_launch.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>

namespace {

__global__ void copy_ints(const int* in, int* out, std::size_t n) {
  foundry::wait_for_prior_grids();  // compiles to nothing for compute_80: the point of this unit
  for (const std::size_t i : foundry::grid_stride_range(n)) out[i] = in[i];
}

}  // namespace

namespace foundry::test {

const void* compute_80_copy_kernel() noexcept { return reinterpret_cast<const void*>(&copy_ints); }

void launch_compute_80_copy(const int* in, int* out, std::size_t n, cuda::stream_ref s) {
  launch_config c = make_launch_config_1d(n);
  c.dependency = launch_dependency::programmatic;
  launch(s, c, copy_ints, in, out, n);
}

}  // namespace foundry::test
