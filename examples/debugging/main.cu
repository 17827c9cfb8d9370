// debugging: three tools for a kernel that misbehaves.
//
//   1. device printf, from one thread only (thread 0 of block 0): a million threads printing
//      would flood the buffer (1 MiB by default), and the lines arrive only at the next
//      synchronisation
//   2. the asynchronous error: a launch returns before the kernel runs, so a fault inside
//      it is reported by whatever CUDA call comes next. FOUNDRY_CHECK_LAUNCH (inside
//      foundry::launch) synchronises after every launch when the program is built with
//      -DFOUNDRY_DEBUG_SYNC (preset debug-sync), which pins the error to the launch that
//      caused it. The table shows what that costs, so that it stays a debugging build
//   3. compute-sanitizer: `--fault` runs a kernel that writes one element past the end of
//      its buffer. Without the sanitizer it usually goes unnoticed (the allocation is
//      rounded up); under `compute-sanitizer --tool memcheck` it is reported as
//      "Invalid __global__ write of size 4" with the thread, the block and the address.
//      The buffer is a cudaMalloc allocation of its own: memcheck knows the exact extent of
//      each one. A stream-ordered (cudaMallocAsync) buffer is carved from the pool's larger
//      blocks, where a write just past its end is not guaranteed to be reported
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error (with --fault
// under compute-sanitizer: the launch failure that memcheck causes).
#include "../tour/tour.cuh"

#include <chrono>
#include <exception>
#include <memory>

namespace {

// [snippet:printf]
__global__ void squares(int* out, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) out[i] = int(i % 1000) * int(i % 1000);
  if (blockIdx.x == 0 && threadIdx.x == 0) printf("squares: block 0 thread 0 sees n = %llu\n", (unsigned long long)n);
}
// [/snippet]

// [snippet:fault]
// The classic off-by-one: `<=` where `<` was meant; thread n writes out[n].
__global__ void off_by_one(int* out, std::size_t n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 1;
}
// [/snippet]

__global__ void tiny(int* out) { out[threadIdx.x] += 1; }

// Frees the --fault buffer; reports a failure (the sanitizer's launch failure is sticky)
// instead of throwing from a destructor.
struct cuda_free {
  void operator()(int* p) const noexcept { FOUNDRY_CUDA_REPORT(cudaFree(p)); }
};

}  // namespace

int main(int argc, char** argv) {
  if (!tour::has_gpu("debugging")) return 2;
  try {
    const tour::options opt = tour::parse_options(argc, argv);
    foundry::stream s;
    const std::size_t n = 1000;

    if (opt.fault) {
      int* raw = nullptr;
      FOUNDRY_CUDA_TRY(cudaMalloc(&raw, n * sizeof(int)));
      const std::unique_ptr<int, cuda_free> d_fault(raw);
      std::printf("debugging --fault: off_by_one writes out[%zu] of a %zu-element buffer\n", n, n);
      foundry::launch(s, foundry::make_launch_config_1d(n + 1, 256), off_by_one, d_fault.get(), n);
      foundry::synchronize(s);  // without FOUNDRY_DEBUG_SYNC, an error in off_by_one is reported here
      std::printf(
          "no error reported: nothing checks a write inside the rounded-up allocation; run\n"
          "  compute-sanitizer --tool memcheck ./example_debugging --fault\n");
      return 0;
    }

    // 1. printf from one thread; the line appears at the synchronisation in to_host.
    foundry::device_buffer<int> d_out(n, s, -1);
    foundry::launch(s, foundry::make_launch_config_1d(n, 256), squares, d_out.data(), n);
    const std::vector<int> got = tour::to_host(d_out, s);
    for (std::size_t i = 0; i < n; ++i)
      if (got[i] != int(i % 1000) * int(i % 1000)) {
        std::fprintf(stderr, "debugging: out[%zu] is %d, expected %d\n", i, got[i], int(i * i));
        return 1;
      }

    // 2. The cost of synchronising after every launch, as FOUNDRY_DEBUG_SYNC does: host
    //    time of many tiny launches, enqueued back to back or each waited for.
    const int launches = opt.small ? 200 : 2000;
    foundry::device_buffer<int> d_tiny(32, s, 0);
    const foundry::launch_config one_warp = foundry::make_launch_config_1d(32, 32);
    std::vector<tour::row> rows;
    for (bool sync_each : {true, false}) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int k = 0; k < launches; ++k) {
        foundry::launch(s, one_warp, tiny, d_tiny.data());
        if (sync_each) foundry::synchronize(s);
      }
      foundry::synchronize(s);
      const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - t0;
      rows.push_back({sync_each ? "synchronise after each (DEBUG_SYNC)" : "asynchronous launches", ms.count(),
                      double(launches) * 1e6, sync_each ? "error pinned to its launch" : "error seen later"});
    }
    const std::vector<int> counts = tour::to_host(d_tiny, s);
    for (int c : counts)
      if (c != 2 * launches) {
        std::fprintf(stderr, "debugging: tiny ran %d times, expected %d\n", c, 2 * launches);
        return 1;
      }
#ifdef FOUNDRY_DEBUG_SYNC
    std::printf("debugging: built with FOUNDRY_DEBUG_SYNC: every foundry::launch synchronises\n");
#else
    std::printf("debugging: built without FOUNDRY_DEBUG_SYNC (preset debug-sync turns it on)\n");
#endif
    std::printf("debugging: %d launches of a one-warp kernel, timed by the host clock\n", launches);
    tour::print_table("synchronisation after each launch", "klaunch/s", "on a fault", rows);
    std::printf("\nsquares matches the CPU; rerun with --fault under compute-sanitizer for part 3\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "debugging: %s\n", e.what());
    return 3;
  }
}
