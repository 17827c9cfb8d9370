#pragma once
/// \file
/// `stream_pipeline<In, Out>`: streams a large host array through the GPU in
/// chunks, so that the copy in, the caller's work and the copy out of different
/// chunks overlap on several streams.
///
///     foundry::stream_pipeline<float> p;  // 4 streams, 16 MiB chunks
///     p.run(host_in, host_out, [](cuda::std::span<const float> in, cuda::std::span<float> out,
///                                 cuda::stream_ref s) { foundry::transform(in, out, my_op{}, s); });
///
/// Design. Chunk c goes to lane c mod N; a lane is one stream with one device
/// input buffer, one device output buffer and one pinned staging buffer each way,
/// allocated once and reused by every run. The device buffers are allocated by the
/// constructor; a staging buffer only by the first run that needs it (pageable input
/// or output), since pinning memory is slow (milliseconds per 16 MiB) and a pipeline
/// fed from pinned arrays never touches it. Stream order
/// alone makes the device buffers safe to reuse: a lane's next copy in is
/// enqueued after its previous work, and its next work after its previous copy
/// out. The staging buffers are filled and emptied by the host, so the host
/// waits on an event before reusing them: before writing a lane's input staging
/// buffer, for that lane's previous copy in; before enqueueing a lane's copy out
/// into its output staging buffer, for the previous copy out, whose chunk it then
/// copies to the caller's memory. One buffer per lane each way, rather than two,
/// keeps the design simple; N lanes already overlap N chunks.
///
/// Host memory may be pageable or pinned, checked per run with
/// `cudaPointerGetAttributes`. Pinned (or `cudaHostRegister`ed) memory is copied
/// directly. Pageable memory passes through the staging buffers with a host
/// `memcpy`: one extra host copy per byte each way, which limits the rate to the
/// host's memcpy speed (one thread); pin large arrays that are streamed often.

#include <foundry/core/error.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/memory/pinned_buffer.cuh>
#include <foundry/runtime/event.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda_runtime_api.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

namespace foundry {

namespace detail {
/// True for page-locked host memory, false for pageable or managed memory.
/// Throws `std::invalid_argument` for device memory: the pipeline streams host arrays.
inline bool is_pinned_host(const void* p, const char* what) {
  cudaPointerAttributes attributes{};
  FOUNDRY_CUDA_TRY(cudaPointerGetAttributes(&attributes, p));
  FOUNDRY_EXPECTS(attributes.type != cudaMemoryTypeDevice,
                  std::string("the pipeline's ") + what + " is device memory: call the work directly instead");
  return attributes.type == cudaMemoryTypeHost;
}
}  // namespace detail

template <class In, class Out = In>
class stream_pipeline {
 public:
  /// Default chunk: 16 MiB of input. Not yet measured on the H200: chosen so that a
  /// chunk's copy (about 0.3 ms at 55 GB/s) dwarfs the per-chunk launch overhead.
  static constexpr std::size_t default_chunk_bytes = std::size_t{16} << 20;
  /// Default lanes: 4. Not yet measured on the H200: enough for copy in, work and
  /// copy out of different chunks to overlap, with one lane of slack.
  static constexpr std::size_t default_stream_count = 4;

  /// Creates `stream_count` streams and, per stream, `chunk_elements` elements of device
  /// memory each way (synchronous). Pinned staging memory of the same size is allocated
  /// by the first run with pageable input (or output), and kept. Throws `std::invalid_argument` for a zero
  /// chunk or stream count (before any CUDA call), `cuda_error` if a stream or an
  /// allocation fails.
  explicit stream_pipeline(std::size_t chunk_elements = std::max<std::size_t>(default_chunk_bytes / sizeof(In), 1),
                           std::size_t stream_count = default_stream_count)
      : chunk_elements_(chunk_elements) {
    FOUNDRY_EXPECTS(chunk_elements > 0, "a pipeline needs a chunk of at least one element");
    FOUNDRY_EXPECTS(stream_count > 0, "a pipeline needs at least one stream");
    lanes_.reserve(stream_count);
    for (std::size_t k = 0; k < stream_count; ++k) lanes_.emplace_back(chunk_elements);
  }

  stream_pipeline(const stream_pipeline&) = delete;
  stream_pipeline& operator=(const stream_pipeline&) = delete;
  /// Takes the other pipeline's streams and buffers.
  stream_pipeline(stream_pipeline&&) noexcept = default;
  /// Takes the other pipeline's streams and buffers.
  stream_pipeline& operator=(stream_pipeline&&) noexcept = default;

  /// Elements per chunk.
  [[nodiscard]] std::size_t chunk_elements() const noexcept { return chunk_elements_; }
  /// Streams (lanes) the chunks are spread over.
  [[nodiscard]] std::size_t stream_count() const noexcept { return lanes_.size(); }
  /// Bytes of pinned staging memory held: 0 until a run had pageable input or output.
  [[nodiscard]] std::size_t staging_bytes() const noexcept {
    std::size_t bytes = 0;
    for (const lane& l : lanes_) bytes += l.staging_in.size() * sizeof(In) + l.staging_out.size() * sizeof(Out);
    return bytes;
  }

  /// Computes `out` from `in` chunk by chunk: for each chunk, copies it to the device,
  /// calls `work(in_chunk, out_chunk, stream)` with device spans of the chunk's length
  /// (at most `chunk_elements()`) and copies the result back. `work` must enqueue its
  /// work on `stream` only (stream order is what makes buffer reuse safe) and must not
  /// keep the spans: they are reused by later chunks.
  ///
  /// Synchronous: returns when all of `out` is on the host. Empty input does nothing.
  /// Throws `std::invalid_argument` if the sizes differ or either span is device memory;
  /// `cuda_error` for a failed CUDA call; and rethrows what `work` throws. On any
  /// exception every stream is synchronised first, `out` is partly written, and the
  /// pipeline can run again (unless a sticky CUDA error broke the context). A moved-from
  /// pipeline throws `std::invalid_argument` on non-empty input.
  template <class Work>
  void run(cuda::std::span<const In> in, cuda::std::span<Out> out, Work&& work) {
    FOUNDRY_EXPECTS(in.size() == out.size(), "pipeline input and output differ in size (" + std::to_string(in.size()) +
                                                 " and " + std::to_string(out.size()) + " elements)");
    if (in.empty()) return;
    FOUNDRY_EXPECTS(!lanes_.empty(), "run on a moved-from pipeline (it has no streams left)");
    const bool in_pinned = detail::is_pinned_host(in.data(), "input");
    const bool out_pinned = detail::is_pinned_host(out.data(), "output");
    for (lane& l : lanes_) l.allocate_staging(!in_pinned, !out_pinned);
    try {
      std::size_t chunk = 0;
      for (std::size_t offset = 0; offset < in.size(); offset += chunk_elements_, ++chunk) {
        const std::size_t n = std::min(chunk_elements_, in.size() - offset);
        enqueue_chunk(lanes_[chunk % lanes_.size()], in.subspan(offset, n), out.subspan(offset, n), in_pinned,
                      out_pinned, work);
      }
      for (lane& l : lanes_) {
        l.s.synchronize();
        drain_output(l);
      }
    } catch (...) {
      // The first failure is the one reported: later errors (the same sticky error,
      // or none) are dropped, and no staged output is copied any more.
      for (lane& l : lanes_) {
        (void)cudaStreamSynchronize(l.s.get());
        l.pending_out = {};
      }
      throw;
    }
  }

 private:
  struct lane {
    explicit lane(std::size_t n) : d_in(n, s), d_out(n, s) {}
    void allocate_staging(bool in, bool out) {
      if (in && staging_in.empty()) staging_in = pinned_buffer<In>(d_in.size());
      if (out && staging_out.empty()) staging_out = pinned_buffer<Out>(d_out.size());
    }
    stream s;  // declared first: destroyed after the buffers freed on it
    device_buffer<In> d_in;
    device_buffer<Out> d_out;
    pinned_buffer<In> staging_in;                     // empty until a run has pageable input
    pinned_buffer<Out> staging_out;                   // empty until a run has pageable output
    event staging_in_free{event_timing::disabled};    // recorded after the copy out of staging_in
    event staging_out_ready{event_timing::disabled};  // recorded after the copy into staging_out
    cuda::std::span<Out> pending_out{};               // where staging_out's chunk belongs; empty: none
  };

  template <class Work>
  void enqueue_chunk(lane& l, cuda::std::span<const In> in, cuda::std::span<Out> out, bool in_pinned, bool out_pinned,
                     Work& work) {
    const std::size_t n = in.size();
    const In* source = in.data();
    if (!in_pinned) {
      l.staging_in_free.synchronize();  // the lane's previous copy in has read the staging buffer
      std::memcpy(l.staging_in.data(), source, n * sizeof(In));
      source = l.staging_in.data();
    }
    FOUNDRY_CUDA_TRY(cudaMemcpyAsync(l.d_in.data(), source, n * sizeof(In), cudaMemcpyHostToDevice, l.s.get()));
    if (!in_pinned) l.staging_in_free.record(l.s);

    work(cuda::std::span<const In>(l.d_in.data(), n), cuda::std::span<Out>(l.d_out.data(), n), l.s.view());

    if (out_pinned) {
      FOUNDRY_CUDA_TRY(cudaMemcpyAsync(out.data(), l.d_out.data(), n * sizeof(Out), cudaMemcpyDeviceToHost, l.s.get()));
      return;
    }
    drain_output(l);  // empties staging_out of the lane's previous chunk before it is overwritten
    FOUNDRY_CUDA_TRY(
        cudaMemcpyAsync(l.staging_out.data(), l.d_out.data(), n * sizeof(Out), cudaMemcpyDeviceToHost, l.s.get()));
    l.staging_out_ready.record(l.s);
    l.pending_out = out;
  }

  /// Copies the chunk waiting in the lane's output staging buffer to its place in the
  /// caller's output, after waiting for the copy that filled it.
  static void drain_output(lane& l) {
    if (l.pending_out.empty()) return;
    l.staging_out_ready.synchronize();
    std::memcpy(l.pending_out.data(), l.staging_out.data(), l.pending_out.size_bytes());
    l.pending_out = {};
  }

  std::size_t chunk_elements_;
  std::vector<lane> lanes_;
};

}  // namespace foundry
