#pragma once
/// \file
/// Split-K's public names (`split_k_options`, `split_k_plan`, `plan_split_k`,
/// `split_k_workspace_bytes`), which the GEMM rungs share with the reduce that
/// finishes a split GEMM: all in detail/split_k.cuh, one header for the concept.

#include <foundry/gemm/detail/split_k.cuh>
