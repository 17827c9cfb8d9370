#pragma once
/// \file
/// The textbook twin of foundry's scans: scan-then-propagate in several
/// launches (as in GPU Gems 3, ch. 39, with a Hillis-Steele scan per block).
///  1. Each block of 256 scans its elements in shared memory (log2(256) steps,
///     a barrier each) into a temporary array and writes its total.
///  2. The block totals are scanned the same way, recursively, until one block
///     holds them all.
///  3. Each block adds the scanned total of the blocks before it to its elements.
///  4. A last kernel writes the output (shifted by one, after `init`, for the
///     exclusive form).
/// The data cross memory about four times and every level is a launch; foundry's
/// single-pass scan reads and writes it once.
///
/// Asynchronous on `s` (temporaries allocated and freed stream-ordered).
/// Throws `std::invalid_argument` on different sizes or a null pointer with elements.

#include <foundry/algorithms/detail/checks.cuh>
#include <foundry/core/math.cuh>
#include <foundry/core/operators.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/std/span>
#include <cuda/std/type_traits>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace foundry::naive {

/// Threads per block of the naive scan's kernels.
inline constexpr std::uint32_t scan_block_threads = 256;

/// Step 1: Hillis-Steele inclusive scan of each block's elements.
template <class In, class T, class Op>
__global__ void scan_blocks_kernel(const In* in, std::size_t n, T* scanned, T* block_totals, Op op) {
  __shared__ T buffer[2][scan_block_threads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + tid;
  int current = 0;
  if (i < n) buffer[0][tid] = convert_to<T>(in[i]);
  __syncthreads();
  for (unsigned offset = 1; offset < blockDim.x; offset *= 2) {
    if (i < n) {
      buffer[1 - current][tid] =
          tid >= offset ? op(buffer[current][tid - offset], buffer[current][tid]) : buffer[current][tid];
    }
    current = 1 - current;
    __syncthreads();
  }
  if (i < n) scanned[i] = buffer[current][tid];
  const std::size_t block_last = std::size_t{blockIdx.x} * blockDim.x + blockDim.x - 1;
  const std::size_t last = block_last < n - 1 ? block_last : n - 1;  // the block's last element
  if (block_totals != nullptr && i == last) block_totals[blockIdx.x] = buffer[current][tid];
}

/// Step 3: adds the scanned totals of the blocks before each block.
template <class T, class Op>
__global__ void add_block_prefixes_kernel(T* scanned, std::size_t n, const T* scanned_totals, Op op) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (blockIdx.x > 0 && i < n) scanned[i] = op(scanned_totals[blockIdx.x - 1], scanned[i]);
}

/// Step 4: the output, inclusive or shifted after `init`.
template <class T, class Op>
__global__ void write_scan_output_kernel(const T* scanned, std::size_t n, T* out, T init, bool exclusive, Op op) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (!exclusive) {
    out[i] = scanned[i];
  } else {
    out[i] = i == 0 ? init : op(init, scanned[i - 1]);
  }
}

/// Inclusive scan of `in[0, n)` into `scanned` (steps 1-3), recursing on the block totals.
template <class In, class T, class Op>
void scan_into(const In* in, std::size_t n, T* scanned, Op op, cuda::stream_ref s) {
  const std::size_t blocks = ceil_div<std::size_t>(n, scan_block_threads);
  const launch_config c = make_launch_config_1d(n, scan_block_threads);
  if (blocks == 1) {
    launch(s, c, scan_blocks_kernel<In, T, Op>, in, n, scanned, static_cast<T*>(nullptr), op);
    return;
  }
  device_buffer<T> totals(blocks, s);
  device_buffer<T> scanned_totals(blocks, s);
  launch(s, c, scan_blocks_kernel<In, T, Op>, in, n, scanned, totals.data(), op);
  scan_into<T, T, Op>(totals.data(), blocks, scanned_totals.data(), op, s);
  launch(s, c, add_block_prefixes_kernel<T, Op>, scanned, n, static_cast<const T*>(scanned_totals.data()), op);
}

/// Scan-then-propagate in several launches: inclusive, or exclusive from `init` when `exclusive` (asynchronous on `s`).
template <class In, std::size_t InExtent, class Out, std::size_t OutExtent, class Op>
void scan(cuda::std::span<In, InExtent> in, cuda::std::span<Out, OutExtent> out, Out init, bool exclusive, Op op,
          cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  foundry::detail::expect_device_span(in, "naive scan input");
  foundry::detail::expect_device_span(out, "naive scan output");
  foundry::detail::expect_same_size(in, out.size(), "naive scan input");
  if (in.empty()) return;
  device_buffer<Out> scanned(in.size(), s);
  scan_into(static_cast<const std::remove_const_t<In>*>(in.data()), in.size(), scanned.data(), op, s);
  launch(s, make_launch_config_1d(in.size(), scan_block_threads), write_scan_output_kernel<Out, Op>,
         static_cast<const Out*>(scanned.data()), in.size(), out.data(), init, exclusive, op);
}

/// `out[i] = in[0] ⊕ ... ⊕ in[i]`.
template <class In, std::size_t InExtent, class Out, std::size_t OutExtent, class Op>
void inclusive_scan(cuda::std::span<In, InExtent> in, cuda::std::span<Out, OutExtent> out, Op op, cuda::stream_ref s) {
  naive::scan(in, out, Out{}, false, op, s);
}

/// `out[0] = init`, `out[i] = init ⊕ in[0] ⊕ ... ⊕ in[i-1]`.
template <class In, std::size_t InExtent, class Out, std::size_t OutExtent, class Op>
void exclusive_scan(cuda::std::span<In, InExtent> in, cuda::std::span<Out, OutExtent> out,
                    cuda::std::type_identity_t<Out> init, Op op, cuda::stream_ref s) {
  naive::scan(in, out, init, true, op, s);
}

}  // namespace foundry::naive
