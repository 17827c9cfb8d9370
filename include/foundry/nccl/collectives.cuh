#pragma once
/// \file
/// NCCL's collectives on foundry spans and explicit streams: `all_reduce`,
/// `reduce_scatter`, `all_gather`, `broadcast`.
///
/// Every call takes one span (or pair of spans) and one stream per local rank of the
/// communicator, in local-rank order: element i lives on `comm.device(i)` and `streams[i]`
/// is a stream of that device. With one process driving several GPUs the per-rank calls
/// are issued inside one `ncclGroupStart`/`ncclGroupEnd` (NCCL requires it there: a
/// blocking rank would wait for a peer the same thread has not launched yet).
///
///     foundry::nccl::device_set devices;
///     foundry::nccl::communicator comm(devices);
///     auto x = devices.allocate<float>(n);                      // ...filled per device...
///     foundry::nccl::all_reduce(comm, foundry::nccl::spans(x), foundry::nccl::reduction::sum, devices.streams());
///
/// Common contract:
/// - Asynchronous: enqueued on the streams; returns without synchronising. The buffers
///   must stay alive until the streams have run the collective.
/// - Every rank of the communicator (in every process) makes the same calls in the same
///   order with the same counts (NCCL's rule; foundry can check only its local ranks).
/// - A count of 0 enqueues nothing.
/// - The caller's current device is unchanged on return, also when the call throws.
/// - Throws `std::invalid_argument` (before any NCCL call) for a wrong number of spans or
///   streams, inconsistent sizes, a null pointer with elements, a null stream or a root
///   out of range; `nccl_error` when NCCL fails, after aborting the communicator (see
///   communicator.cuh).
/// - `group` fuses several calls into one NCCL group, launched when the outermost group ends.

#include <foundry/core/error.cuh>
#include <foundry/nccl/communicator.cuh>
#include <foundry/nccl/data_type.cuh>
#include <foundry/nccl/error.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>

#include <nccl.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstddef>
#include <string>
#include <vector>

namespace foundry::nccl {

/// One NCCL group (`ncclGroupStart` now, `ncclGroupEnd` at `end()` or at scope exit):
/// the collectives issued inside are launched together when the outermost group ends.
class group {
 public:
  group() { FOUNDRY_NCCL_TRY(ncclGroupStart()); }
  /// Ends the group; throws `nccl_error` when NCCL reports a failure of the grouped calls.
  void end() {
    open_ = false;
    FOUNDRY_NCCL_TRY(ncclGroupEnd());
  }
  /// Ends the group if `end()` was not called (an exception left the scope); reports, never throws.
  ~group() {
    if (open_) FOUNDRY_NCCL_REPORT(ncclGroupEnd());
  }
  group(const group&) = delete;
  group& operator=(const group&) = delete;

 private:
  bool open_ = true;
};

namespace detail {

inline std::string collective_prefix(const char* name) { return std::string("foundry::nccl::") + name + ": "; }

/// One entry per local rank, non-null streams.
template <class T>
void expect_per_rank(const char* name, const communicator& comm, const std::vector<T>& v, const char* what) {
  FOUNDRY_EXPECTS(comm.size() > 0, collective_prefix(name) + "the communicator holds no ranks (aborted or moved from)");
  FOUNDRY_EXPECTS(v.size() == static_cast<std::size_t>(comm.size()),
                  collective_prefix(name) + std::to_string(v.size()) + " " + what + " for " +
                      std::to_string(comm.size()) + " local ranks");
}

inline void expect_streams(const char* name, const communicator& comm, const std::vector<cuda::stream_ref>& streams) {
  expect_per_rank(name, comm, streams, "streams");
  for (const auto s : streams) foundry::detail::expect_explicit_stream(s);
}

/// Every span has `count` elements and a pointer unless it is empty.
template <class T>
void expect_spans(const char* name, const std::vector<cuda::std::span<T>>& v, std::size_t count, const char* what) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    FOUNDRY_EXPECTS(v[i].size() == count, collective_prefix(name) + what + " of local rank " + std::to_string(i) +
                                              " has " + std::to_string(v[i].size()) + " elements, expected " +
                                              std::to_string(count));
    FOUNDRY_EXPECTS(count == 0 || v[i].data() != nullptr,
                    collective_prefix(name) + what + " of local rank " + std::to_string(i) + " is null");
  }
}

/// Issues `enqueue(i, cudaStream_t)` for every local rank i with its device current, in
/// one NCCL group; aborts the communicator if NCCL fails.
template <class Enqueue>
void for_each_rank_grouped(communicator& comm, const std::vector<cuda::stream_ref>& streams, Enqueue&& enqueue) {
  const restore_current_device keep;  // ncclGroupEnd may leave the last rank's device current
  abort_on_nccl_error(comm, [&] {
    group g;
    for (int i = 0; i < comm.size(); ++i) {
      device_guard on(comm.device(i));
      enqueue(i, streams[static_cast<std::size_t>(i)].get());
    }
    g.end();
  });
}

}  // namespace detail

/// `recv[i][k] = op over every rank r of send_r[k]`, for k < count, on every rank.
/// `send[i]` and `recv[i]` have the same size (the count, equal on every rank); they may
/// be the same memory (in place), otherwise must not overlap.
template <class T>
void all_reduce(communicator& comm, const std::vector<cuda::std::span<const T>>& send,
                const std::vector<cuda::std::span<T>>& recv, reduction op,
                const std::vector<cuda::stream_ref>& streams) {
  detail::expect_per_rank("all_reduce", comm, send, "send spans");
  detail::expect_per_rank("all_reduce", comm, recv, "receive spans");
  detail::expect_streams("all_reduce", comm, streams);
  const std::size_t count = send[0].size();
  detail::expect_spans("all_reduce", send, count, "the send span");
  detail::expect_spans("all_reduce", recv, count, "the receive span");
  if (count == 0) return;
  detail::for_each_rank_grouped(comm, streams, [&](int i, cudaStream_t s) {
    FOUNDRY_NCCL_TRY(
        ncclAllReduce(send[i].data(), recv[i].data(), count, nccl_data_type<T>(), to_nccl(op), comm.get(i), s));
  });
}

/// In place: `data[i][k] = op over every rank r of data_r[k]`.
template <class T>
void all_reduce(communicator& comm, const std::vector<cuda::std::span<T>>& data, reduction op,
                const std::vector<cuda::stream_ref>& streams) {
  all_reduce<T>(comm, std::vector<cuda::std::span<const T>>(data.begin(), data.end()), data, op, streams);
}

/// Rank r receives block r of the reduction: `recv_r[k] = op over ranks q of send_q[r * count + k]`,
/// where count = `recv[i].size()` and every `send[i]` has `count * comm.nranks()` elements.
/// In place when `recv[i]` is block `rank(i)` of `send[i]`; otherwise they must not overlap.
template <class T>
void reduce_scatter(communicator& comm, const std::vector<cuda::std::span<const T>>& send,
                    const std::vector<cuda::std::span<T>>& recv, reduction op,
                    const std::vector<cuda::stream_ref>& streams) {
  detail::expect_per_rank("reduce_scatter", comm, send, "send spans");
  detail::expect_per_rank("reduce_scatter", comm, recv, "receive spans");
  detail::expect_streams("reduce_scatter", comm, streams);
  const std::size_t count = recv[0].size();
  detail::expect_spans("reduce_scatter", recv, count, "the receive span");
  detail::expect_spans("reduce_scatter", send, count * static_cast<std::size_t>(comm.nranks()),
                       "the send span (count x nranks)");
  if (count == 0) return;
  detail::for_each_rank_grouped(comm, streams, [&](int i, cudaStream_t s) {
    FOUNDRY_NCCL_TRY(
        ncclReduceScatter(send[i].data(), recv[i].data(), count, nccl_data_type<T>(), to_nccl(op), comm.get(i), s));
  });
}

/// Every rank receives every rank's block, in rank order: `recv_i[r * count + k] = send_r[k]`,
/// where count = `send[i].size()` and every `recv[i]` has `count * comm.nranks()` elements.
/// In place when `send[i]` is block `rank(i)` of `recv[i]`; otherwise they must not overlap.
template <class T>
void all_gather(communicator& comm, const std::vector<cuda::std::span<const T>>& send,
                const std::vector<cuda::std::span<T>>& recv, const std::vector<cuda::stream_ref>& streams) {
  detail::expect_per_rank("all_gather", comm, send, "send spans");
  detail::expect_per_rank("all_gather", comm, recv, "receive spans");
  detail::expect_streams("all_gather", comm, streams);
  const std::size_t count = send[0].size();
  detail::expect_spans("all_gather", send, count, "the send span");
  detail::expect_spans("all_gather", recv, count * static_cast<std::size_t>(comm.nranks()),
                       "the receive span (count x nranks)");
  if (count == 0) return;
  detail::for_each_rank_grouped(comm, streams, [&](int i, cudaStream_t s) {
    FOUNDRY_NCCL_TRY(ncclAllGather(send[i].data(), recv[i].data(), count, nccl_data_type<T>(), comm.get(i), s));
  });
}

/// In place: every rank's `data[i]` becomes rank `root`'s (all the same size).
template <class T>
void broadcast(communicator& comm, const std::vector<cuda::std::span<T>>& data, int root,
               const std::vector<cuda::stream_ref>& streams) {
  detail::expect_per_rank("broadcast", comm, data, "spans");
  detail::expect_streams("broadcast", comm, streams);
  const int nranks = comm.nranks();
  FOUNDRY_EXPECTS(root >= 0 && root < nranks, "foundry::nccl::broadcast: root " + std::to_string(root) +
                                                  " is not a rank of " + std::to_string(nranks));
  const std::size_t count = data[0].size();
  detail::expect_spans("broadcast", data, count, "the span");
  if (count == 0) return;
  detail::for_each_rank_grouped(comm, streams, [&](int i, cudaStream_t s) {
    FOUNDRY_NCCL_TRY(ncclBroadcast(data[i].data(), data[i].data(), count, nccl_data_type<T>(), root, comm.get(i), s));
  });
}

}  // namespace foundry::nccl
