#pragma once
/// \file
/// `stream_pipeline<In, Out>`: streams a large host array through the GPU in
/// chunks, so that the copy in, the caller's work and the copy out of different
/// chunks overlap on several streams.
///
///     foundry::stream_pipeline<float> p;  // 4 lanes, 8 MiB chunks
///     p.run(host_in, host_out, [](cuda::std::span<const float> in, cuda::std::span<float> out,
///                                 cuda::stream_ref s) { foundry::transform(in, out, my_op{}, s); });
///
/// Schedule. Chunk c goes to lane c mod N. A lane is a work stream with one device
/// input buffer and one device output buffer (and, for pageable data, one pinned staging
/// buffer each way), allocated once and reused by every run. The copies do not run on
/// the lanes: every copy in goes through one copy-in stream and every copy out through
/// one copy-out stream, shared by all lanes. Each of the two is a queue of back-to-back
/// copies in chunk order, so the host-to-device and the device-to-host directions of the
/// link are each busy from the first chunk to the last, and a copy in never queues
/// behind a copy out, as it would if a lane's copies and work shared one stream. One
/// stream per direction also keeps two copies of the same direction from splitting the
/// link between them: chunk c + 1 starts to arrive only when chunk c has, so chunk c's
/// work and copy out start as early as they can.
///
/// Events join the three streams of a chunk and guard the reuse of a lane's buffers:
///
///     copy-in stream:   wait work(c - N)    copy in c -> d_in         record copied_in
///     lane stream:      wait copied_in c,
///                       wait copy out(c - N) work(c): d_in -> d_out    record worked
///     copy-out stream:  wait worked c       copy out c <- d_out       record copied_out
///
/// (c - N is the lane's previous chunk, whose work read d_in and whose copy out read
/// d_out.) With N >= 2 those waits are on work long finished unless the work of a chunk
/// outlasts N - 1 chunks' copies, so neither copy stream waits for anything but its own
/// previous copy; N lanes also let the work of up to N chunks overlap. The pinned staging
/// buffers are filled and emptied by the host, which waits on the same events before
/// reusing them: before writing a lane's input staging buffer, for the lane's previous
/// copy in; before enqueueing a lane's copy out into its output staging buffer, for the
/// previous copy out, whose chunk it then copies to the caller's memory. The device
/// buffers are allocated by the constructor; a staging buffer only by the first run that
/// needs it (pageable input or output), since pinning memory is slow (milliseconds per
/// 16 MiB) and a pipeline fed from pinned arrays never touches it. A pipeline of N lanes
/// holds N + 2 streams: up to 6 lanes they fit CUDA's 8 hardware queues
/// (`CUDA_DEVICE_MAX_CONNECTIONS`); beyond that, streams share queues and may wait on
/// each other's work for no reason.
///
/// The last chunk's copy out cannot overlap a copy in, nor the first chunk's copy in a
/// copy out: a run costs about one chunk's copy more than its bytes at the link's
/// two-way rate, so small runs want small chunks.
///
/// Host memory may be pageable or pinned, checked per run with
/// `cudaPointerGetAttributes`. Pinned (or `cudaHostRegister`ed) and managed memory are
/// copied directly by the copy engines (managed memory never by the host: on a device
/// without concurrent managed access the host may not touch it while kernels run).
/// Pageable memory passes through the staging buffers with a host
/// `memcpy`: one extra host copy per byte each way, which limits the rate to the
/// host's memcpy speed (one thread); pin large arrays that are streamed often.

#include <foundry/core/error.cuh>
#include <foundry/core/overlap.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/memory/pinned_buffer.cuh>
#include <foundry/runtime/device.cuh>
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
/// True for memory the copy engines take directly (page-locked host memory, or managed
/// memory), false for pageable memory, which the pipeline stages. Throws
/// `std::invalid_argument` for device memory: the pipeline streams host arrays.
inline bool copies_directly(const void* p, const char* what) {
  cudaPointerAttributes attributes{};
  FOUNDRY_CUDA_TRY(cudaPointerGetAttributes(&attributes, p));
  FOUNDRY_EXPECTS(attributes.type != cudaMemoryTypeDevice,
                  std::string("the pipeline's ") + what + " is device memory: call the work directly instead");
  return attributes.type == cudaMemoryTypeHost || attributes.type == cudaMemoryTypeManaged;
}
}  // namespace detail

template <class In, class Out = In>
class stream_pipeline {
 public:
  /// Default chunk: 8 MiB of input. H200, 1 GiB of floats over 4 lanes, measured with
  /// an earlier schedule (each lane's copies and work on one stream; not yet with this
  /// one): 94.7 GB/s both ways with 8 MiB chunks, 94.6 with 16, 91.6 with 4. Of the two
  /// equal ones the smaller halves the chunk a run pays for at its ends (see above),
  /// which bounds a 256 MiB run at ~1.76x serial with 16 MiB chunks and ~1.81x with 8.
  static constexpr std::size_t default_chunk_bytes = std::size_t{8} << 20;
  /// Default lanes: 4. Not yet measured on the H200 with this schedule: two lanes keep
  /// both copy streams busy when a chunk's work is shorter than its copy; four leave room
  /// for work up to about three chunks' copies long, and with the two copy streams make 6
  /// streams, within CUDA's 8 hardware queues.
  static constexpr std::size_t default_stream_count = 4;
  /// Most lanes a pipeline takes: beyond CUDA's 8 hardware queues more streams only share
  /// them, and a count past this is a mistake rather than a tuning (each lane costs a
  /// stream, three events and two chunks of device memory).
  static constexpr std::size_t max_stream_count = 64;

  /// Creates `stream_count` lanes, each a stream with `chunk_elements` elements of device
  /// memory each way, and the two copy streams the lanes share (synchronous: returns once
  /// the memory is allocated). Pinned staging memory of the same size is allocated by the
  /// first run with pageable input (or output), and kept. Throws `std::invalid_argument`
  /// for a zero chunk, a stream count of zero or above `max_stream_count` (before any CUDA
  /// call), `cuda_error` if a stream or an allocation fails.
  explicit stream_pipeline(std::size_t chunk_elements = std::max<std::size_t>(default_chunk_bytes / sizeof(In), 1),
                           std::size_t stream_count = default_stream_count)
      : chunk_elements_(checked_shape(chunk_elements, stream_count)) {
    lanes_.reserve(stream_count);
    for (std::size_t k = 0; k < stream_count; ++k) lanes_.emplace_back(chunk_elements);
    // The buffers are allocated in the order of their lane's stream and used on the copy
    // streams too: wait for the allocations once, here, rather than join streams per run.
    for (lane& l : lanes_) l.s.synchronize();
  }

  stream_pipeline(const stream_pipeline&) = delete;
  stream_pipeline& operator=(const stream_pipeline&) = delete;
  /// Takes the other pipeline's streams and buffers.
  stream_pipeline(stream_pipeline&&) noexcept = default;
  /// Takes the other pipeline's streams and buffers (its own are freed first; assigning a
  /// pipeline to itself changes nothing).
  stream_pipeline& operator=(stream_pipeline&& other) noexcept {
    if (this != &other) {
      lanes_ = std::move(other.lanes_);  // first: the old lanes' buffers go before the old copy streams
      copy_in_ = std::move(other.copy_in_);
      copy_out_ = std::move(other.copy_out_);
      chunk_elements_ = other.chunk_elements_;
    }
    return *this;
  }

  /// Elements per chunk.
  [[nodiscard]] std::size_t chunk_elements() const noexcept { return chunk_elements_; }
  /// Lanes the chunks are spread over: each has a stream for its chunks' work (the
  /// copies run on two more streams, shared by the lanes).
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
  /// work on `stream` only (the pipeline orders the copies after what is on it, through
  /// events) and must not keep the spans: they are reused by later chunks. Chunk c's
  /// work gets lane c mod `stream_count()`'s stream, so the work of one lane's chunks
  /// runs in order, and that of different lanes may overlap.
  ///
  /// Synchronous: returns when all of `out` is on the host. Empty input does nothing.
  /// Throws `std::invalid_argument` if the sizes differ or either span is device memory;
  /// `cuda_error` for a failed CUDA call; and rethrows what `work` throws. On any
  /// exception every stream is synchronised first, `out` is partly written, and the
  /// pipeline can run again (unless a sticky CUDA error broke the context). A moved-from
  /// pipeline throws `std::invalid_argument` on non-empty input. Runs on the device that
  /// was current when the pipeline was made, whichever is current now (and leaves the
  /// current device as it found it).
  template <class Work>
  void run(cuda::std::span<const In> in, cuda::std::span<Out> out, Work&& work) {
    FOUNDRY_EXPECTS(in.size() == out.size(), "pipeline input and output differ in size (" + std::to_string(in.size()) +
                                                 " and " + std::to_string(out.size()) + " elements)");
    // Exactly in place is safe (a chunk is read before it is written, and chunks are
    // disjoint); a shifted overlap would let one chunk's copy in read another's result.
    detail::expect_no_forbidden_overlap(in, out, detail::overlap_rule::same_or_disjoint, "pipeline input and output");
    if (in.empty()) return;
    FOUNDRY_EXPECTS(!lanes_.empty(), "run on a moved-from pipeline (it has no streams left)");
    // The streams and buffers belong to the device that was current at construction; a
    // copy enqueued while another device is current could fail (or stage on the wrong one).
    const device_guard on(stream_device(copy_in_.get()));
    const bool in_direct = detail::copies_directly(in.data(), "input");
    const bool out_direct = detail::copies_directly(out.data(), "output");
    for (lane& l : lanes_) l.allocate_staging(!in_direct, !out_direct);
    try {
      std::size_t chunk = 0;
      for (std::size_t offset = 0; offset < in.size(); offset += chunk_elements_, ++chunk) {
        const std::size_t n = std::min(chunk_elements_, in.size() - offset);
        enqueue_chunk(lanes_[chunk % lanes_.size()], in.subspan(offset, n), out.subspan(offset, n), in_direct,
                      out_direct, work);
      }
      copy_in_.synchronize();
      for (lane& l : lanes_) l.s.synchronize();
      copy_out_.synchronize();
      for (lane& l : lanes_) drain_output(l);
    } catch (...) {
      // The first failure is the one reported: later errors (the same sticky error,
      // or none) are dropped, and cleared so that no later launch check reports them as
      // its own; no staged output is copied any more.
      detail::clear_own_error(cudaStreamSynchronize(copy_in_.get()));
      for (lane& l : lanes_) {
        detail::clear_own_error(cudaStreamSynchronize(l.s.get()));
        l.pending_out = {};
      }
      detail::clear_own_error(cudaStreamSynchronize(copy_out_.get()));
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
    stream s;  // the lane's work; declared first: destroyed after the buffers freed on it
    device_buffer<In> d_in;
    device_buffer<Out> d_out;
    pinned_buffer<In> staging_in;              // empty until a run has pageable input
    pinned_buffer<Out> staging_out;            // empty until a run has pageable output
    event copied_in{event_timing::disabled};   // after the copy into d_in (from staging_in)
    event worked{event_timing::disabled};      // after the work that read d_in and wrote d_out
    event copied_out{event_timing::disabled};  // after the copy out of d_out (into staging_out)
    cuda::std::span<Out> pending_out{};        // where staging_out's chunk belongs; empty: none
  };

  /// Enqueues one chunk on lane `l` as the file comment's schedule says: the copy in on
  /// `copy_in_`, the work on the lane's stream, the copy out on `copy_out_`.
  template <class Work>
  void enqueue_chunk(lane& l, cuda::std::span<const In> in, cuda::std::span<Out> out, bool in_direct, bool out_direct,
                     Work& work) {
    const std::size_t n = in.size();
    const In* source = in.data();
    if (!in_direct) {
      l.copied_in.synchronize();  // the lane's previous copy in has read the staging buffer
      std::memcpy(l.staging_in.data(), source, n * sizeof(In));
      source = l.staging_in.data();
    }
    l.worked.make_wait(copy_in_);  // the lane's previous work has read d_in
    // cudaMemcpyDefault: the source is pinned host, managed or (staged) pinned memory.
    FOUNDRY_CUDA_TRY(cudaMemcpyAsync(l.d_in.data(), source, n * sizeof(In), cudaMemcpyDefault, copy_in_.get()));
    l.copied_in.record(copy_in_);

    l.copied_in.make_wait(l.s);
    l.copied_out.make_wait(l.s);  // the lane's previous copy out has read d_out
    work(cuda::std::span<const In>(l.d_in.data(), n), cuda::std::span<Out>(l.d_out.data(), n), l.s.view());
    l.worked.record(l.s);

    Out* destination = out.data();
    if (!out_direct) {
      drain_output(l);  // empties staging_out of the lane's previous chunk before it is overwritten
      destination = l.staging_out.data();
    }
    l.worked.make_wait(copy_out_);
    FOUNDRY_CUDA_TRY(cudaMemcpyAsync(destination, l.d_out.data(), n * sizeof(Out), cudaMemcpyDefault, copy_out_.get()));
    l.copied_out.record(copy_out_);
    if (!out_direct) l.pending_out = out;
  }

  /// Copies the chunk waiting in the lane's output staging buffer to its place in the
  /// caller's output, after waiting for the copy that filled it.
  static void drain_output(lane& l) {
    if (l.pending_out.empty()) return;
    l.copied_out.synchronize();
    std::memcpy(l.pending_out.data(), l.staging_out.data(), l.pending_out.size_bytes());
    l.pending_out = {};
  }

  static std::size_t checked_shape(std::size_t chunk_elements, std::size_t stream_count) {
    FOUNDRY_EXPECTS(chunk_elements > 0, "a pipeline needs a chunk of at least one element");
    FOUNDRY_EXPECTS(stream_count > 0, "a pipeline needs at least one stream");
    FOUNDRY_EXPECTS(stream_count <= max_stream_count, "a pipeline takes at most " + std::to_string(max_stream_count) +
                                                          " streams, not " + std::to_string(stream_count));
    return chunk_elements;
  }

  std::size_t chunk_elements_;  // declared first: checked before any stream is created
  stream copy_in_;              // every chunk's copy in, in chunk order
  stream copy_out_;             // every chunk's copy out, in chunk order
  std::vector<lane> lanes_;
};

}  // namespace foundry
