#pragma once
/// \file
/// Umbrella header: everything in foundry's runtime layer and algorithms.

#include <foundry/algorithms/histogram.cuh>
#include <foundry/algorithms/reduce.cuh>
#include <foundry/algorithms/scan.cuh>
#include <foundry/algorithms/stencil.cuh>
#include <foundry/algorithms/transform.cuh>
#include <foundry/algorithms/transform_reduce.cuh>
#include <foundry/algorithms/transpose.cuh>
#include <foundry/block/block_load.cuh>
#include <foundry/block/block_reduce.cuh>
#include <foundry/block/block_scan.cuh>
#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/core/operators.cuh>
#include <foundry/core/overlap.cuh>
#include <foundry/gemm/gemm.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_bounds.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/checked_memory.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/memory/managed_buffer.cuh>
#include <foundry/memory/pinned_buffer.cuh>
#include <foundry/memory/pipeline.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/event.cuh>
#include <foundry/runtime/graph.cuh>
#include <foundry/runtime/stream.cuh>
#include <foundry/thread/vector.cuh>
#include <foundry/thread/vector_split.cuh>
#include <foundry/util/nvtx.cuh>
#include <foundry/version.cuh>
#include <foundry/warp/shuffle.cuh>
#include <foundry/warp/warp_reduce.cuh>
#include <foundry/warp/warp_scan.cuh>

// The textbook twins live in <foundry/naive/...> and the benchmark harness in
// <foundry/bench/harness.cuh> (it needs Google Benchmark and cuBLAS); neither is included here.
