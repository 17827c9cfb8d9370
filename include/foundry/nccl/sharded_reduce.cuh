#pragma once
/// \file
/// `sharded_reduce`: a reduction of data split across the ranks of a communicator, the
/// result left on every rank.
///
///     // x[i]: the shard on local rank i; total[i]: one float on device i
///     foundry::nccl::sharded_reduce(comm, foundry::nccl::const_spans(x), foundry::nccl::spans(total),
///                                   foundry::nccl::reduction::sum, devices.streams());
///
/// How: each rank reduces its shard with `foundry::reduce_sum` / `reduce_min` /
/// `reduce_max` into its one-element output, then an in-place `all_reduce` of those
/// partials combines them on the devices. Not a host combine: that would need every
/// stream synchronised and a copy back per rank, so the call could not stay asynchronous
/// and the result would be on the host, where the next GPU step does not want it. The
/// all-reduce of one element costs NCCL's latency (microseconds over NVLink), against
/// milliseconds of shard reduction at the sizes where sharding pays.
///
/// Determinism: each shard's reduction is deterministic (transform_reduce.cuh); the
/// combination of the partials follows NCCL's algorithm, so a floating-point sum over
/// several ranks may differ in the last bits from `reduce_sum` of the whole on one GPU.

#include <foundry/algorithms/reduce.cuh>
#include <foundry/core/error.cuh>
#include <foundry/nccl/collectives.cuh>
#include <foundry/nccl/communicator.cuh>
#include <foundry/nccl/data_type.cuh>
#include <foundry/runtime/device.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstddef>
#include <vector>

namespace foundry::nccl {

/// `out[i][0]` = `op` (sum, min or max) over every element of every rank's shard, on
/// every rank. `shards[i]` is local rank i's part (any size, empty allowed: the
/// identity, as `reduce_sum`/`reduce_min`/`reduce_max` give it); `out[i]` is one element
/// on the same device, of the accumulator type `Acc` (`__half`/`__nv_bfloat16` inputs
/// are summed in `float` when `Acc` is float). Asynchronous on `streams`; the caller's
/// current device is unchanged. The reduction workspace is allocated stream-ordered on
/// each rank's stream. Throws `std::invalid_argument` for `reduction::product` or
/// `average`, or arguments that do not match the ranks (see collectives.cuh),
/// `cuda_error` or `nccl_error` (the communicator then aborted) on a failure.
template <class In, class Acc>
void sharded_reduce(communicator& comm, const std::vector<cuda::std::span<const In>>& shards,
                    const std::vector<cuda::std::span<Acc>>& out, reduction op,
                    const std::vector<cuda::stream_ref>& streams) {
  static_assert(is_nccl_type_v<Acc>, "sharded_reduce: the accumulator must be a type NCCL can reduce");
  FOUNDRY_EXPECTS(op == reduction::sum || op == reduction::min || op == reduction::max,
                  "sharded_reduce: the reduction must be sum, min or max");
  detail::expect_per_rank("sharded_reduce", comm, shards, "shards");
  detail::expect_per_rank("sharded_reduce", comm, out, "outputs");
  detail::expect_streams("sharded_reduce", comm, streams);
  detail::expect_spans("sharded_reduce", out, 1, "the output");
  for (int i = 0; i < comm.size(); ++i) {
    device_guard on(comm.device(i));
    const auto shard = shards[static_cast<std::size_t>(i)];
    const auto partial = out[static_cast<std::size_t>(i)];
    const cuda::stream_ref s = streams[static_cast<std::size_t>(i)];
    if (op == reduction::sum) {
      reduce_sum(shard, partial, s);
    } else if (op == reduction::min) {
      reduce_min(shard, partial, s);
    } else {
      reduce_max(shard, partial, s);
    }
  }
  all_reduce(comm, out, op, streams);
}

}  // namespace foundry::nccl
