#pragma once
/// \file
/// The textbook twin of `foundry::histogram_even`, written as a first attempt is:
/// `fill` the counts with zeros, then one thread per sample computes its bin (the
/// same binning, `detail::even_bins`, so the counts are identical) and adds 1
/// with a global `atomicAdd`. Every sample is an atomic on the L2, and samples in
/// the same bin serialise on one address: the fast version counts in shared
/// memory per block, adds runs of equal bins at once, and reads 16-byte vectors.
///
///     foundry::naive::histogram_even(bytes.span(), counts.span(), 0, 256, s);
///
/// Asynchronous on `s`; overwrites `counts`. Throws as `foundry::histogram_even`.

#include <foundry/algorithms/histogram.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace foundry::naive {

/// Threads per block of the naive histogram.
inline constexpr std::uint32_t histogram_block_threads = 256;

/// One global atomicAdd per sample in range: the textbook histogram.
template <class Sample, class Count>
__global__ void histogram_even_kernel(const Sample* samples, std::uint64_t n, foundry::detail::even_bins<Sample> bins,
                                      Count* counts) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) {
    const std::uint32_t b = bins(samples[i]);
    if (b != foundry::detail::no_bin) foundry::detail::atomic_add_count(counts + b, 1u);
  }
}

/// `counts[b]` = the number of samples in bin `b` of `counts.size()` even bins over
/// `[lower, upper)`; see `foundry::histogram_even`.
template <class Sample, std::size_t SampleExtent, class Count, std::size_t CountExtent>
void histogram_even(cuda::std::span<Sample, SampleExtent> samples, cuda::std::span<Count, CountExtent> counts,
                    histogram_compute_t<Sample> lower, histogram_compute_t<Sample> upper, cuda::stream_ref s) {
  foundry::detail::static_check_histogram_types<Sample, Count>();
  FOUNDRY_NVTX_FUNCTION_RANGE();
  foundry::detail::expect_histogram_even_arguments(samples, counts, lower, upper, "naive::histogram_even");
  using sample = std::remove_const_t<Sample>;
  fill(counts, Count{0}, s);
  launch(s, make_launch_config_1d(samples.size(), histogram_block_threads), histogram_even_kernel<sample, Count>,
         static_cast<const sample*>(samples.data()), std::uint64_t{samples.size()},
         foundry::detail::make_even_bins<sample>(lower, upper, counts.size()), counts.data());
}

}  // namespace foundry::naive
