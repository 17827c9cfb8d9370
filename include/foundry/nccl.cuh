#pragma once
/// \file
/// Umbrella header of foundry's multi-GPU layer on NCCL (target `foundry::nccl`; not
/// included by <foundry/foundry.cuh>, whose users need no NCCL).

#include <foundry/nccl/collectives.cuh>
#include <foundry/nccl/communicator.cuh>
#include <foundry/nccl/data_type.cuh>
#include <foundry/nccl/device_set.cuh>
#include <foundry/nccl/error.cuh>
#include <foundry/nccl/sharded_gemm.cuh>
#include <foundry/nccl/sharded_reduce.cuh>
