#pragma once
/// \file
/// Umbrella header: everything in foundry's runtime layer and algorithms.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/memory/managed_buffer.cuh>
#include <foundry/memory/pinned_buffer.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/event.cuh>
#include <foundry/runtime/stream.cuh>
#include <foundry/util/nvtx.cuh>
